"""The CelebA preset on a generated stand-in folder of 178x218 "faces": the centre 108x108 is
cropped and resized to 64x64 exactly as Pillow does it by hand, and a short run trains."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from gantrain.cli.main import main
from gantrain.data.registry import build_data
from gantrain.recipes.registry import load_config


def stand_in(root: Path, n: int = 24) -> Path:
    """178x218 images: a noisy background and a bright ellipse where CelebA has the face."""
    rng = np.random.default_rng(0)
    root.mkdir(parents=True)
    yy, xx = np.mgrid[:218, :178]
    face = ((xx - 89) / 40) ** 2 + ((yy - 115) / 55) ** 2 < 1
    for i in range(n):
        pixels = rng.integers(0, 90, (218, 178, 3), dtype=np.uint8)
        pixels[face] = (200 + i, 160, 130)
        Image.fromarray(pixels).save(root / f"{i + 1:06d}.jpg", quality=95)
    return root


def test_celeba_preset_crops_the_centre_108_and_resizes_to_64(tmp_path):
    root = stand_in(tmp_path / "img_align_celeba")
    config = load_config("dcgan_celeba64", [f'data.args.root="{root}"'])
    data = build_data(config.data.dataset, config.data.args, 8, 0).dataset
    assert data.header["crop"] == [108, 108] and data.sample_shape == (3, 64, 64)
    assert data.y is None and len(data) == 24
    with Image.open(root / "000003.jpg") as image:
        left, top = (178 - 108) // 2, (218 - 108) // 2
        by_hand = image.convert("RGB").crop((left, top, left + 108, top + 108))
        by_hand = np.asarray(by_hand.resize((64, 64), Image.Resampling.BICUBIC))
    assert np.array_equal(data.pixels[2], by_hand)


@pytest.mark.slow
def test_celeba_preset_trains_on_the_stand_in(in_tmp):
    root = stand_in(in_tmp / "img_align_celeba")
    tiny = ["data.batch_size=8", "generator.args.width=8", "discriminator.args.width=8",
            "train.steps=4", "train.log_every=2", "train.sample_every=4",
            "train.checkpoint_every=4", "train.progress=false", "train.grid=4"]
    args = ["train", "dcgan_celeba64", "--name", "c", "--set", f"data.args.root={root}"]
    for override in tiny:
        args += ["--set", override]
    assert main(args) == 0
    assert (in_tmp / "runs" / "c" / "samples" / "step_000004.png").is_file()
