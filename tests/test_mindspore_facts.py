"""Regression tests for the MindSpore 2.10 (CPU) facts gantrain relies on.

docs/mindspore-notes.md lists those facts; each test here names its item number there. Some
tests pin MindSpore's own behaviour (so an upgrade that changes it fails loudly and the item is
re-checked), others pin what gantrain does about it. Items whose pinning test lives in another
file say so in docs/mindspore-notes.md.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import mindspore as ms
import numpy as np
import pytest
from mindspore import Tensor, mint, nn, ops

from gantrain.engine import checkpoint, runtime
from gantrain.engine.optim import SGD, Adam
from gantrain.engine.player import Player, prefix_parameters
from gantrain.engine.sampling import Sampler


def run_python(code: str, cwd, env_extra=None) -> subprocess.CompletedProcess:
    import os

    env = {k: v for k, v in os.environ.items()
           if k not in ("ONEDNN_MAX_CPU_ISA", "MS_OM_PATH", "GLOG_v")}
    env.update(env_extra or {})
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300)


def test_numpy_is_below_2():  # item 1: numpy 2 breaks mindspore's C++ side
    assert int(np.__version__.split(".")[0]) < 2


@pytest.mark.slow  # three fresh interpreters importing mindspore
def test_onednn_isa_is_set_before_mindspore_and_user_value_kept(tmp_path):  # item 2
    code = "import gantrain, os, mindspore; print(os.environ['ONEDNN_MAX_CPU_ISA'])"
    assert run_python(code, tmp_path).stdout.strip() == "AVX2"
    own = run_python(code, tmp_path, {"ONEDNN_MAX_CPU_ISA": "SSE41"})
    assert own.stdout.strip() == "SSE41"
    late = run_python("import mindspore, gantrain", tmp_path)
    assert "imported before gantrain" in late.stderr


@pytest.mark.slow  # a fresh interpreter importing mindspore
def test_failed_compiles_leave_no_files_in_the_working_directory(tmp_path):  # item 4
    code = """
import gantrain
import mindspore as ms
from mindspore import nn
gantrain.setup()
class Bad(nn.Cell):
    def __init__(s):
        super().__init__()
        s.fc = nn.Dense(3, 2)
    def construct(s, x):  # 'self' is required by the graph parser: this fails to compile
        return s.fc(x)
bad = Bad()
@ms.jit
def f(x):
    return bad(x)
try:
    f(ms.Tensor([[1.0, 2.0, 3.0]]))
except Exception:
    print("compile failed")
