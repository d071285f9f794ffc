"""Exact resume of a GAN trained from a prepared (memory-mapped) image folder: interrupted at
iteration k and resumed, it reproduces the uninterrupted run's losses and weights bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

from gantrain.data.prepared import PreparedImages
from gantrain.recipes.gan.run import GANRun
from gantrain.recipes.registry import load_config

from .data.test_prepared import make_folder
from .tracing import LossTrace, fingerprint


def make(root, folder, steps: int) -> tuple[GANRun, LossTrace]:
    overrides = [f'data.args.root="{root}"', "data.args.size=32", "data.batch_size=16",
                 "generator.args.size=32", "discriminator.args.size=32",
                 "generator.args.width=8", "discriminator.args.width=8",
                 f"train.steps={steps}", "train.progress=false", "train.log_every=1000",
                 "train.sample_every=1000", "train.checkpoint_every=1000", "train.samples=16",
                 "train.grid=4", "gan.augment=\"\""]
    run = GANRun(load_config("dcgan_folder", overrides), folder)
    trace = LossTrace()
    run.loop.hooks.append(trace)
    return run, trace


@pytest.mark.slow
def test_a_run_over_a_prepared_folder_resumes_bit_exact(tmp_path):
    root = make_folder(tmp_path / "images", n=40)  # 2 epochs of 16 in 12 steps
    straight, straight_trace = make(root, tmp_path / "a", steps=12)
    assert isinstance(straight.data.dataset, PreparedImages)
    straight.train()

    first, first_trace = make(root, tmp_path / "b", steps=12)
    first.loop.run(5)
    resumed, resumed_trace = make(root, tmp_path / "b", steps=12)
    assert resumed.restore(tmp_path / "b") == 5
    resumed.train()

    assert first_trace.trace + resumed_trace.trace == straight_trace.trace
    a, b = fingerprint(straight), fingerprint(resumed)
    assert [k for k in a if a[k] != b[k]] == []
    np.testing.assert_array_equal(straight.generate(straight.eval_z[:4]),
                                  resumed.generate(resumed.eval_z[:4]))
