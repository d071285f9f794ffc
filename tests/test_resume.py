"""Exact resume: a run interrupted at iteration k and resumed from its checkpoint produces the
same losses and the same weights, to the last bit, as a run that was never interrupted."""

from __future__ import annotations

import numpy as np
import pytest

from gantrain.recipes.gan.run import GANRun
from gantrain.recipes.registry import load_config

from .tracing import LossTrace, fingerprint

# transform state (gradient noise counter, accumulation buffers) and the lazy R1 phase
MIXTURE = ["optim.discriminator.grad_noise=0.01", "optim.generator.accumulate=2",
           "gan.penalty=\"r1\"", "gan.penalty_weight=0.1", "gan.penalty_every=3", "gan.pack=1",
           "discriminator.args.in_dim=2"]
CASES = {
    "mixture": ("gan_2d_ring", MIXTURE),
    # (resume under jit_level O1 is covered by tests/test_fused.py, which resumes an O1 run
    # against an uninterrupted O0 one with the same mixture)
    # BatchNorm statistics (G), spectral-norm power-iteration vectors (D), EMA, DiffAugment
    # draws, shuffled data position
    "images": ("dcgan_digits", ["data.args={n = 96, size = 28}", "data.batch_size=16",
                                "generator.args.width=8", "discriminator.args.width=8",
                                "gan.augment=\"color,translation,cutout\""]),
}


def make(case: str, folder, steps: int) -> tuple[GANRun, LossTrace]:
    preset, overrides = CASES[case]
    common = [f"train.steps={steps}", "train.progress=false", "train.log_every=1000",
              "train.sample_every=1000", "train.checkpoint_every=1000", "train.samples=16",
              "train.grid=4"]
    run = GANRun(load_config(preset, overrides + common), folder)
    trace = LossTrace()
    run.loop.hooks.append(trace)
    return run, trace


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(CASES))
def test_interrupted_and_resumed_equals_uninterrupted(case, tmp_path):
    straight, straight_trace = make(case, tmp_path / "a", steps=12)
    straight.train()

    first, first_trace = make(case, tmp_path / "b", steps=12)
    first.loop.run(7)  # interrupted at 7; the end hooks save a checkpoint
    resumed, resumed_trace = make(case, tmp_path / "b", steps=12)
    assert resumed.restore(tmp_path / "b") == 7
    resumed.train()

    assert first_trace.trace + resumed_trace.trace == straight_trace.trace
    a, b = fingerprint(straight), fingerprint(resumed)
    assert a.keys() == b.keys()
    assert [k for k in a if a[k] != b[k]] == []
    np.testing.assert_array_equal(
        straight.generate(straight.eval_z[:4], straight.eval_y[:4]),
        resumed.generate(resumed.eval_z[:4], resumed.eval_y[:4]),
    )
