"""Divergence guards: NaN batches are skipped, persistent NaNs roll back to the last good
checkpoint with a lower learning rate, and the run stops with a message past the limit;
warnings for the classic failure signs."""

from __future__ import annotations

import json

import numpy as np
import pytest

from gantrain.blocks.watchdog import Watchdog, sample_diversity
from gantrain.engine.guard import DivergenceError
from gantrain.recipes.gan.run import GANRun
from gantrain.recipes.registry import load_config


class NaNInjector:
    """Wraps a batch source; calls number ``start`` to ``stop - 1`` return NaN batches."""

    def __init__(self, inner, start: int, stop: int) -> None:
        self.inner, self.start, self.stop, self.calls = inner, start, stop, 0

    def next_batch(self):
        batch = self.inner.next_batch()
        self.calls += 1
        if self.start <= self.calls < self.stop:
            return (np.full_like(batch[0], np.nan), *batch[1:])
        return batch

    def state_dict(self):
        return self.inner.state_dict()

    def load_state_dict(self, state):
        self.inner.load_state_dict(state)


def make_run(tmp_path, steps: int, start: int, stop: int, extra=()) -> GANRun:
    config = load_config("gan_2d_ring", [
        f"train.steps={steps}", "train.progress=false", "train.log_every=5",
        "train.sample_every=1000", "train.checkpoint_every=5", "train.samples=64",
        "guard.every=5", "guard.max_skips=3", "guard.max_rollbacks=2", *extra])
    run = GANRun(config, tmp_path / "run")
    run.loop.ctx.data = NaNInjector(run.loop.ctx.data, start, stop)
    return run


def rows(run: GANRun) -> list[dict]:
    return [json.loads(x) for x in (run.dir / "metrics.jsonl").read_text().splitlines()]


@pytest.mark.slow
def test_a_few_nan_batches_are_skipped_without_rollback(tmp_path):
    run = make_run(tmp_path, steps=20, start=8, stop=10)
    run.train()
    assert int(run.gan.discriminator.skipped.asnumpy()) == 2
    assert run.guard.rollbacks == 0
    for p in run.gan.discriminator.parameters:
        assert np.isfinite(p.asnumpy()).all()


@pytest.mark.slow
def test_persistent_nans_roll_back_and_lower_the_learning_rate(tmp_path):
    run = make_run(tmp_path, steps=30, start=12, stop=20)
    run.train()
    assert run.guard.rollbacks >= 1
    assert float(run.gan.discriminator.lr_scale.asnumpy()) == pytest.approx(
        0.5 ** run.guard.rollbacks)
    events = [r for r in rows(run) if r.get("kind") == "rollback"]
    assert events and "rolled back to iteration 10" in events[0]["message"]
    assert run.loop.iteration == 30
    for p in run.gan.discriminator.state():
        assert np.isfinite(p.asnumpy()).all(), p.name


@pytest.mark.slow
def test_unrecoverable_nans_stop_with_a_message(tmp_path):
    run = make_run(tmp_path, steps=100, start=7, stop=10**9)
    with pytest.raises(DivergenceError, match="after 2 rollbacks.*clip_norm"):
        run.train()
    assert run.loop.stop_reason == "diverged"


@pytest.mark.slow
def test_no_checkpoint_to_roll_back_to(tmp_path):
    run = make_run(tmp_path, steps=100, start=1, stop=10**9,
                   extra=["train.checkpoint_every=1000"])
    with pytest.raises(DivergenceError, match="no checkpoint to roll back to"):
        run.train()


class FakeLoop:
    iteration = 100


def test_watchdog_warns_once_per_episode():
    dog = Watchdog(d_loss_floor=0.01, d_patience=3, grad_norm_limit=100.0)
    loop = FakeLoop()
    for _ in range(5):
        dog.check_scalars(loop, {"D/loss": 0.001, "G/grad_norm": 5.0})
    assert len(dog.warnings) == 1 and "discriminator loss below 0.01" in dog.warnings[0]
    dog.check_scalars(loop, {"D/loss": 0.7, "G/grad_norm": 1e6})
    assert len(dog.warnings) == 2 and "G/grad_norm" in dog.warnings[1]
    dog.check_scalars(loop, {"D/loss": 0.7, "G/grad_norm": 1.0})
    dog.check_scalars(loop, {"D/loss": 0.7, "G/grad_norm": 1e6})
    assert len(dog.warnings) == 3  # re-armed after it cleared


def test_watchdog_diversity():
    dog = Watchdog()
    rng = np.random.default_rng(0)
    real = rng.standard_normal((16, 1, 4, 4))
    dog.check_diversity(FakeLoop(), real[::-1] * 1.0, real)
    assert dog.warnings == []
    collapsed = np.repeat(real[:1], 16, axis=0) + 1e-4 * rng.standard_normal((16, 1, 4, 4))
    dog.check_diversity(FakeLoop(), collapsed, real)
    assert len(dog.warnings) == 1 and "mode collapse" in dog.warnings[0]
    assert np.isnan(sample_diversity(np.zeros((1, 3))))