"""
    out = run_python(code, tmp_path)
    assert "compile failed" in out.stdout, out.stderr[-2000:]
    assert list(tmp_path.iterdir()) == []


def test_setup_uses_set_device_not_the_deprecated_context_key(monkeypatch):  # item 5
    from mindspore import context

    warned = []
    monkeypatch.setattr(context.logger, "warning", lambda msg, *a, **k: warned.append(str(msg)))
    ms.set_context(device_target="CPU")  # the old way: MindSpore says it is deprecated
    assert any("device_target" in m and "set_device" in m for m in warned), warned
    warned.clear()
    runtime.setup("CPU", 0)
    assert warned == [] and ms.get_context("device_target") == "CPU"


def test_value_and_grad_differentiates_only_output_0_wrt_the_weights():  # item 6
    net = nn.Dense(3, 1)

    def forward(x):
        out = net(x)
        return ops.square(out).mean(), {"sum": out.sum() * 100.0}  # aux: not differentiated

    grad_fn = ms.value_and_grad(forward, None, net.trainable_params(), has_aux=True)

    @ms.jit
    def step(x):
        return grad_fn(x)

    x = np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)
    (loss, aux), grads = step(Tensor(x))
    out = x @ net.weight.asnumpy().T + net.bias.asnumpy()
    dout = 2.0 * out / len(x)
    assert len(grads) == 2  # weight and bias only, no gradient for the input
    np.testing.assert_allclose(grads[0].asnumpy(), dout.T @ x, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(grads[1].asnumpy(), dout.sum(axis=0), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(float(loss.asnumpy()), (out**2).mean(), rtol=1e-5)
    np.testing.assert_allclose(float(aux["sum"].asnumpy()), out.sum() * 100.0, rtol=1e-5)


def test_aux_outputs_of_value_and_grad_carry_no_gradient():  # item 31
    D = nn.Dense(2, 1)
    prefix_parameters({"D": D}, "Daux")
    x = Tensor(np.random.default_rng(0).standard_normal((4, 2)).astype(np.float32))

    def d_out(inp):
        logits = D(inp).squeeze(-1)
        return logits.sum(), logits

    input_grad = ms.value_and_grad(d_out, grad_position=0, has_aux=True)

    def through_aux(inp):
        (_, logits), _ = input_grad(inp)
        return logits.sum()

    def direct(inp):
        return D(inp).squeeze(-1).sum()

    aux = ms.jit(ms.grad(through_aux, None, D.trainable_params()))(x)
    own = ms.jit(ms.grad(direct, None, D.trainable_params()))(x)
    assert all(np.abs(g.asnumpy()).max() == 0 for g in aux)
    assert np.abs(own[0].asnumpy()).max() > 0.1


def test_player_step_applies_exactly_one_update_per_call():  # item 7
    net = nn.Dense(3, 1)

    def loss(x):
        out = net(x)
        return ops.square(out - 1.0).mean(), {"unused": out.mean()}

    player = Player("S", net, loss, SGD(0.1))
    x = np.random.default_rng(1).standard_normal((4, 3)).astype(np.float32)
    for _ in range(2):
        w, b = net.weight.asnumpy().copy(), net.bias.asnumpy().copy()
        out = x @ w.T + b
        dout = 2.0 * (out - 1.0) / len(x)
        value, _ = player.step(Tensor(x))
        np.testing.assert_allclose(float(value.asnumpy()), ((out - 1.0) ** 2).mean(), rtol=1e-5)
        np.testing.assert_allclose(net.weight.asnumpy(), w - 0.1 * dout.T @ x, rtol=1e-5,
                                   atol=1e-7)
        np.testing.assert_allclose(net.bias.asnumpy(), b - 0.1 * dout.sum(axis=0), rtol=1e-5,
                                   atol=1e-7)


class Fc(nn.Cell):
    def __init__(self, d_in: int, d_out: int) -> None:
        super().__init__()
        self.fc = nn.Dense(d_in, d_out)

    def construct(self, x):
        return self.fc(x)


def test_parameter_names_collide_in_one_graph_until_prefixed():  # item 8
    G, D = Fc(3, 3), Fc(3, 1)

    def d_of_g(z):
        return D(G(z)).mean()

    z = Tensor(np.ones((2, 3), np.float32))
    with pytest.raises(RuntimeError, match="already exists"):
        ms.jit(ms.value_and_grad(d_of_g, None, D.trainable_params()))(z)
    prefix_parameters({"G": G}, "G")
    prefix_parameters({"D": D}, "D")
    assert [p.name for p in G.get_parameters()] == ["G.fc.weight", "G.fc.bias"]
    loss, grads = ms.jit(ms.value_and_grad(d_of_g, None, D.trainable_params()))(z)
    assert len(grads) == 2 and np.isfinite(float(loss.asnumpy()))


class BNGen(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Dense(4, 6)
        self.bn = nn.BatchNorm1d(6)

    def construct(self, z):
        return self.bn(self.fc(z))


def test_compiled_graph_keeps_the_train_flag_it_was_compiled_with():  # item 10
    bn = nn.BatchNorm1d(4)
    bn.set_train(True)

    @ms.jit
    def forward(x):
        return bn(x)

    x = Tensor(np.random.default_rng(0).standard_normal((8, 4)).astype(np.float32) * 3 + 1)
    forward(x)
    moving = bn.moving_mean.asnumpy().copy()
    bn.set_train(False)  # too late: the graph still normalizes with the batch and updates
    out = forward(x).asnumpy()
    assert not np.array_equal(moving, bn.moving_mean.asnumpy())
    np.testing.assert_allclose(out.mean(axis=0), 0.0, atol=1e-5)  # batch statistics


def test_sampler_uses_eval_mode_even_after_train_graph_compiled():  # item 10
    G = BNGen()

    def loss(z):
        return ops.square(G(z)).mean(), {}

    player = Player("G", G, loss, Adam(1e-2, betas=(0.5, 0.999)))
    z = Tensor(np.random.default_rng(0).standard_normal((8, 4)).astype(np.float32))
    player.step(z)  # compiled in train mode
    sampler = Sampler(G, chunk=8)
    moving = G.bn.moving_mean.asnumpy().copy()
    got = sampler(z.asnumpy())
    assert np.array_equal(moving, G.bn.moving_mean.asnumpy())  # eval: statistics untouched
    G.set_train(False)
    expected = G(z).asnumpy()  # PyNative eval-mode reference
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)
    assert G.training is False
    G.set_train(True)
    player.step(z)  # the training graph still runs in train mode
    assert not np.array_equal(moving, G.bn.moving_mean.asnumpy())


def test_host_writes_after_compile_are_not_seen_but_in_place_assigns_are(tmp_path):  # item 11
    x = Tensor(np.ones((2, 3), np.float32))
    zeros = {"weight": np.zeros((1, 3), np.float32), "bias": np.zeros((1,), np.float32)}

    def compiled():
        net = nn.Dense(3, 1)

        @ms.jit
        def forward(v):
            return net(v)

        before = forward(x).asnumpy()
        assert before.any()
        return net, forward, before

    net, forward, before = compiled()
    net.weight.set_data(Tensor(zeros["weight"]))
    net.bias.set_data(Tensor(zeros["bias"]))
    assert not net(x).asnumpy().any()  # PyNative sees the new values ...
    np.testing.assert_array_equal(forward(x).asnumpy(), before)  # ... the graph does not
    ops.assign(net.weight, Tensor(zeros["weight"]))  # the link is lost for good: an in-place
    np.testing.assert_array_equal(forward(x).asnumpy(), before)  # write now misses it too
    net, forward, before = compiled()
    ms.load_param_into_net(net, {k: ms.Parameter(Tensor(v), k) for k, v in zeros.items()})
    np.testing.assert_array_equal(forward(x).asnumpy(), before)
    net, forward, _ = compiled()
    ops.assign(net.weight, Tensor(zeros["weight"]))
    ops.assign(net.bias, Tensor(zeros["bias"]))
    assert not forward(x).asnumpy().any()


def test_checkpoint_restore_reaches_a_compiled_step(tmp_path):  # item 11
    net = nn.Dense(3, 1)

    def loss(x):
        return ops.square(net(x) - 1.0).mean(), {}

    player = Player("P", net, loss, Adam(0.1, betas=(0.5, 0.999)))
    x = Tensor(np.ones((4, 3), np.float32))
    player.step(x)  # compile
    checkpoint.save(tmp_path, "step_1", {"P": player.state()}, {})
    first = float(player.step(x)[0].asnumpy())
    for _ in range(5):
        player.step(x)
    checkpoint.load_parameters(player.state(), tmp_path / "step_1" / "P.ckpt")
    again = float(player.step(x)[0].asnumpy())
    assert again == first  # the graph saw the restored weights and optimizer state


def test_a_fresh_tuple_of_tensors_recompiles_every_call_unless_mutable():  # item 12
    from mindspore.graph.api import ms_compile_cache

    @ms.jit
    def affine(state, x):
        return state[0] * x + state[1]

    x = Tensor(np.ones(3, np.float32))

    def fresh():
        return (Tensor(np.float32(2.0)), Tensor(np.float32(1.0)))

    def compiles(call) -> int:
        before = len(ms_compile_cache)
        for _ in range(3):
            call()
        return len(ms_compile_cache) - before

    assert compiles(lambda: affine(fresh(), x)) == 3
    assert compiles(lambda: affine(ms.mutable(fresh()), x)) == 1
    state = fresh()
    assert compiles(lambda: affine(state, x)) == 1


def test_an_inline_lambda_cannot_be_compiled():  # item 13
    with pytest.raises(TypeError, match="Parse Lambda Function Fail"):
        ms.jit(lambda v: v * 2.0)(Tensor(np.ones(2, np.float32)))


def test_adam_kernel_takes_beta1_zero_that_nn_adam_refuses():  # item 15
    net = nn.Dense(3, 1)
    with pytest.raises(ValueError, match="beta1"):
        nn.Adam(net.trainable_params(), learning_rate=1e-2, beta1=0.0)

    def loss(x):
        return ops.square(net(x) - 1.0).mean(), {}

    lr, b2, eps = 1e-2, 0.9, 0.1  # a large eps, so that where it is added shows
    player = Player("A", net, loss, Adam(lr, betas=(0.0, b2), eps=eps))
    assert isinstance(player.optimizer, nn.Adam)  # the fused kernel, not mint's unfused ops
    x = np.random.default_rng(2).standard_normal((4, 3)).astype(np.float32)
    w = [net.weight.asnumpy().astype(np.float64), net.bias.asnumpy().astype(np.float64)]
    v = [np.zeros_like(a) for a in w]
    for t in range(1, 4):
        out = x @ w[0].T + w[1]
        dout = 2.0 * (out - 1.0) / len(x)
        grads = [dout.T @ x, dout.sum(axis=0)]
        for i, g in enumerate(grads):  # beta1 = 0: the first moment is the gradient itself
            v[i] = b2 * v[i] + (1 - b2) * g * g
            # the kernel's form: eps on the uncorrected sqrt(v), the correction on the step
            w[i] = w[i] - lr * np.sqrt(1 - b2**t) * g / (np.sqrt(v[i]) + eps)
        player.step(Tensor(x))
    np.testing.assert_allclose(net.weight.asnumpy(), w[0], rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(net.bias.asnumpy(), w[1], rtol=1e-5, atol=1e-7)
    np.testing.assert_array_equal(player.optimizer.beta1_power.asnumpy(), 0.0)


def test_mint_conv2d_is_not_registered_on_cpu():  # item 16
    x = Tensor(np.ones((1, 1, 5, 5), np.float32))
    w = Tensor(np.ones((2, 1, 3, 3), np.float32))
    with pytest.raises(RuntimeError, match="unregistered"):
        mint.nn.functional.conv2d(x, w).asnumpy()  # the error surfaces when the value is read
    assert ops.conv2d(x, w).shape == (1, 2, 3, 3)
    assert nn.Conv2d(1, 2, 3, pad_mode="valid")(x).shape == (1, 2, 3, 3)


def test_each_optimizer_owns_global_step_so_players_get_one_file_each(tmp_path):  # item 19
    nets = {"G": Fc(3, 3), "D": Fc(3, 1)}

    def mean_of(net):
        def loss(x):
            return net(x).mean(), {}

        return loss

    # mindspore: every Adam calls its counters the same
    bare = [{p.name for p in Adam(1e-2).build(Fc(3, 1).trainable_params()).get_parameters()}
            for _ in range(2)]
    assert bare[0] & bare[1] >= {"global_step", "beta1_power", "beta2_power", "learning_rate"}
    # gantrain: a player prefixes them, so two players' steps can share a graph (gantrain.fused)
    players = {k: Player(k, net, mean_of(net), Adam(1e-2, betas=(0.5, 0.999)))
               for k, net in nets.items()}
    names = {k: {p.name for p in player.state()} for k, player in players.items()}
    for k in ("G", "D"):
        assert {f"{k}.global_step", f"{k}.beta1_power", f"{k}.beta2_power",
                f"{k}.learning_rate", f"moment1.{k}.fc.weight", f"moment2.{k}.fc.bias"} <= names[k]
    assert names["G"].isdisjoint(names["D"])
    x = Tensor(np.ones((2, 3), np.float32))
    players["G"].step(x)
    for _ in range(3):
        players["D"].step(x)
    saved = {k: [p.asnumpy().copy() for p in player.state()] for k, player in players.items()}
    checkpoint.save(tmp_path, "step_1", {k: p.state() for k, p in players.items()}, {})
    assert sorted(f.name for f in (tmp_path / "step_1").glob("*.ckpt")) == ["D.ckpt", "G.ckpt"]
    for player in players.values():
        player.step(x)
    for k, player in players.items():
        checkpoint.load_parameters(player.state(), tmp_path / "step_1" / f"{k}.ckpt")
        for p, value in zip(player.state(), saved[k]):
            np.testing.assert_array_equal(p.asnumpy(), value, err_msg=p.name)
    assert int(players["D"].optimizer.global_step.asnumpy().item()) == 3
    assert int(players["G"].optimizer.global_step.asnumpy().item()) == 1


def test_same_seeds_train_bit_identically():  # item 20
    def train() -> tuple[list[float], list[np.ndarray]]:
        ms.set_seed(11)  # weight initialization
        net = nn.SequentialCell(nn.Dense(3, 8), nn.ReLU(), nn.Dense(8, 1))

        def loss(x):
            return ops.square(net(x) - 1.0).mean(), {}

        player = Player("P", net, loss, Adam(1e-2, betas=(0.5, 0.999)))
        rng = np.random.default_rng(0)  # host-side data and noise
        trace = [float(player.step(Tensor(rng.standard_normal((16, 3)).astype(np.float32)))[0]
                       .asnumpy()) for _ in range(5)]
        return trace, [p.asnumpy() for p in player.parameters]

    (trace_a, weights_a), (trace_b, weights_b) = train(), train()
    assert trace_a == trace_b and len(set(trace_a)) > 1
    for a, b in zip(weights_a, weights_b):
        assert a.tobytes() == b.tobytes()


def test_asnumpy_of_a_parameter_is_a_view_that_a_jitted_update_changes():  # item 33
    net = nn.Dense(2, 1)

    def loss_fn(x):
        return net(x).sum(), {}

    player = Player("V", net, loss_fn, SGD(0.1))
    view, copied = net.weight.asnumpy(), net.weight.asnumpy().copy()
    player.step(Tensor(np.ones((4, 2), np.float32)))
    assert not np.array_equal(copied, net.weight.asnumpy())  # the step moved the weight
    np.testing.assert_array_equal(view, net.weight.asnumpy())  # and the "snapshot" with it


def test_jit_level_o1_computes_the_same_bits_as_o0_on_cpu():  # item 34
    """Why ``jit_level = "O1"`` may be set in a preset without re-measuring its quality: on CPU
    the fused graph gives the bits of the plain one, R1's double backward included. When this
    fails, O1 changes results and every preset that sets it needs its figures measured again."""
    from gantrain.blocks.penalties import make_r1
    from gantrain.models.mlp import Discriminator

    def train(level: str) -> list[bytes]:
        runtime.setup("CPU", 5, level)
        D = Discriminator(in_dim=4, width=16, depth=3, pack=2, shared=1)

        def d_apply(x, y):
            return D(x)

        r1 = make_r1(d_apply)

        def loss(x):
            return ops.softplus(-D(x)).mean() + 0.05 * r1(x, x), {}

        player = Player("D", D, loss, Adam(1e-2, betas=(0.5, 0.999)))
        rng = np.random.default_rng(0)
        for _ in range(5):
            player.step(Tensor(rng.standard_normal((32, 4)).astype(np.float32)))
        return [p.asnumpy().tobytes() for p in player.parameters]

    try:
        plain, fused = train("O0"), train("O1")
    finally:
        runtime.setup("CPU", 0)
    assert plain == fused


def test_jit_reads_a_functions_source_from_disk_when_it_compiles(tmp_path, monkeypatch):  # 35
    """Why experiments run from a copy of the code: a graph compiled after its module's file
    changed is built from the file's new lines, not the code Python loaded."""
    (tmp_path / "edited_module.py").write_text("def f(x):\n    return x + 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import edited_module

    (tmp_path / "edited_module.py").write_text("def f(x):\n    return x + 2\n")
    x = Tensor(np.zeros(1, np.float32))
    assert float(edited_module.f(x).asnumpy()[0]) == 1.0  # Python runs what it loaded
    assert float(ms.jit(edited_module.f)(x).asnumpy()[0]) == 2.0  # the graph, the new file


@pytest.mark.slow  # four fresh interpreters, ~30 s
def test_inter_op_one_changes_the_kernels_arithmetic():  # item 28
    """Why runtime.setup keeps the default inter-op setting: under it, results do not depend on
    the thread count; with one inter-op worker and two threads they do. When this fails,
    MindSpore changed and ``inter_op_parallel_num = 1`` (x1.09 idle) can be reconsidered."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
    try:
        from interop_determinism import gradient_hash
    finally:
        sys.path.pop(0)
    one_thread = gradient_hash(1, 0, 5)
    assert gradient_hash(1, 1, 5) == one_thread
    assert gradient_hash(2, 0, 5) == one_thread
    assert gradient_hash(2, 1, 5) != one_thread


@pytest.mark.slow  # five fresh interpreters, ~20-50 s
def test_compile_cache_loses_jit_functions_weights_and_ignores_shapes_and_order(tmp_path):
    """Item 29. Why gantrain turns MindSpore's compile cache off: a cached ``@ms.jit`` function
    (our player steps) computes with unbound weights, and a graph cached for other shapes or
    another compile order is loaded. Cells' graphs load exactly. When this fails, MindSpore
    changed: re-check item 29."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
    try:
        from compile_cache_check import check
    finally:
        sys.path.pop(0)
    holds, runs = check()
    assert holds, runs
    code = """
import gantrain, os
import mindspore as ms
from mindspore import Tensor, nn
gantrain.setup()
net = nn.Dense(3, 2)
@ms.jit
def f(x):
    return net(x).sum()
print(os.environ["MS_COMPILER_CACHE_ENABLE"], f(Tensor([[1.0, 2.0, 3.0]])))
"""
    (tmp_path / "guarded.py").write_text(code)  # jit needs the source in a file
    cache = tmp_path / "cache"
    done = run_python("import runpy; runpy.run_path('guarded.py')", tmp_path,
                      {"MS_COMPILER_CACHE_ENABLE": "1",
                       "MS_COMPILER_CACHE_PATH": str(cache)})
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith("0 ") and "item 29" in done.stderr
    assert not cache.exists()

