"""Several iterations per compiled call: the same numbers as one iteration per call, bit for
bit (n_critic repeats, a lazy objective, gradient accumulation and noise, a shorter last call),
hooks at call boundaries, and the phases that cannot be fused refused."""

from __future__ import annotations

import numpy as np
import pytest
from mindspore import Tensor, ops

from gantrain.data.dataset import ArrayDataset
from gantrain.data.loader import ArrayLoader
from gantrain.engine.loop import Hook, Loop
from gantrain.engine.optim import Adam
from gantrain.engine.player import Player
from gantrain.engine.schedule import Phase, Schedule
from gantrain.engine.transforms import GaussianNoise

from .test_player import Net


class Trace(Hook):
    def __init__(self, every: int = 1) -> None:
        self.every, self.seen = every, []

    def after_iteration(self, loop):
        self.seen.append((loop.iteration, {k: float(v[0].asnumpy())
                                           for k, v in loop.outputs.items()}))


def build(k: int, hooks=()):
    """A 3-D GAN with n_critic 2, a lazy D objective every 3 iterations, and a G that
    accumulates 2 calls with gradient noise: every kind of state a step carries."""
    G, D = Net(3, 3), Net(3, 1)
    rng = np.random.default_rng(0)
    for p in G.trainable_params() + D.trainable_params():
        p.set_data(Tensor(rng.standard_normal(p.shape).astype(np.float32) * 0.3))

    def d_loss(x, z):
        fake = ops.stop_gradient(G(z))
        return ops.softplus(-D(x)).mean() + ops.softplus(D(fake)).mean(), {}

    def d_reg(x):
        return (D(x) ** 2).mean(), {}

    def g_loss(z):
        return ops.softplus(-D(G(z))).mean(), {}

    d = Player("D", D, d_loss, Adam(1e-2, betas=(0.5, 0.999)))
    g = Player("G", G, g_loss, Adam(1e-2, betas=(0.5, 0.999)),
               transforms=[GaussianNoise(0.01)], accumulate=2)
    data = ArrayDataset(rng.standard_normal((64, 3)).astype(np.float32), name="toy")

    def d_inputs(ctx):
        (x,) = ctx.batch()
        return x, ctx.normal(8, 3)

    schedule = Schedule([
        Phase(d, d_inputs, repeats=2),
        Phase(d.objective("reg", d_reg), lambda_free_batch, every=3, name="D_reg"),
        Phase(g, lambda_free_noise),
    ])
    loop = Loop(schedule, ArrayLoader(data, 8, seed=0), seed=1, hooks=hooks, progress=False,
                iterations_per_call=k)
    return loop, (G, D, d, g)


def lambda_free_batch(ctx):
    return ctx.batch()


def lambda_free_noise(ctx):
    return (ctx.normal(8, 3),)


def state(players) -> list[np.ndarray]:
    _, _, d, g = players
    return [p.asnumpy().copy() for p in d.state() + g.state()]


@pytest.mark.slow
def test_k_iterations_per_call_equal_one_per_call_bit_for_bit():
    k = 5
    one, one_players = build(1, [Trace(1)])
    one.run(11)
    every4 = Trace(4)
    fused, fused_players = build(k, [Trace(1), every4])
    fused.run(11)  # 11 = 2 calls of k and a shorter one: a second compiled pattern
    assert fused.iteration == 11
    for a, b in zip(state(one_players), state(fused_players)):
        np.testing.assert_array_equal(a, b)
    # the loader and the RNG are where one-per-call left them: the next draws agree
    assert one.state_dict()["data"] == fused.state_dict()["data"]
    assert one.ctx.rng.random() == fused.ctx.rng.random()
    # hooks see call boundaries, with each phase's last output of the call
    one_seen, fused_seen = dict(one.hooks[0].seen), dict(fused.hooks[0].seen)
    assert sorted(fused_seen) == sorted({min(i, 11) for i in range(k, 11 + k, k)})
    for iteration, outputs in fused_seen.items():
        last = {name: value for name, value in one_seen[iteration].items()}
        # a lazy phase that did not run in the call's last iteration reports its last run
        assert {n: v for n, v in outputs.items() if n in last} == last
    # a hook fires once per call in which its interval is crossed (4 in the first, 8 in the
    # second), not when the call ends short of it
    assert [i for i, _ in every4.seen] == [5, 10]


def test_a_phase_reading_earlier_outputs_is_refused_clearly():
    loop, (G, D, d, g) = build(1)

    def reads_outputs(ctx):
        return (ctx.outputs["D"][0],)

    schedule = Schedule([Phase(g, reads_outputs)])
    fused = Loop(schedule, loop.ctx.data, iterations_per_call=2, progress=False)
    with pytest.raises(RuntimeError, match=r"read ctx.outputs\['D'\].*Phase\(fusable=False\)"):
        fused.run(2)
    with pytest.raises(ValueError, match=r"phases \['G'\] build their inputs from earlier"):
        Loop(Schedule([Phase(g, lambda_free_noise, fusable=False)]), loop.ctx.data,
             iterations_per_call=2)


