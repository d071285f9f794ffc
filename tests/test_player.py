"""Players: step isolation, unique parameter names, skipping non-finite updates, gradient
accumulation, learning-rate schedules, extra objectives and post-update hooks."""

from __future__ import annotations

import numpy as np
import pytest
from mindspore import Tensor, nn, ops

from gantrain.blocks.penalties import ClipWeights
from gantrain.engine.optim import SGD, Adam, LinearDecay
from gantrain.engine.player import Player


class Net(nn.Cell):
    """Two of these in one graph used to collide on 'fc.weight' (docs/mindspore-notes.md,
    item 8)."""

    def __init__(self, d_in: int = 3, d_out: int = 3) -> None:
        super().__init__()
        self.fc = nn.Dense(d_in, d_out)

    def construct(self, x):
        return self.fc(x)


def snapshot(params):
    return [p.asnumpy().copy() for p in params]


def same(a, b) -> bool:
    return all(np.array_equal(x, y) for x, y in zip(a, b))


def x_batch(seed: int = 0, n: int = 8) -> Tensor:
    return Tensor(np.random.default_rng(seed).standard_normal((n, 3)).astype(np.float32))


def make_gan_pair():
    G, D = Net(3, 3), Net(3, 1)

    def d_loss(x, z):
        fake = ops.stop_gradient(G(z))
        return ops.softplus(-D(x)).mean() + ops.softplus(D(fake)).mean(), {"r": D(x).mean()}

    def g_loss(z):
        return ops.softplus(-D(G(z))).mean(), {}

    d = Player("D", D, d_loss, Adam(1e-2, betas=(0.5, 0.999)))
    g = Player("G", G, g_loss, Adam(1e-2, betas=(0.5, 0.999)))
    return G, D, d, g


def test_steps_only_update_their_own_player():
    G, D, d, g = make_gan_pair()
    g0, d0 = snapshot(G.trainable_params()), snapshot(D.trainable_params())
    d.step(x_batch(0), x_batch(1))
    assert same(g0, snapshot(G.trainable_params()))
    assert not same(d0, snapshot(D.trainable_params()))
    d1 = snapshot(D.trainable_params())
    g.step(x_batch(2))
    assert same(d1, snapshot(D.trainable_params()))
    assert not same(g0, snapshot(G.trainable_params()))


def test_parameter_names_are_made_unique_per_player():
    G, D, d, g = make_gan_pair()
    names = [p.name for p in G.get_parameters()] + [p.name for p in D.get_parameters()]
    assert len(set(names)) == len(names)
    assert all(n.startswith("G.") for n in (p.name for p in G.get_parameters()))
    # renaming is idempotent and the optimizer state follows the new names
    def g_mean(z):
        return G(z).mean(), {}

    Player("G", G, g_mean, SGD(0.1))
    assert [p.name for p in G.get_parameters()] == ["G.fc.weight", "G.fc.bias"]
    assert any(p.name == "moment1.D.fc.weight" for p in d.optimizer.get_parameters())


def test_group_of_nets_gets_per_net_prefixes():
    a, b = Net(), Net()

    def both(x):
        return (a(x) + b(x)).mean(), {}

    p = Player("gens", {"ab": a, "ba": b}, both, SGD(0.1))
    assert {q.name for q in p.parameters} == {
        "gens.ab.fc.weight", "gens.ab.fc.bias", "gens.ba.fc.weight", "gens.ba.fc.bias"}
    p.step(x_batch())


def mean_of(net):
    def loss(x):
        return net(x).mean(), {}

    return loss


def test_nonfinite_update_is_skipped_and_counted():
    net = Net(3, 1)
    p = Player("D", net, mean_of(net), Adam(1e-2, betas=(0.5, 0.999)))
    p.step(x_batch())
    before = snapshot(p.state())
    bad = Tensor(np.full((8, 3), np.nan, np.float32))
    loss, _ = p.step(bad)
    assert not np.isfinite(loss.asnumpy())
    after = {q.name: q.asnumpy() for q in p.state()}
    for q, old in zip(p.state(), before):
        if q.name not in ("D.skipped", "D.grad_norm"):
            assert np.array_equal(after[q.name], old), q.name
    assert int(p.skipped.asnumpy()) == 1 and int(p.updates.asnumpy()) == 1
    p.step(x_batch(3))
    assert int(p.updates.asnumpy()) == 2


