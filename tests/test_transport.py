"""Discriminator optimal transport (Tanaka 2019): the Lipschitz estimate and the latent steps on
known potentials, the compiled potential's gradient against finite differences, and
``gantrain sample --dot`` / ``gantrain eval --dot`` on a trained 2D GAN, with the refusals."""

from __future__ import annotations

import json

import numpy as np
import pytest

from gantrain.blocks.transport import effective_lipschitz, transport
from gantrain.cli.main import main

A = np.array([3.0, -4.0, 0.0, 0.0])  # ||A|| = 5


def linear(z: np.ndarray):
    """D(G(z)) = A . z, gradient A everywhere."""
    return z @ A, np.broadcast_to(A, z.shape).copy()


def test_effective_lipschitz_of_a_linear_potential_is_its_gradient_norm():
    rng = np.random.default_rng(0)
    z1, z2 = rng.standard_normal((2, 5000, 4))
    k = effective_lipschitz(linear(z1)[0], linear(z2)[0], z1, z2)
    assert 4.8 < k <= 5.0 + 1e-9  # the largest ratio over pairs approaches ||A|| from below
    with pytest.raises(ValueError, match="same value to every sample"):
        effective_lipschitz(np.zeros(3), np.zeros(3), z1[:3], z2[:3])
    with pytest.raises(ValueError, match="as many values as latent pairs"):
        effective_lipschitz(np.zeros(2), np.zeros(2), z1[:3], z2[:3])


def test_transport_climbs_the_critic_and_stays_on_the_latent_sphere():
    rng = np.random.default_rng(1)
    z = rng.standard_normal((200, 4)).astype(np.float32)
    moved = transport(z, linear, k=2.5, steps=30)  # D/k pulls harder than the distance
    gain = linear(moved)[0] - linear(z)[0]
    assert (gain > 0).mean() > 0.95 and gain.mean() > 1.0
    np.testing.assert_allclose(np.linalg.norm(moved, axis=1), np.linalg.norm(z, axis=1),
                               rtol=1e-5)  # each latent keeps its norm
    free = transport(z, linear, k=2.5, steps=30, on_sphere=False)
    assert linear(free)[0].mean() > linear(moved)[0].mean()  # the sphere constrains the climb
    assert np.abs(np.linalg.norm(free, axis=1) / np.linalg.norm(z, axis=1) - 1).mean() > 0.02
    np.testing.assert_array_equal(transport(z, linear, k=2.5, steps=0), z)
    with pytest.raises(ValueError, match="steps must be >= 0"):
        transport(z, linear, k=5.0, steps=-1)


def test_the_distance_term_keeps_samples_near_their_start():
    """A bounded critic (tanh) with a large k: the pull back to z_y wins where D is flat."""
    def bounded(z):
        t = np.tanh(z @ A)
        return t, (1 - t * t)[:, None] * A

    rng = np.random.default_rng(2)
    z = rng.standard_normal((100, 4)).astype(np.float32)
    near = transport(z, bounded, k=50.0, steps=50)
    far = transport(z, bounded, k=1.0, steps=50)
    assert np.linalg.norm(near - z, axis=1).mean() < np.linalg.norm(far - z, axis=1).mean()


def test_compiled_potential_gradient_matches_finite_differences():
    from mindspore import nn

    from gantrain.recipes.gan.transport import latent_potential

    G = nn.SequentialCell(nn.Dense(3, 8), nn.Tanh(), nn.Dense(8, 2))
    D = nn.SequentialCell(nn.Dense(2, 8), nn.Tanh(), nn.Dense(8, 1))
    potential = latent_potential(G, D, chunk=4)
    rng = np.random.default_rng(3)
    z = rng.standard_normal((6, 3)).astype(np.float32)  # two chunks, the second padded
    values, grads = potential(z)
    assert values.shape == (6,) and grads.shape == (6, 3)
    h = 1e-2
    for j in range(3):
        e = np.zeros(3, np.float32)
        e[j] = h
        numeric = (potential(z + e)[0] - potential(z - e)[0]) / (2 * h)
        np.testing.assert_allclose(grads[:, j], numeric, rtol=2e-2, atol=2e-3)


@pytest.mark.slow
def test_sample_and_eval_dot_on_a_trained_2d_gan(in_tmp, capsys, trained_2d):
    run = trained_2d("hinge")  # any loss will do; one sample per D decision
    capsys.readouterr()
    assert main(["sample", str(run), "--n", "300", "--dot", "10", "--out", "t.npy"]) == 0
    out = capsys.readouterr().out
    assert "300 samples of shape (2,) from noise moved by discriminator optimal transport" in out
    before, after = (float(x) for x in out.split("mean D ")[1].split(",")[0].split(" -> "))
    assert after > before
    assert main(["sample", str(run), "--n", "300", "--out", "plain.npy"]) == 0
    moved, plain = np.load(in_tmp / "t.npy"), np.load(in_tmp / "plain.npy")
    assert moved.shape == plain.shape == (300, 2) and np.isfinite(moved).all()
    assert not np.array_equal(moved, plain)
    capsys.readouterr()
    # eval scores what sample --dot draws, and says so
    assert main(["eval", str(run), "--n", "300", "--dot", "10"]) == 0
    report = json.loads((run / "eval.json").read_text())
    assert "discriminator optimal transport (10 steps" in report["drawn"]
    capsys.readouterr()
    # refusals, each naming the problem
    assert main(["sample", str(run), "--dot", "0"]) == 2
    assert "--dot is a number of steps >= 1, got 0" in capsys.readouterr().err
    assert main(["sample", str(run), "--dot", "5", "--drs", "80"]) == 2
    assert "choose one" in capsys.readouterr().err
    packed = str(trained_2d("packed"))
    capsys.readouterr()
    assert main(["sample", packed, "--dot", "5"]) == 2
    assert "judges packs of 2 (gan.pack)" in capsys.readouterr().err
