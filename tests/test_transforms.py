"""Each gradient transform against a numpy reference, run inside a jitted function."""

from __future__ import annotations

import mindspore as ms
import numpy as np
import pytest
from mindspore import Parameter, Tensor, ops

from gantrain.engine.transforms import (
    Chain,
    ClipByGlobalNorm,
    ClipByValue,
    GaussianNoise,
    Scale,
    global_norm,
)

RNG = np.random.default_rng(0)
GRADS = [RNG.standard_normal((4, 3)).astype(np.float32) * 3, RNG.standard_normal(5).astype(
    np.float32)]
PARAMS = [Parameter(Tensor(np.zeros_like(g)), name=f"p{i}") for i, g in enumerate(GRADS)]


def apply(transform, grads=GRADS, loss=1.0):
    transform.init(PARAMS, "test")

    @ms.jit
    def run(gs, lo):
        return transform(gs, lo)

    out = run(tuple(Tensor(g) for g in grads), Tensor(np.float32(loss)))
    return [o.asnumpy() for o in out]


def np_norm(grads):
    return np.sqrt(sum((g.astype(np.float64) ** 2).sum() for g in grads))


def test_global_norm_matches_numpy():
    norm = global_norm(tuple(Tensor(g) for g in GRADS))
    np.testing.assert_allclose(float(norm.asnumpy()), np_norm(GRADS), rtol=1e-6)


@pytest.mark.parametrize("max_norm", [0.5, 1e6])
def test_clip_by_global_norm(max_norm):
    out = apply(ClipByGlobalNorm(max_norm))
    factor = min(1.0, max_norm / np_norm(GRADS))
    for o, g in zip(out, GRADS):
        np.testing.assert_allclose(o, g * factor, rtol=1e-5)
    assert np_norm(out) <= max_norm * (1 + 1e-5)


def test_clip_by_value():
    out = apply(ClipByValue(0.7))
    for o, g in zip(out, GRADS):
        np.testing.assert_array_equal(o, np.clip(g, -0.7, 0.7))


def test_scale():
    out = apply(Scale(-0.25))
    for o, g in zip(out, GRADS):
        np.testing.assert_allclose(o, g * -0.25, rtol=1e-6)


def test_chain_applies_in_order():
    out = apply(Chain(Scale(10.0), ClipByValue(1.0)))
    for o, g in zip(out, GRADS):
        np.testing.assert_allclose(o, np.clip(g * 10, -1, 1), rtol=1e-6)
    out = apply(Chain(ClipByValue(1.0), Scale(10.0)))
    for o, g in zip(out, GRADS):
        np.testing.assert_allclose(o, np.clip(g, -1, 1) * 10, rtol=1e-6)


def test_gaussian_noise_statistics_and_decay():
    big = [np.zeros((200, 250), np.float32), np.zeros(10000, np.float32)]
    params = [Parameter(Tensor(g), name=f"big{i}") for i, g in enumerate(big)]
    noise = GaussianNoise(eta=0.3, gamma=0.55, seed=1)
    noise.init(params, "n")

    @ms.jit
    def run(gs, lo):
        return noise(gs, lo)

    grads = tuple(Tensor(g) for g in big)
    draws = []
    for t in range(3):
        out = np.concatenate([o.asnumpy().ravel() for o in run(grads, Tensor(np.float32(0)))])
        sigma = np.sqrt(0.3 / (1 + t) ** 0.55)
        assert abs(out.mean()) < 4 * sigma / np.sqrt(out.size)
        np.testing.assert_allclose(out.std(), sigma, rtol=0.02)
        # tails of a normal: ~4.55% beyond 2 sigma
        assert 0.040 < np.mean(np.abs(out) > 2 * sigma) < 0.051
        draws.append(out)
    assert int(noise.t.asnumpy()) == 3
    assert abs(np.corrcoef(draws[0], draws[1])[0, 1]) < 0.02  # fresh noise every call
    # the two gradients get independent noise (different element offsets)
    a, b = draws[0][:10000], draws[0][50000:]
    assert abs(np.corrcoef(a, b)[0, 1]) < 0.05


def test_gaussian_noise_is_reproducible_from_its_counter():
    n = GaussianNoise(eta=1.0, seed=3)
    n.init(PARAMS, "r")

    @ms.jit
    def run(gs, lo):
        return n(gs, lo)

    grads = tuple(Tensor(g) for g in GRADS)  # the same tuple every call: compiled once

    def draw(t0):
        ops.assign(n.t, Tensor(np.int64(t0)))  # as a restored checkpoint sets it, in place
        return run(grads, Tensor(np.float32(0)))[0].asnumpy()

    at5 = draw(5)
    assert not np.array_equal(at5, draw(6))
    np.testing.assert_array_equal(at5, draw(5))


def test_invalid_arguments():
    with pytest.raises(ValueError, match="max_norm"):
        ClipByGlobalNorm(0)
    with pytest.raises(ValueError, match="limit"):
        ClipByValue(-1)
    with pytest.raises(ValueError, match="eta"):
        GaussianNoise(eta=-1)
    with pytest.raises(TypeError, match="GradientTransform"):
        Chain(Scale(1.0), "clip")
