"""Discriminator rejection sampling: exact for a known density ratio, a percentile that keeps
fewer samples, and ``gantrain sample --drs`` on a trained 2D GAN (with its refusals)."""

from __future__ import annotations

import numpy as np
import pytest

from gantrain.blocks.rejection import acceptance, rejection_sample
from gantrain.cli.main import main


def gaussian_case(seed: int = 0):
    """Proposal N(0, 1), target N(1, 1): the exact log ratio is x - 1/2."""
    rng = np.random.default_rng(seed)
    return (lambda k: rng.standard_normal((k, 1))), (lambda x: x[:, 0] - 0.5)


def test_gamma_zero_is_exact_rejection_sampling():
    draw, score = gaussian_case()
    kept, share = rejection_sample(draw, score, 3000, np.random.default_rng(1), percentile=None)
    assert kept.shape == (3000, 1)
    assert abs(kept.mean() - 1.0) < 0.06 and abs(kept.std() - 1.0) < 0.06
    assert 0.005 < share < 0.2  # exp(logit - max): most candidates are rejected
    # acceptance is exp(logit - max) at gamma = 0
    np.testing.assert_allclose(acceptance(np.array([-1.0, -3.0]), 0.0, 0.0),
                               np.exp([-1.0, -3.0]), rtol=1e-5)


def test_a_higher_percentile_keeps_fewer_and_more_typical_samples():
    shares, means = [], []
    for p in (10, 50, 90):
        draw, score = gaussian_case()
        kept, share = rejection_sample(draw, score, 1000, np.random.default_rng(2), percentile=p)
        shares.append(share)
        means.append(kept.mean())
    assert shares[0] > shares[1] > shares[2]
    assert 0 < means[0] < means[1] < means[2]  # toward the target's side


def test_bad_percentile_and_too_few_kept_are_clear():
    draw, score = gaussian_case()
    with pytest.raises(ValueError, match="percentile must be in"):
        rejection_sample(draw, score, 10, np.random.default_rng(0), percentile=120)
    with pytest.raises(ValueError, match="kept .* fewer than the 500 asked for"):
        rejection_sample(draw, score, 500, np.random.default_rng(0), percentile=None,
                         burn_in=100, max_candidates=200)


@pytest.mark.slow
def test_sample_drs_on_a_trained_packed_2d_gan(in_tmp, capsys, trained_2d):
    run = str(trained_2d("packed"))  # pack 2
    capsys.readouterr()
    assert main(["sample", run, "--n", "300", "--drs", "80", "--out", "k.npy"]) == 0
    out = capsys.readouterr().out
    assert "300 samples of shape (2,) kept by discriminator rejection sampling" in out
    kept = np.load(in_tmp / "k.npy")
    assert kept.shape == (300, 2) and np.isfinite(kept).all()
    assert main(["sample", run, "--n", "300", "--out", "plain.npy"]) == 0
    assert not np.array_equal(np.load(in_tmp / "plain.npy"), kept)
    # refusals, each naming the problem
    assert main(["sample", run, "--drs", "80", "--interpolate", "5"]) == 2
    assert "cannot keep interpolation paths" in capsys.readouterr().err
    assert main(["sample", run, "--drs", "150"]) == 2
    assert "--drs is a percentile in [0, 100], got 150" in capsys.readouterr().err
    hinge = str(trained_2d("packed_hinge"))
    capsys.readouterr()
    assert main(["sample", hinge, "--drs", "80"]) == 2
    assert "this run used 'hinge'" in capsys.readouterr().err
