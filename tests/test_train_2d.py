"""A short real training run on the 25-Gaussian grid captures most of its modes."""

from __future__ import annotations

import pytest

from gantrain.recipes.gan.run import GANRun
from gantrain.recipes.registry import load_config


@pytest.mark.slow
def test_short_grid_run_captures_most_modes(tmp_path):
    config = load_config("gan_2d_grid", [
        "train.steps=1200", "train.progress=false", "train.sample_every=600",
        "train.checkpoint_every=100000", "train.log_every=200"])
    run = GANRun(config, tmp_path / "run")
    run.train()
    report = run.last_report
    assert report.modes >= 13, str(report)  # "most" of 25; a collapsed GAN covers a few
    assert report.reverse_kl < 0.5, str(report)
    assert report.high_quality > 0.01, str(report)
    assert (tmp_path / "run" / "samples" / "step_001200.png").is_file()
