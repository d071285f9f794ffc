"""The MLP generator and discriminator of the 2D presets, and their maxout layers."""

from __future__ import annotations

import numpy as np
import pytest
from mindspore import Tensor

from gantrain.models.mlp import Discriminator, Generator, Maxout


def test_maxout_is_the_max_over_each_units_pieces():
    layer = Maxout(3, 4, pieces=5)
    x = np.random.default_rng(0).standard_normal((6, 3)).astype(np.float32)
    w = layer.dense.weight.asnumpy()  # (4 * 5, 3)
    b = layer.dense.bias.asnumpy()
    want = (x @ w.T + b).reshape(6, 4, 5).max(axis=-1)
    np.testing.assert_allclose(layer(Tensor(x)).asnumpy(), want, rtol=1e-5, atol=1e-6)


def test_maxout_discriminator_shapes_and_parameter_count():
    D = Discriminator(in_dim=4, width=200, depth=3, activation="maxout", pieces=5)
    out = D(Tensor(np.zeros((7, 4), np.float32)))
    assert out.shape == (7,)
    n = sum(p.size for p in D.trainable_params())
    # PacGAN's 2D D: three maxout layers of 200 units x 5 pieces, then a linear output
    assert n == (4 * 1000 + 1000) + 2 * (200 * 1000 + 1000) + (200 + 1)


@pytest.mark.parametrize("kwargs, message", [
    ({"activation": "maxout"}, "pieces=1 with activation='maxout'"),
    ({"activation": "relu", "pieces": 3}, "pieces=3 with activation='relu'"),
    ({"activation": "swish"}, "activation='swish' is not supported"),
    ({"activation": "maxout", "pieces": 0}, "pieces=0 is invalid"),
])
def test_bad_activation_arguments_name_the_argument(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Discriminator(**kwargs)
    with pytest.raises(ValueError, match=message):
        Generator(**kwargs)


def _dense_relu(x, layer, relu=True):
    y = x @ layer.weight.asnumpy().T + layer.bias.asnumpy()
    return np.maximum(y, 0) if relu else y


def test_shared_layers_read_each_packed_sample_alone_with_the_same_weights():
    D = Discriminator(in_dim=6, width=5, depth=3, pack=3, shared=2)
    x = np.random.default_rng(1).standard_normal((4, 6)).astype(np.float32)
    e1, e2 = D.per_sample[0], D.per_sample[2]
    h = _dense_relu(_dense_relu(x.reshape(12, 2), e1), e2).reshape(4, 15)  # 3 samples x 5
    j1, out = D.net[0], D.net[2]
    want = _dense_relu(_dense_relu(h, j1), out, relu=False).reshape(4)
    np.testing.assert_allclose(D(Tensor(x)).asnumpy(), want, rtol=1e-5, atol=1e-6)
    assert sum(p.size for p in D.per_sample.trainable_params()) == (2 * 5 + 5) + (5 * 5 + 5)


def test_the_sample_head_adds_the_packs_mean_per_sample_score():
    D = Discriminator(in_dim=6, width=5, depth=2, pack=3, shared=1, sample_head=True)
    x = np.random.default_rng(2).standard_normal((4, 6)).astype(np.float32)
    h = _dense_relu(x.reshape(12, 2), D.per_sample[0])  # (4 packs x 3 samples, 5)
    joint = _dense_relu(_dense_relu(h.reshape(4, 15), D.net[0]), D.net[2], relu=False)
    each = _dense_relu(h, D.sample_head, relu=False).reshape(4, 3).mean(1)
    np.testing.assert_allclose(D(Tensor(x)).asnumpy(), joint.reshape(4) + each,
                               rtol=1e-5, atol=1e-6)


def test_set_pooling_reads_the_mean_and_max_of_the_packs_features_in_any_order():
    D = Discriminator(in_dim=8, width=5, depth=2, pack=4, shared=1, pooling="set")
    x = np.random.default_rng(3).standard_normal((3, 8)).astype(np.float32)
    h = _dense_relu(x.reshape(12, 2), D.per_sample[0]).reshape(3, 4, 5)
    pooled = np.concatenate([h.mean(1), h.max(1)], -1)  # (3 packs, 2 x 5)
    want = _dense_relu(_dense_relu(pooled, D.net[0]), D.net[2], relu=False).reshape(3)
    np.testing.assert_allclose(D(Tensor(x)).asnumpy(), want, rtol=1e-5, atol=1e-6)
    shuffled = x.reshape(3, 4, 2)[:, [2, 0, 3, 1]].reshape(3, 8)  # the same samples reordered
    np.testing.assert_allclose(D(Tensor(shuffled)).asnumpy(), want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("kwargs, message", [
    ({"in_dim": 2, "pooling": "set"}, "pooling='set' pools .* needs shared >= 1"),
    ({"in_dim": 4, "pack": 2, "shared": 1, "pooling": "sum"}, "pooling"),
    ({"in_dim": 2, "sample_head": True}, "sample_head=True .* needs shared >= 1"),
    ({"in_dim": 6, "pack": 3, "shared": 3}, r"shared=3 must be an int in \[0, depth\)"),
    ({"in_dim": 6, "pack": 1, "shared": 1}, "shared=1 needs pack >= 2 dividing in_dim"),
    ({"in_dim": 7, "pack": 3, "shared": 1}, "shared=1 needs pack >= 2 dividing in_dim"),
    ({"in_dim": 6, "pack": 3}, r"pack=3 is read only with shared >= 1"),
])
def test_bad_shared_arguments_name_the_argument(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Discriminator(**kwargs)
