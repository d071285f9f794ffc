"""The truncation trick (Brock et al. 2019) as a scoring option: ``gantrain eval --truncation``
scores what ``gantrain sample --truncation`` draws, and says so in the report."""

from __future__ import annotations

import json

import numpy as np
import pytest

from gantrain.blocks import latents
from gantrain.cli.main import main


def test_interpolation_paths_start_and_end_at_truncated_noise():
    rows, steps, z_dim = 50, 6, 8
    plain = latents.draw(np.random.default_rng(3), rows, z_dim, None, steps)
    cut = latents.draw(np.random.default_rng(3), rows, z_dim, 0.5, steps)
    ends = cut.reshape(rows, steps, z_dim)[:, [0, -1]]
    assert np.abs(ends).max() <= 0.5
    assert np.abs(plain.reshape(rows, steps, z_dim)[:, [0, -1]]).max() > 1.0
    # without truncation the paths are the ones drawn before truncation applied to them
    a = latents.normal(np.random.default_rng(3), rows, z_dim)
    assert np.allclose(plain.reshape(rows, steps, z_dim)[:, 0], a, atol=1e-6)


@pytest.mark.slow
def test_eval_scores_truncated_noise_and_says_so(in_tmp, capsys, trained_2d):
    run = trained_2d("hinge")
    assert main(["eval", str(run), "--n", "500"]) == 0
    plain = json.loads((run / "eval.json").read_text())
    assert main(["eval", str(run), "--n", "500", "--truncation", "0.2"]) == 0
    cut = json.loads((run / "eval.json").read_text())
    assert "500 samples of shape (2,) from noise truncated at |z| <= 0.2" == cut["drawn"]
    assert "truncated" not in plain["drawn"]
    assert cut["mixture"] != plain["mixture"]  # other noise, other samples, other figures
    capsys.readouterr()
    assert main(["sample", str(run), "--n", "2", "--interpolate", "4", "--truncation", "0.2",
                 "--out", "paths.npy"]) == 0
    assert "from noise with ends truncated at |z| <= 0.2" in capsys.readouterr().out
    assert np.load("paths.npy").shape == (8, 2)
    assert main(["eval", str(run), "--truncation", "0"]) == 2
    assert "--truncation must be > 0, got 0" in capsys.readouterr().err
    assert main(["eval", str(run), "--features", "inception", "--truncation", "1"]) == 2
    assert "--truncation score with the classifier features" in capsys.readouterr().err
