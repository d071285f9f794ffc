"""Metropolis-Hastings sampling with D (Turner et al. 2019): the data distribution from an exact
density ratio, calibration that undoes an over-confident D, every output a generated sample,
and ``gantrain sample --mh`` on a trained 2D GAN (with its refusals)."""

from __future__ import annotations

import numpy as np
import pytest

from gantrain.blocks.metropolis import fit_platt, mh_sample
from gantrain.cli.main import main


def gaussian_case(seed: int = 0, overconfidence: float = 1.0):
    """Proposal N(0, 2^2), target N(1, 1): the exact log ratio is log 2 - (x - 1)^2 / 2 + x^2 / 8
    (bounded above, so the chains mix); D's logit is that times ``overconfidence``. Returns
    draw, score and 4,000 real samples."""
    rng = np.random.default_rng(seed)
    real = rng.standard_normal((4000, 1)) + 1.0

    def score(x):
        return overconfidence * (np.log(2) - (x[:, 0] - 1) ** 2 / 2 + x[:, 0] ** 2 / 8)

    return (lambda k: 2.0 * rng.standard_normal((k, 1))), score, real


def test_chains_on_an_exact_ratio_draw_the_data_distribution():
    draw, score, real = gaussian_case()
    out, stats = mh_sample(draw, score, real, 4000, np.random.default_rng(1), steps=50,
                           calibrate=0)
    assert out.shape == (4000, 1)
    assert abs(out.mean() - 1.0) < 0.06 and abs(out.std() - 1.0) < 0.06
    assert 0.05 < stats["acceptance"] < 0.8 and stats["scale"] == 1.0
    plain = draw(4000)
    assert abs(plain.mean()) < 0.1 and abs(plain.std() - 2.0) < 0.1  # G alone


def test_calibration_undoes_an_overconfident_discriminator():
    draw, score, real = gaussian_case(overconfidence=4.0)
    raw, _ = mh_sample(draw, score, real, 4000, np.random.default_rng(1), steps=50, calibrate=0)
    assert raw.std() < 0.8  # a logit 4x too steep over-concentrates the chains
    draw, score, real = gaussian_case(overconfidence=4.0)
    out, stats = mh_sample(draw, score, real, 4000, np.random.default_rng(1), steps=50,
                           calibrate=2000)
    assert stats["scale"] == pytest.approx(0.25, rel=0.1)
    assert abs(out.mean() - 1.0) < 0.08 and abs(out.std() - 1.0) < 0.08


def test_platt_scaling_recovers_a_known_logistic_model():
    rng = np.random.default_rng(0)
    d = rng.normal(0, 2, 20000)
    y = rng.random(20000) < 1 / (1 + np.exp(-(0.5 * d + 0.3)))
    a, b = fit_platt(d[y], d[~y])
    # class reweighting to 1:1 moves b by log(n_fake / n_real); a is unchanged
    assert a == pytest.approx(0.5, abs=0.03)
    assert b == pytest.approx(0.3 + np.log((~y).sum() / y.sum()), abs=0.05)
    a, _ = fit_platt(np.full(50, 5.0), np.full(50, -5.0))  # separable: finite
    assert np.isfinite(a)


def test_every_output_is_a_generated_sample():
    """Real starting points D rates far above any proposal are never left, so those chains
    restart from a generated sample."""
    rng = np.random.default_rng(0)
    real = np.full((10, 1), 100.0)
    out, stats = mh_sample(lambda k: rng.standard_normal((k, 1)), lambda x: x[:, 0], real, 200,
                           np.random.default_rng(1), steps=5, calibrate=0)
    assert stats["restarted"] == 1.0 and (np.abs(out) < 10).all()
    with pytest.raises(ValueError, match="chain length must be >= 1"):
        mh_sample(lambda k: real, lambda x: x[:, 0], real, 5, rng, steps=0)


@pytest.mark.slow
def test_sample_mh_on_a_trained_2d_gan(in_tmp, capsys, trained_2d):
    run = str(trained_2d("packed"))
    capsys.readouterr()
    assert main(["sample", run, "--n", "300", "--mh", "10", "--out", "m.npy"]) == 0
    out = capsys.readouterr().out
    assert "300 samples of shape (2,) at the ends of Metropolis-Hastings chains of 10" in out
    chained = np.load(in_tmp / "m.npy")
    assert chained.shape == (300, 2) and np.isfinite(chained).all()
    assert main(["sample", run, "--n", "300", "--out", "plain.npy"]) == 0
    assert not np.array_equal(np.load(in_tmp / "plain.npy"), chained)
    assert main(["sample", run, "--mh", "10", "--drs", "80"]) == 2
    assert "--drs and --mh are ways to use D at sampling time" in capsys.readouterr().err
    assert main(["sample", run, "--mh", "0"]) == 2
    assert "--mh is a number of steps >= 1, got 0" in capsys.readouterr().err
    # a hinge critic's logit is no log ratio, but calibrated it serves (DRS refuses it)
    hinge = str(trained_2d("packed_hinge"))
    capsys.readouterr()
    assert main(["sample", hinge, "--n", "100", "--mh", "10", "--out", "h.npy"]) == 0
    assert "calibrated logit scale" in capsys.readouterr().out
    assert np.load(in_tmp / "h.npy").shape == (100, 2)
