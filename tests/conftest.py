"""Shared fixtures. Importing gantrain first sets MindSpore's environment (oneDNN ISA, log
level, debug-file folder) before mindspore loads."""

from __future__ import annotations

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
