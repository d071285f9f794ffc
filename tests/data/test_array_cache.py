"""The disk memo of deterministic arrays, and the embedded digits read through it."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from gantrain.data import array_cache, digits
from gantrain.data.digits import embedded_digits


def entries(root: Path) -> list[str]:
    return sorted(p.name for p in (root / "embedded_digits").iterdir())


def test_cached_digits_are_bit_identical_and_read_back_without_rendering(tmp_path, monkeypatch):
    monkeypatch.setenv("GANTRAIN_DATA_CACHE", str(tmp_path))
    rendered = embedded_digits(n=40, seed=3, cache=False)
    assert not (tmp_path / "embedded_digits").exists()
    cold = embedded_digits(n=40, seed=3)
    [entry] = entries(tmp_path)
    assert entry.endswith(".npz")

    def no_render(*args):
        raise AssertionError("rendered again despite a cache entry")

    monkeypatch.setattr(digits, "_render", no_render)
    warm = embedded_digits(n=40, seed=3)
    for a in (cold, warm):
        assert a.x.tobytes() == rendered.x.tobytes() and a.x.shape == (40, 1, 28, 28)
        assert a.y.tobytes() == rendered.y.tobytes() and a.y.dtype == np.int32
    with pytest.raises(AssertionError, match="rendered again"):
        embedded_digits(n=40, seed=4)  # other arguments, other entry


def test_key_follows_arguments_code_and_library_versions(tmp_path, monkeypatch):
    code = tmp_path / "maker.py"
    code.write_text("x = 1\n")
    key = array_cache.entry_key({"n": 1}, code)
    assert array_cache.entry_key({"n": 1}, code) == key
    assert array_cache.entry_key({"n": 2}, code) != key
    monkeypatch.setattr(np, "__version__", "0.0.0")
    assert array_cache.entry_key({"n": 1}, code) != key
    monkeypatch.undo()
    code.write_text("x = 2\n")
    assert array_cache.entry_key({"n": 1}, code) != key


def test_a_damaged_entry_is_rebuilt_and_replaced(tmp_path, monkeypatch):
    monkeypatch.setenv("GANTRAIN_DATA_CACHE", str(tmp_path))
    good = embedded_digits(n=20, seed=0)
    [entry] = entries(tmp_path)
    (tmp_path / "embedded_digits" / entry).write_bytes(b"PK\x03\x04 truncated")
    again = embedded_digits(n=20, seed=0)
    assert again.x.tobytes() == good.x.tobytes()
    assert entries(tmp_path) == [entry]  # replaced in place, no partial files left
    with np.load(tmp_path / "embedded_digits" / entry) as stored:
        assert stored["images"].dtype == np.uint8


def test_an_unwritable_cache_still_returns_the_arrays(tmp_path, monkeypatch):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    monkeypatch.setenv("GANTRAIN_DATA_CACHE", str(blocker))
    out = array_cache.cached_arrays("k", {}, __file__, lambda: {"a": np.arange(3)})
    assert out["a"].tolist() == [0, 1, 2]
    assert os.listdir(tmp_path) == ["not-a-folder"]
