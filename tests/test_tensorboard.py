"""``train.tensorboard = true`` writes event files that TensorBoard's own reader reads back:
every logged scalar at its iterations, eval metrics, and the sample grids as images."""

from __future__ import annotations

import sys

import pytest

from gantrain.cli.main import main

pytestmark = pytest.mark.slow  # two short real trainings


def _train(*extra: str) -> int:
    return main(["train", "gan_2d_ring", "--name", "tb", "--set", "train.steps=20",
                 "--set", "train.log_every=5", "--set", "train.sample_every=10",
                 "--set", "train.progress=false", "--set", "data.batch_size=64", *extra])


def test_scalars_and_samples_read_back_with_tensorboard(in_tmp):
    pytest.importorskip("tensorboardX")
    accumulator = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator")
    assert _train("--set", "train.tensorboard=true") == 0
    events = accumulator.EventAccumulator(str(in_tmp / "runs" / "tb" / "tensorboard"),
                                          size_guidance={"scalars": 0, "images": 0})
    events.Reload()
    tags = events.Tags()
    assert {"D/loss", "G/loss", "D/grad_norm", "it_per_s", "eval/modes"} <= set(tags["scalars"])
    assert [e.step for e in events.Scalars("D/loss")] == [5, 10, 15, 20]
    assert [e.step for e in events.Scalars("eval/modes")] == [10, 20]
    assert tags["images"] == ["samples"]
    assert [e.step for e in events.Images("samples")] == [10, 20]


def test_off_by_default_and_a_clear_message_without_the_package(in_tmp, monkeypatch, capsys):
    assert _train() == 0
    assert not (in_tmp / "runs" / "tb" / "tensorboard").exists()
    monkeypatch.setitem(sys.modules, "tensorboardX", None)  # as if not installed
    assert _train("--set", "train.tensorboard=true", "--overwrite") == 2
    err = capsys.readouterr().err
    assert "train.tensorboard = true needs tensorboardX" in err and "gantrain[tensorboard]" in err
