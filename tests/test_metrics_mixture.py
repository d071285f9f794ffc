"""Mode coverage metrics on samples with known answers."""

from __future__ import annotations

import numpy as np
import pytest

from gantrain.data.mixtures import MixtureSource, get_mixture, grid, ring
from gantrain.metrics.mixture import mixture_report, mode_match


def test_true_samples_cover_everything():
    mix = grid()
    rep = mixture_report(mix.sample(np.random.default_rng(0), 2500), mix)
    assert rep.modes == 25 and rep.total_modes == 25
    assert rep.high_quality > 0.98  # in 2D, P(r <= 3 std) = 1 - exp(-4.5) = 98.9%
    assert rep.reverse_kl < 0.02


def test_half_the_modes_gives_log_two():
    mix = ring()
    pts = np.repeat(mix.means[::2], 100, axis=0)  # exactly on 4 of the 8 modes
    rep = mixture_report(pts, mix)
    assert rep.modes == 4 and rep.high_quality == 1.0
    assert rep.reverse_kl == pytest.approx(np.log(2), abs=1e-9)


def test_samples_between_modes_are_low_quality_but_assigned():
    mix = grid()
    pts = mix.means + np.array([1.0, 0.0])  # halfway between neighbours: no mode captured
    rep = mixture_report(pts, mix)
    assert rep.modes == 0 and rep.high_quality == 0.0


def test_non_finite_samples_count_as_low_quality():
    mix = ring()
    pts = np.vstack([mix.means, np.full((8, 2), np.nan)])
    rep = mixture_report(pts, mix)
    assert rep.modes == 8 and rep.high_quality == 0.5


def test_mode_match_counts_reconstructions_in_their_inputs_mode():
    """A reconstruction pulled anywhere inside its input's mode keeps it, one in the
    neighbouring mode does not, whatever its distance; a non-finite one never does."""
    mix = ring()
    x = mix.sample(np.random.default_rng(0), 400)
    assert mode_match(x, x, mix) == 1.0
    assert mode_match(x, 0.8 * x, mix) == 1.0  # shrunk towards the centre, same nearest mode
    rotated = x @ np.array([[0.0, 1.0], [-1.0, 0.0]])  # a quarter turn: two modes along
    assert mode_match(x, rotated, mix) == 0.0
    half = np.vstack([x[:200], rotated[200:]])
    assert mode_match(x, half, mix) == 0.5
    broken = x.copy()
    broken[:100] = np.nan
    assert mode_match(x, broken, mix) == 0.75
    with pytest.raises(ValueError, match=r"\(N, 2\)"):
        mode_match(x, np.zeros((400, 3)), mix)


def test_protocol_geometry():
    g, r = grid(), ring()
    assert g.means.min() == -4 and g.means.max() == 4 and g.std == 0.05
    np.testing.assert_allclose(np.linalg.norm(r.means, axis=1), 1.0)
    assert r.std == 0.01 and len(r.means) == 8


def test_source_state_restores_the_stream():
    src = MixtureSource(get_mixture("ring"), 16, seed=3)
    src.next_batch()
    state = src.state_dict()
    a = src.next_batch()[0]
    src.load_state_dict(state)
    np.testing.assert_array_equal(a, src.next_batch()[0])


def test_bad_shape_is_rejected():
    with pytest.raises(ValueError, match=r"\(N, 2\)"):
        mixture_report(np.zeros((5, 3)), ring())
