"""The LeakyReLU of the reference models computes what nn.LeakyReLU computes (values and
gradients, compiled), and swapping it in leaves a DCGAN discriminator's parameters, checkpoints
and outputs unchanged (docs/performance.md, "Per-op table vs PyTorch")."""

import os

os.environ.setdefault("ONEDNN_MAX_CPU_ISA", "AVX2")  # before mindspore: fast oneDNN convs

import mindspore as ms  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from mindspore import Tensor, nn  # noqa: E402

from gantrain.models import dcgan  # noqa: E402
from gantrain.models.layers import LeakyReLU, make_activation  # noqa: E402

ms.set_device("CPU")


@pytest.fixture(autouse=True)
def _in_tmp_dir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # MindSpore writes compile-debug files here on failure


def _values_and_grads(cell: nn.Cell, x: Tensor, dy: Tensor, params=None):
    """Output and the gradients wrt x (and ``params``) for output gradient dy, compiled."""

    def fwd_bwd(x, dy):
        out, vjp_fn = ms.vjp(cell, x, weights=params) if params else ms.vjp(cell, x)
        return out, vjp_fn(dy)

    out, grads = ms.jit(fwd_bwd)(x, dy)
    flat = [out.asnumpy()]
    for g in grads if isinstance(grads, tuple) else (grads,):
        flat += [t.asnumpy() for t in (g if isinstance(g, tuple) else (g,))]
    return flat


def test_same_values_and_gradients_as_nn_leaky_relu():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((8, 4, 5, 5)).astype(np.float32) * 3
    x[0, 0, 0, :2] = [1e-30, -1e-30]  # tiny values of both signs
    dy = Tensor(rng.standard_normal(x.shape).astype(np.float32))
    new = _values_and_grads(LeakyReLU(0.2), Tensor(x), dy)
    old = _values_and_grads(nn.LeakyReLU(0.2), Tensor(x), dy)
    for a, b in zip(new, old):
        np.testing.assert_array_equal(a, b)  # bit for bit, not just close


def test_values_and_gradients_at_the_ties_zero_and_infinity():
    x = Tensor(np.array([-2.0, 0.0, 3.0, np.inf, -np.inf], np.float32))
    out, grad = _values_and_grads(LeakyReLU(0.2), x, Tensor(np.ones(5, np.float32)))
    np.testing.assert_allclose(out, [-0.4, 0.0, 3.0, np.inf, -np.inf], rtol=1e-7)
    # At 0 both ReLUs are flat, so the gradient is 0 (nn.LeakyReLU splits ties: 0.6; PyTorch: 0.2).
    np.testing.assert_allclose(grad, [0.2, 0.0, 1.0, 1.0, 0.2], rtol=1e-7)


@pytest.mark.parametrize("slope", [0.0, 1.0, -0.1])
def test_slope_outside_0_1_is_refused(slope):
    with pytest.raises(ValueError, match="slope"):
        LeakyReLU(slope)


def test_models_build_it_and_a_discriminator_with_nn_leaky_relu_is_interchangeable(tmp_path):
    assert isinstance(make_activation("leaky_relu"), LeakyReLU)
    ms.set_seed(0)
    d_new = dcgan.Discriminator(channels=1, size=28, width=8, norm="batch")
    ms.set_seed(1)
    d_old = dcgan.Discriminator(channels=1, size=28, width=8, norm="batch")
    for block in d_old.blocks:
        assert isinstance(block.act, LeakyReLU)
        block.act = nn.LeakyReLU(0.2)  # the formulation gantrain used before
    d_new.set_train(True)
    d_old.set_train(True)
    names = [p.name for p in d_new.get_parameters()]
    assert names == [p.name for p in d_old.get_parameters()]
    # A checkpoint written by one loads into the other with every name matched.
    ms.save_checkpoint(d_old, str(tmp_path / "old.ckpt"))
    not_loaded, _ = ms.load_param_into_net(d_new, ms.load_checkpoint(str(tmp_path / "old.ckpt")),
                                           strict_load=True)
    assert not_loaded == []
    rng = np.random.default_rng(2)
    x = Tensor(rng.standard_normal((6, 1, 28, 28)).astype(np.float32))
    dy = Tensor(rng.standard_normal((6,)).astype(np.float32))
    new = _values_and_grads(d_new, x, dy, d_new.trainable_params())
    old = _values_and_grads(d_old, x, dy, d_old.trainable_params())
    assert len(new) == len(old) == 2 + len(d_new.trainable_params())  # out, dx, each weight
    for a, b in zip(new, old):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
