"""Checkpoint files: atomic writes, pruning and pins, and every way a checkpoint can be wrong."""

from __future__ import annotations

import numpy as np
import pytest
from mindspore import Parameter, Tensor, nn

import gantrain.engine.checkpoint as ckpt
from gantrain.engine.checkpoint import CheckpointError


def params(seed: int = 0, names=("P.w", "P.b"), shapes=((3, 2), (2,))):
    rng = np.random.default_rng(seed)
    return [Parameter(Tensor(rng.standard_normal(s).astype(np.float32)), name=n)
            for n, s in zip(names, shapes)]


def test_save_then_load_round_trip(tmp_path):
    src, dst = params(0), params(1)
    path = ckpt.save(tmp_path, "step_00000001", {"P": src}, {"loop": {"iteration": 1}})
    assert (tmp_path / "latest").read_text() == "step_00000001"
    assert ckpt.resolve(tmp_path) == path
    ckpt.load_parameters(dst, path / "P.ckpt")
    for a, b in zip(src, dst):
        np.testing.assert_array_equal(a.asnumpy(), b.asnumpy())
    assert ckpt.read_state(path)["loop"]["iteration"] == 1
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_different_model_names_missing_and_unexpected_and_loads_nothing(tmp_path):
    path = ckpt.save(tmp_path, "step_1", {"P": params(0)}, {})
    other = params(1, names=("P.w", "P.gamma"), shapes=((3, 2), (2,)))
    before = [p.asnumpy().copy() for p in other]
    with pytest.raises(CheckpointError) as e:
        ckpt.load_parameters(other, path / "P.ckpt")
    assert "missing parameters: P.gamma" in str(e.value)
    assert "unexpected parameters: P.b" in str(e.value)
    assert all(np.array_equal(b, p.asnumpy()) for b, p in zip(before, other))


def test_shape_mismatch_is_named(tmp_path):
    path = ckpt.save(tmp_path, "step_1", {"P": params(0)}, {})
    wrong = params(1, shapes=((4, 2), (2,)))
    with pytest.raises(CheckpointError, match=r"P.w: checkpoint \(3, 2\) vs model \(4, 2\)"):
        ckpt.load_parameters(wrong, path / "P.ckpt")


@pytest.mark.parametrize("damage", ["truncate", "garbage"])
def test_corrupt_checkpoint_file_is_named(tmp_path, damage):
    path = ckpt.save(tmp_path, "step_1", {"P": params(0)}, {})
    f = path / "P.ckpt"
    data = f.read_bytes()
    f.write_bytes(data[: len(data) // 2] if damage == "truncate" else b"\x00garbage" * 10)
    with pytest.raises(CheckpointError, match="P.ckpt.*corrupt or truncated"):
        ckpt.load_parameters(params(1), f)


def test_missing_checkpoint_and_bad_state(tmp_path):
    with pytest.raises(CheckpointError, match="no checkpoint found"):
        ckpt.resolve(tmp_path)
    path = ckpt.save(tmp_path, "step_1", {"P": params(0)}, {})
    (path / "state.json").write_text("{not json")
    with pytest.raises(CheckpointError, match="state.json"):
        ckpt.read_state(path)


def test_disk_full_keeps_the_previous_checkpoint(tmp_path, monkeypatch):
    ckpt.save(tmp_path, "step_1", {"P": params(0)}, {"n": 1})

    def full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(ckpt, "save_parameters", full)
    with pytest.raises(CheckpointError, match="No space left.*step_1.*untouched"):
        ckpt.save(tmp_path, "step_2", {"P": params(1)}, {"n": 2})
    assert (tmp_path / "latest").read_text() == "step_1"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["latest", "step_1"]
    assert ckpt.read_state(ckpt.resolve(tmp_path)) == {"n": 1}


def test_prune_keeps_the_newest_and_pinned(tmp_path):
    for i in range(1, 6):
        ckpt.save(tmp_path, f"step_{i:08d}", {"P": params(i)}, {})
        if i == 2:
            (tmp_path / "step_00000002" / ckpt.PIN).touch()
        ckpt.prune(tmp_path, keep=2)
    assert sorted(p.name for p in tmp_path.glob("step_*")) == [
        "step_00000002", "step_00000004", "step_00000005"]


def test_save_a_whole_net_including_buffers(tmp_path):
    net = nn.BatchNorm1d(3)
    net.update_parameters_name("N.")
    path = ckpt.save(tmp_path, "s", {"N": net.get_parameters()}, {})
    other = nn.BatchNorm1d(3)
    other.update_parameters_name("N.")
    ckpt.load_parameters(list(other.get_parameters()), path / "N.ckpt")
    assert {p.name for p in other.get_parameters()} >= {"N.moving_mean", "N.moving_variance"}
