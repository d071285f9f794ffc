"""Adversarial losses against independent numpy formulas."""

from __future__ import annotations

import numpy as np
import pytest
from mindspore import Tensor

from gantrain.blocks.losses import LOSSES, get_loss

RNG = np.random.default_rng(0)
REAL = RNG.standard_normal(64).astype(np.float32) * 3 + 1
FAKE = RNG.standard_normal(64).astype(np.float32) * 3 - 1


def log_sigmoid(x):
    return -np.logaddexp(0.0, -x.astype(np.float64))


REFERENCE = {
    "nonsaturating": (
        lambda r, f: -log_sigmoid(r).mean() - log_sigmoid(-f).mean(),
        lambda f, r: -log_sigmoid(f).mean(),
    ),
    "minimax": (
        lambda r, f: -log_sigmoid(r).mean() - log_sigmoid(-f).mean(),
        lambda f, r: log_sigmoid(-f).mean(),
    ),
    "hinge": (
        lambda r, f: np.maximum(0, 1 - r).mean() + np.maximum(0, 1 + f).mean(),
        lambda f, r: -f.mean(),
    ),
    "least_squares": (
        lambda r, f: 0.5 * ((r - 1) ** 2).mean() + 0.5 * (f**2).mean(),
        lambda f, r: 0.5 * ((f - 1) ** 2).mean(),
    ),
    "wasserstein": (lambda r, f: f.mean() - r.mean(), lambda f, r: -f.mean()),
    "relativistic_average": (
        lambda r, f: -log_sigmoid(r - f.mean()).mean() - log_sigmoid(-(f - r.mean())).mean(),
        lambda f, r: -log_sigmoid(f - r.mean()).mean() - log_sigmoid(-(r - f.mean())).mean(),
    ),
}


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_loss_matches_numpy(name):
    loss = get_loss(name)
    d_ref, g_ref = REFERENCE[name]
    d = float(loss.d(Tensor(REAL), Tensor(FAKE)).asnumpy())
    g = float(loss.g(Tensor(FAKE), Tensor(REAL)).asnumpy())
    np.testing.assert_allclose(d, d_ref(REAL, FAKE), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(g, g_ref(FAKE, REAL), rtol=1e-5, atol=1e-6)


def test_softplus_is_stable_for_large_logits():
    loss = get_loss("nonsaturating")
    big = Tensor(np.array([80.0, -80.0], np.float32))
    assert np.isfinite(float(loss.d(big, -big).asnumpy()))
    np.testing.assert_allclose(float(loss.g(Tensor(np.float32([-100.0])), big).asnumpy()), 100.0)


def test_only_relativistic_generator_needs_real_logits():
    assert [n for n, loss in LOSSES.items() if loss.g_needs_real] == ["relativistic_average"]


def test_unknown_loss_names_the_choices():
    with pytest.raises(ValueError, match="hinge"):
        get_loss("hinj")
