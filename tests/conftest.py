"""Shared fixtures. Importing gantrain first sets MindSpore's environment (oneDNN ISA, log
level, debug-file folder) before mindspore loads."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

import gantrain  # noqa: F401  (must precede mindspore)
from gantrain.engine import runtime

MNIST5K = Path(__file__).resolve().parents[2] / "shared" / "data" / "mnist5k"


@pytest.fixture(autouse=True, scope="session")
def _mindspore_cpu():
    runtime.setup("CPU", 0)


@pytest.fixture(autouse=True)
def _data_cache(tmp_path_factory, monkeypatch):
    """Prepared datasets go to a fresh temp folder, never the user's ~/.cache."""
    monkeypatch.setenv("GANTRAIN_DATA_CACHE", str(tmp_path_factory.mktemp("data-cache")))


@pytest.fixture
def in_tmp(tmp_path, monkeypatch):
    """Run the test with the working directory in a fresh temp folder."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def mnist5k() -> Path:
    if not (MNIST5K / "train-images-idx3-ubyte.gz").exists():
        pytest.skip("../shared/data/mnist5k is not present")
    return MNIST5K


# Tiny 2D GAN runs for the sampling-time tests (DRS, DOT, MH): training and compiling them is
# most of those tests' cost, so each is trained once per session and shared. Tests read them
# and may add eval.json; nothing else writes to them.
TRAINED_2D = {
    "packed": [],  # gan_2d_ring as shipped: non-saturating, pack 2
    "packed_hinge": ["--set", 'gan.loss="hinge"'],
    "hinge": ["--set", 'gan.loss="hinge"', "--set", "gan.pack=1",
              "--set", "discriminator.args.in_dim=2"],
}
TINY_2D = ["--set", "train.steps=60", "--set", "train.log_every=10", "--set",
           "train.sample_every=60", "--set", "train.checkpoint_every=60", "--set",
           "data.batch_size=64", "--set", "train.progress=false"]


@pytest.fixture(scope="session")
def trained_2d(tmp_path_factory) -> Callable[[str], Path]:
    """``trained_2d(name)``: the run folder of a tiny `gan_2d_ring` run (``TRAINED_2D``),
    trained on first use."""
    from gantrain.cli.main import main

    root = tmp_path_factory.mktemp("trained-2d")
    done: dict[str, Path] = {}

    def get(name: str) -> Path:
        if name not in done:
            here = os.getcwd()
            os.chdir(root)
            try:
                code = main(["train", "gan_2d_ring", "--name", name, *TINY_2D,
                             *TRAINED_2D[name]])
            finally:
                os.chdir(here)
            assert code == 0, f"training the shared 2D run {name!r} failed"
            done[name] = root / "runs" / name
        return done[name]

    return get
