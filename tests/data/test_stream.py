"""A user's own pipeline as the batch source: a mindspore.dataset GeneratorDataset, a plain
iterable, a factory named in the config; not exactly resumable, and it says so."""

from __future__ import annotations

import numpy as np
import pytest

from gantrain.data.errors import DatasetError
from gantrain.data.registry import build_data
from gantrain.data.stream import IterableSource


def pictures(n: int = 10):
    rng = np.random.default_rng(0)
    return rng.uniform(-1, 1, (n, 1, 4, 4)).astype(np.float32), np.arange(n) % 3


def test_a_generator_dataset_gives_its_batches_epoch_after_epoch():
    import mindspore.dataset as mds

    x, y = pictures(10)
    ds = mds.GeneratorDataset(lambda: ((x[i], np.int64(y[i])) for i in range(10)),
                              ["image", "label"], shuffle=False).batch(4, drop_remainder=True)
    source = IterableSource(ds, name="tiny")
    assert source.sample_shape == (1, 4, 4) and source.labelled
    batches = [source.next_batch() for _ in range(5)]  # 2 per epoch: crosses two epochs
    np.testing.assert_array_equal(batches[0][0], x[:4])
    np.testing.assert_array_equal(batches[1][0], x[4:8])
    np.testing.assert_array_equal(batches[2][0], x[:4])
    assert batches[0][0].dtype == np.float32 and batches[0][1].dtype == np.int32
    np.testing.assert_array_equal(batches[4][1], y[:4])
    assert source.epoch == 2


def test_resume_warns_that_a_user_pipeline_is_not_exact():
    x, _ = pictures(8)
    source = IterableSource([x[:4], x[4:]])
    source.next_batch()
    state = source.state_dict()
    assert state["exact"] is False
    again = IterableSource([x[:4], x[4:]])
    with pytest.warns(UserWarning, match="not exactly resumable: it restarts from its first"):
        again.load_state_dict(state)


def test_a_generator_that_runs_dry_is_named():
    x, _ = pictures(8)
    source = IterableSource((b for b in [x[:4]]), name="once")
    source.next_batch()
    with pytest.raises(DatasetError, match="'once' gave no batches after its first pass"):
        source.next_batch()
    with pytest.raises(DatasetError, match="must start with an array of shape"):
        IterableSource([np.float32(3.0)], name="scalars")


def test_a_factory_in_the_config_builds_the_source(tmp_path, monkeypatch):
    (tmp_path / "my_data.py").write_text(
        "import numpy as np\n"
        "def make(batch_size, seed, n=12):\n"
        "    x = np.random.default_rng(seed).uniform(-1, 1, (n, 3, 8, 8)).astype('float32')\n"
        "    return [x[i:i + batch_size] for i in range(0, n, batch_size)]\n")
    monkeypatch.chdir(tmp_path)
    bundle = build_data("python", {"factory": "my_data.py:make", "args": {"n": 8}}, 4, 0)
    assert bundle.sample_shape == (3, 8, 8) and bundle.source.next_batch()[0].shape == (4, 3, 8, 8)
