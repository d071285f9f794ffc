"""Regression tests for the MindSpore behaviours gantrain works around (shared notes items).

Each is a silent failure if the framework stops owning it, so each is pinned here.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from mindspore import Tensor, nn, ops

from gantrain.engine import checkpoint
from gantrain.engine.optim import Adam
from gantrain.engine.player import Player
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


class BNGen(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Dense(4, 6)
        self.bn = nn.BatchNorm1d(6)

    def construct(self, z):
        return self.bn(self.fc(z))


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
