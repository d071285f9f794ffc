"""Every shipped preset builds a run (data, nets, shape check, players) from package data, on
small files the test writes where a preset reads a dataset from disk; missing data is a clear
error that says where the files were expected."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from gantrain.config import ConfigError, presets
from gantrain.recipes.gan.run import GANRun
from gantrain.recipes.registry import build_run, load_config

from .data.test_cifar import write_python_batches
from .data.test_idx import write_mnist


def fake_data(preset: str, root) -> list[str]:
    """--set overrides pointing the preset at small data written under ``root``."""
    data = getattr(load_config(preset), "data", None)
    dataset = data.dataset if data is not None else None
    if dataset in ("mnist", "fashion_mnist"):
        (root / "mnist").mkdir()
        write_mnist(root / "mnist", n=64)
        return [f"data.args.root={root / 'mnist'}"]
    if dataset == "cifar10":
        write_python_batches(root / "cifar-10-batches-py")
        return [f"data.args.root={root}", "data.batch_size=8"]
    if dataset == "folder":
        rng = np.random.default_rng(0)
        (root / "imgs").mkdir()
        for i in range(70):
            arr = rng.integers(0, 256, (40, 50, 3), dtype=np.uint8)
            Image.fromarray(arr).save(root / "imgs" / f"{i}.png")
        return [f"data.args.root={root / 'imgs'}", "data.batch_size=16"]
    if dataset == "unpaired_folder":
        rng = np.random.default_rng(0)
        for part in ("trainA", "trainB", "testA", "testB"):
            (root / "pairs" / part).mkdir(parents=True)
            for i in range(3):
                arr = rng.integers(0, 256, (40, 50, 3), dtype=np.uint8)
                Image.fromarray(arr).save(root / "pairs" / part / f"{i}.png")
        return [f"data.args.root={root / 'pairs'}"]
    if dataset == "digit_styles":
        return ["data.args.n=64", "data.args.test=16"]
    if dataset == "digits":
        return ["data.args.n=256"]
    return []


# Image presets whose build (and first 500-sample eval-mode draw) takes over ~1 s, and the
# PacGAN variants that repeat pacgan2_2d_grid; the default preset, dcgan_digits, stays fast.
SLOW_TO_BUILD = {"sngan_hinge_cifar10", "cyclegan_folder", "cyclegan_digits", "stacked_mnist_dcgan",
                 "dcgan_folder", "dcgan_celeba64", "dcgan_mnist", "wgan_gp_mnist", "cgan_digits",
                 "pacgan2_2d_ring", "pacgan3_2d_grid", "pacgan3_2d_ring", "pacgan4_2d_grid",
                 "pacgan4_2d_ring"}


@pytest.mark.parametrize("preset", [
    pytest.param(p, marks=pytest.mark.slow) if p in SLOW_TO_BUILD else p for p in presets()])
def test_preset_builds_a_run(preset, tmp_path):
    overrides = [f'{o.split("=", 1)[0]}="{o.split("=", 1)[1]}"' if "root=" in o else o
                 for o in fake_data(preset, tmp_path)]
    config = load_config(preset, overrides)
    run = build_run(config, tmp_path / "run")
    assert run.loop.iteration == 0 and run.player_list
    if config.task == "gan":
        assert run.data.sample_shape == run.generate(run.eval_z[:2], run.eval_y[:2]).shape[1:]


@pytest.mark.parametrize("preset", ["dcgan_mnist", "wgan_gp_mnist", "sngan_hinge_cifar10",
                                    "dcgan_folder", "dcgan_celeba64"])
def test_missing_dataset_says_where_it_was_expected(preset, tmp_path):
    config = load_config(preset, [f'data.args.root="{tmp_path / "nothing"}"'])
    with pytest.raises(ValueError) as e:
        GANRun(config, tmp_path / "run")
    assert str(tmp_path / "nothing") in str(e.value)


def test_wrong_dataset_argument_is_named(tmp_path):
    config = load_config("dcgan_digits", ["data.args.count=5"])
    with pytest.raises(ConfigError, match="count"):
        GANRun(config, tmp_path / "run")


@pytest.mark.slow
def test_presets_ship_as_package_data(tmp_path):
    """A wheel (what a plain `pip install .` installs) carries every preset and the models."""
    import shutil
    import subprocess
    import sys
    import zipfile
    from pathlib import Path

    pytest.importorskip("setuptools")
    root = Path(__file__).resolve().parents[1]
    src = tmp_path / "src"  # build from a copy: setuptools writes build/ next to the sources
    shutil.copytree(root, src, symlinks=True, ignore=shutil.ignore_patterns(
        ".git", "runs", "build", "*.egg-info", "__pycache__", ".*_cache"))
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
         "-w", str(tmp_path), str(src)], capture_output=True, text=True, timeout=300)
    if build.returncode != 0 and "No module named" in build.stderr:
        pytest.skip(f"cannot build a wheel here: {build.stderr[-200:]}")
    assert build.returncode == 0, build.stderr[-2000:]
    (wheel,) = tmp_path.glob("gantrain-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for preset in presets():
        assert f"gantrain/configs/{preset}.toml" in names
    assert {"gantrain/models/dcgan.py", "gantrain/models/mlp.py", "gantrain/cli/main.py"} <= names
    # the reference networks live inside the package: no top-level `models` to clash with
    assert not any(name.startswith("models/") for name in names)
