"""Networks of one's own, loaded by file path: the repository's ``models/`` example trains,
and both nets share sub-cell names (``trunk``, ``out``) without colliding in one graph."""

from __future__ import annotations

from pathlib import Path

import pytest

from gantrain.cli.main import main

EXAMPLE = Path(__file__).resolve().parents[1] / "models" / "residual_mlp.py"


@pytest.mark.slow
def test_the_example_networks_train_from_their_file(in_tmp, capsys):
    args = ["train", "gan_2d_ring", "--name", "mine",
            "--set", f'generator.model="{EXAMPLE}:Generator"',
            "--set", "generator.args={z_dim = 2, width = 16, blocks = 1}",
            "--set", f'discriminator.model="{EXAMPLE}:Discriminator"',
            "--set", "discriminator.args={in_dim = 4, width = 16, blocks = 1}",
            "--set", "train.steps=4", "--set", "train.progress=false",
            "--set", "train.sample_every=4", "--set", "data.batch_size=64"]
    assert main(args) == 0
    assert (in_tmp / "runs" / "mine" / "checkpoints" / "latest").is_file()
    assert "residual_mlp.py:Generator" in (in_tmp / "runs" / "mine" / "config.toml").read_text()
    assert main(["sample", "runs/mine", "--n", "8", "--out", "x.npy"]) == 0