def test_bad_iterations_per_call():
    loop, _ = build(1)
    with pytest.raises(ValueError, match="iterations per call must be an int >= 1, got 0"):
        Loop(loop.schedule, loop.ctx.data, iterations_per_call=0)




def _twin(accumulate: int):
    """A player with every kind of update state: Adam, an LR schedule, gradient noise,
    accumulation, an EMA; the loss is NaN for an all-NaN batch."""
    from gantrain.engine.ema import EMA
    from gantrain.engine.optim import LinearDecay

    net = Net(3, 1)
    rng = np.random.default_rng(3)
    for p in net.trainable_params():
        p.set_data(Tensor(rng.standard_normal(p.shape).astype(np.float32)))

    def loss_fn(x):
        return (net(x) ** 2).mean(), {"mean": net(x).mean()}

    spec = Adam(1e-2, betas=(0.5, 0.999), schedule=LinearDecay(1, 6))
    return Player("P", net, loss_fn, spec, transforms=[GaussianNoise(0.01)],
                  accumulate=accumulate, post_update=[EMA(0.9)])


@pytest.mark.slow
@pytest.mark.parametrize("accumulate", [1, 2])
def test_the_branch_free_body_computes_what_the_step_computes(accumulate):
    """:meth:`Player.body` undoes a skipped update with ``where`` instead of branching on it;
    over finite and NaN batches it must leave every state Parameter as the step does."""
    import mindspore as ms

    stepped, bodied = _twin(accumulate), _twin(accumulate)
    body = ms.jit(bodied.body())
    rng = np.random.default_rng(4)
    batches = [rng.standard_normal((8, 3)).astype(np.float32) for _ in range(7)]
    batches[2][:] = np.nan
    batches[5][:] = np.nan
    for x in batches:
        a, b = stepped.step(Tensor(x)), body(Tensor(x))
        np.testing.assert_array_equal(a[0].asnumpy(), b[0].asnumpy())
        for p, q in zip(stepped.state(), bodied.state()):
            np.testing.assert_array_equal(p.asnumpy(), q.asnumpy(), err_msg=p.name)
    assert int(bodied.skipped.asnumpy()) == 2
    assert int(bodied.updates.asnumpy()) == 5 // accumulate


@pytest.mark.slow
def test_a_gan_run_resumed_with_k_per_call_equals_one_per_call(tmp_path):
    """The GAN recipe with gradient noise, accumulation and a lazy R1 phase: one iteration per
    call for 8 iterations at jit level O0, against 2 per call at O1, interrupted at 4 and
    resumed. One comparison covers k per call, resume, and O1 computing O0's bits on CPU
    (docs/mindspore-notes.md, item 34)."""
    from gantrain.recipes.gan.run import GANRun
    from gantrain.recipes.registry import load_config

    from .tracing import fingerprint

    overrides = ["optim.discriminator.grad_noise=0.01", "optim.generator.accumulate=2",
                 "gan.penalty=\"r1\"", "gan.penalty_weight=0.1", "gan.penalty_every=2",
                 "train.progress=false", "train.steps=8", "train.log_every=2",
                 "train.sample_every=4", "train.checkpoint_every=4", "guard.every=2",
                 "train.samples=16"]

    def make(k: int, folder) -> GANRun:
        level = "O0" if k == 1 else "O1"
        return GANRun(load_config("gan_2d_ring", overrides + [
            f"train.iterations_per_call={k}", f'jit_level="{level}"']), folder)

    straight = make(1, tmp_path / "a")
    straight.train()
    first = make(2, tmp_path / "b")
    first.loop.run(4)
    resumed = make(2, tmp_path / "b")
    assert resumed.restore(tmp_path / "b") == 4
    resumed.train()
    a, b = fingerprint(straight), fingerprint(resumed)
    assert a.keys() == b.keys()
    assert [k for k in a if a[k] != b[k]] == []


def test_a_run_refuses_intervals_and_phases_a_fused_call_cannot_honour(tmp_path):
    from gantrain.config.strict import ConfigError
    from gantrain.recipes.registry import build_run, load_config

    short = ["train.progress=false", "train.steps=4", "train.iterations_per_call=4"]
    with pytest.raises(ConfigError, match=r"train.iterations_per_call = 4: .*multiple of 4; "
                                          r"not train.log_every = 10.*guard.every = 10"):
        build_run(load_config("gan_2d_ring", short + ["train.log_every=10"]), tmp_path / "a")
    with pytest.raises(ConfigError, match=r"iterations_per_call = 2: phases \['actor', "
                                          r"'critic'\] build their inputs from earlier steps"):
        build_run(load_config("a2c_cartpole", ["train.iterations_per_call=2"]), tmp_path / "b")
