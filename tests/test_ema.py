"""EMA of generator weights against a numpy reference, and swapping averages in for sampling."""

from __future__ import annotations

import numpy as np
import pytest
from mindspore import Tensor, nn, ops

from gantrain.engine.ema import EMA
from gantrain.engine.optim import SGD
from gantrain.engine.player import Player


def make(decay: float, warmup: bool):
    net = nn.Dense(3, 2)

    def loss(x):
        return ops.square(net(x) - 1.0).mean(), {}

    ema = EMA(decay, warmup=warmup)
    return net, ema, Player("G", net, loss, SGD(0.1), post_update=[ema])


@pytest.mark.parametrize("warmup", [False, True])
def test_ema_matches_numpy(warmup):
    net, ema, player = make(0.9, warmup)
    x = Tensor(np.random.default_rng(0).standard_normal((8, 3)).astype(np.float32))
    avg = [p.asnumpy().astype(np.float64) for p in net.trainable_params()]
    for n in range(6):
        player.step(x)
        d = min(0.9, (1 + n) / (10 + n)) if warmup else 0.9
        avg = [a * d + p.asnumpy() * (1 - d) for a, p in zip(avg, net.trainable_params())]
    for a, e in zip(avg, ema.averages):
        np.testing.assert_allclose(e.asnumpy(), a, rtol=1e-5, atol=1e-6)
    assert int(ema.count.asnumpy()) == 6


def test_swapped_in_puts_averages_in_place_and_restores():
    net, ema, player = make(0.5, False)
    x = Tensor(np.ones((4, 3), np.float32))
    for _ in range(3):
        player.step(x)
    live = net.weight.asnumpy().copy()
    with ema.swapped_in():
        np.testing.assert_array_equal(net.weight.asnumpy(), ema.averages[0].asnumpy())
        assert not np.array_equal(net.weight.asnumpy(), live)
    np.testing.assert_array_equal(net.weight.asnumpy(), live)


def test_ema_state_is_checkpointed_with_the_player():
    _, ema, player = make(0.9, True)
    names = {p.name for p in player.state()}
    assert {"ema.G.weight", "ema.G.bias"} <= names


def test_bad_decay():
    with pytest.raises(ValueError, match="decay"):
        EMA(1.0)


def test_buffers_are_averaged_too():
    net = nn.SequentialCell(nn.Dense(3, 4), nn.BatchNorm1d(4))

    def loss(x):
        return ops.square(net(x) - 1.0).mean(), {}

    buffers = [p for p in net.get_parameters() if not p.requires_grad]
    ema = EMA(0.5, warmup=False, buffers=buffers)
    player = Player("G", net, loss, SGD(0.1), post_update=[ema])
    assert {f"ema.{b.name}" for b in buffers} <= {p.name for p in ema.state()}
    mean = buffers[0]
    avg = mean.asnumpy().astype(np.float64)
    x = Tensor(np.random.default_rng(1).standard_normal((8, 3)).astype(np.float32) + 2.0)
    for _ in range(3):
        player.step(x)
        avg = 0.5 * avg + 0.5 * mean.asnumpy()
    stored = {p.name: p for p in ema.state()}[f"ema.{mean.name}"]
    np.testing.assert_allclose(stored.asnumpy(), avg, rtol=1e-5)
    assert np.abs(avg).max() > 0.01  # the running mean moved, so the test means something