def test_accumulation_equals_one_step_on_the_mean_gradient():
    x1, x2 = x_batch(1), x_batch(2)
    net_a, net_b = Net(3, 1), Net(3, 1)
    net_b.fc.weight.set_data(net_a.fc.weight.value().copy())
    net_b.fc.bias.set_data(net_a.fc.bias.value().copy())

    def loss_a(x):
        return ops.square(net_a(x) - 1.0).mean(), {}

    def loss_b(xa, xb):
        return 0.5 * (ops.square(net_b(xa) - 1.0).mean() + ops.square(net_b(xb) - 1.0).mean()), {}

    acc = Player("A", net_a, loss_a, SGD(0.1), accumulate=2)
    ref = Player("B", net_b, loss_b, SGD(0.1))
    w0 = snapshot(acc.parameters)
    acc.step(x1)
    assert same(w0, snapshot(acc.parameters))  # first call only accumulates
    acc.step(x2)
    ref.step(x1, x2)
    np.testing.assert_allclose(snapshot(acc.parameters)[0], snapshot(ref.parameters)[0], rtol=1e-5)
    assert int(acc.updates.asnumpy()) == 1
    assert not acc.acc_grads[0].asnumpy().any()  # buffers reset after the update


def test_linear_decay_schedule_sets_learning_rate_in_the_step():
    net = Net(3, 1)
    p = Player("D", net, mean_of(net), SGD(0.5, LinearDecay(start=1, total=5)))
    seen = []
    for _ in range(6):
        p.step(x_batch())
        seen.append(float(p.optimizer.learning_rate.asnumpy()))
    # lr at update t (0-based) is 0.5 * (1 - clamp((t - 1) / 4, 0, 1))
    np.testing.assert_allclose(seen, [0.5, 0.5, 0.375, 0.25, 0.125, 0.0], atol=1e-6)


def test_extra_objective_shares_optimizer_and_counters():
    net = Net(3, 1)
    p = Player("D", net, mean_of(net), Adam(1e-2, betas=(0.5, 0.999)))

    def weight_norm(x):
        return ops.square(net.fc.weight).sum(), {}

    reg = p.objective("reg", weight_norm)
    assert reg.name == "D_reg"
    p.step(x_batch())
    reg.step(x_batch())
    assert int(p.updates.asnumpy()) == 2
    assert int(p.optimizer.global_step.asnumpy().item()) == 2
    with pytest.raises(ValueError, match="taken"):
        p.objective("reg", mean_of(net))


def test_clip_weights_after_update():
    net = Net(3, 1)
    def push(x):
        return -net(x).sum() * 100.0, {}

    p = Player("D", net, push, SGD(1.0), post_update=[ClipWeights(0.01)])
    p.step(x_batch())
    for q in p.parameters:
        assert np.abs(q.asnumpy()).max() <= 0.01 + 1e-7
    assert np.isclose(np.abs(net.fc.weight.asnumpy()).max(), 0.01)


def test_bad_player_arguments():
    net = Net()
    loss = mean_of(net)
    with pytest.raises(ValueError, match="identifier"):
        Player("my player", net, loss, SGD(0.1))
    with pytest.raises(TypeError, match="optimizer spec"):
        Player("P", net, loss, nn.SGD(net.trainable_params()))
    with pytest.raises(ValueError, match="accumulate"):
        Player("P", net, loss, SGD(0.1), accumulate=0)
    with pytest.raises(TypeError, match="not nn.Cell"):
        Player("P", {"a": object()}, loss, SGD(0.1))
    with pytest.raises(TypeError, match="lambda"):
        Player("P", net, lambda x: (net(x).mean(), {}), SGD(0.1))


def test_the_lr_schedule_can_be_set_until_the_step_compiles():
    import mindspore as ms
    from mindspore import nn, ops

    from gantrain.engine.optim import Adam, LinearDecay
    from gantrain.engine.player import Player

    net = nn.Dense(2, 1)

    def loss(x):
        return ops.mean(net(x) ** 2), {}

    player = Player("P", net, loss, Adam(0.1))
    player.set_lr_schedule(LinearDecay(0, 2))
    assert player.spec.schedule == LinearDecay(0, 2) and player.spec.lr == 0.1
    x = ms.Tensor([[1.0, 2.0]])
    for _ in range(3):
        player.step(x)
    before = net.weight.asnumpy().copy()
    player.step(x)  # the rate decayed to 0 after two updates
    assert (net.weight.asnumpy() == before).all()
    with __import__("pytest").raises(RuntimeError, match="after its step compiled"):
        player.set_lr_schedule(None)
