"""A uint8 .npy too big to hold as float32 is memory-mapped, automatically and said in the log,
with the same values as the in-memory reader."""

from __future__ import annotations

import numpy as np
import pytest

from gantrain.data import mapped_array
from gantrain.data.arrays import load_array
from gantrain.data.registry import build_data


@pytest.mark.parametrize("shape", [(20, 6, 5, 3), (20, 3, 6, 5), (20, 6, 5)])
def test_big_uint8_npy_is_mapped_with_the_same_values(tmp_path, monkeypatch, capsys, shape):
    path = tmp_path / "pics.npy"
    np.save(path, np.random.default_rng(0).integers(0, 256, shape, dtype=np.uint8))
    small = build_data("array", {"path": str(path)}, 4, 0)
    assert "in memory" in capsys.readouterr().err
    monkeypatch.setattr(mapped_array, "IN_MEMORY_LIMIT", 100)
    big = build_data("array", {"path": str(path)}, 4, 0)
    assert "memory-mapped from" in capsys.readouterr().err
    assert isinstance(big.dataset, mapped_array.MappedImages)
    assert big.sample_shape == small.sample_shape
    np.testing.assert_array_equal(big.dataset.x[:], load_array(path).x)
    np.testing.assert_array_equal(big.source.next_batch()[0], small.source.next_batch()[0])
