"""``gantrain sample`` for CycleGAN runs: translate the run's test images, or a folder of
images, A -> B or B -> A, and show each input beside its translation."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ...config.strict import ConfigError
from ...data.registry import build_data
from ...engine import checkpoint
from ...engine.sampling import Sampler
from ..sampling import Drawn, SampleOptions, load_player_nets
from .config import CycleGANConfig
from .run import build_generators, translation_chunk


@dataclass
class CycleGANSampleOptions(SampleOptions):
    direction: str = "AB"  # AB: domain A -> B; BA: B -> A
    input: str | None = None  # a folder of images to translate (default: the test images)

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.direction not in ("AB", "BA"):
            raise ConfigError(f"--direction must be AB or BA, got {self.direction!r}")


def _folder_images(folder: str, n: int, shape: tuple[int, ...]) -> np.ndarray:
    from ...data.folder import find_images, load_image

    if not Path(folder).is_dir():
        raise ConfigError(f"--input {folder}: no such folder (expected a folder of images to "
                          "translate)")
    files = find_images(folder)[:n]
    x = np.stack([load_image(f, shape[1:], shape[0]).reshape(shape[1], shape[2], -1)
                  for f in files]).transpose(0, 3, 1, 2)
    return x.astype(np.float32) / np.float32(127.5) - np.float32(1.0)


def sample(ckpt: Path, config: CycleGANConfig, options: CycleGANSampleOptions) -> Drawn:
    direction = options.direction
    nets = dict(zip(("AB", "BA"), build_generators(config)))
    load_player_nets(ckpt, "G", {"G_AB": nets["AB"], "G_BA": nets["BA"]})
    shape = tuple(checkpoint.read_state(ckpt)["extra"]["sample_shape"])
    if options.input:
        x = _folder_images(options.input, options.n, shape)
        source = f"{len(x)} images from {options.input}"
    else:
        c = config
        data = build_data(c.data.dataset, c.data.args, c.data.batch_size, c.seed).dataset
        x = (data.test_a if direction == "AB" else data.test_b)[: options.n]
        source = f"{len(x)} test images of domain {direction[0]}"
    y = Sampler(nets[direction], chunk=translation_chunk(shape))(x)
    pairs = np.stack([x, y], axis=1).reshape(-1, *shape)  # input, translated, input, ...
    return Drawn(y, f"translated {source} ({direction[0]} -> {direction[1]})", images=y,
                 grid_images=pairs, cols=2 * min(len(x), 8), prefix=f"translated_{direction}",
                 default_grid=f"translated_{direction}.png")
