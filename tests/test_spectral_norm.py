"""SpectralNorm: the power iteration converges to the SVD, eval mode is read-only, and the
wrapper trains under @ms.jit with gradients reaching the raw weight."""

import os

os.environ.setdefault("ONEDNN_MAX_CPU_ISA", "AVX2")  # before mindspore: fast oneDNN convs

import mindspore as ms  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from mindspore import Tensor, nn, ops  # noqa: E402

from gantrain.blocks.spectral_norm import SpectralNorm, spectral_norm  # noqa: E402

ms.set_device("CPU")


@pytest.fixture(autouse=True)
def _in_tmp_dir(tmp_path, monkeypatch):
    # MindSpore writes compile-debug files into the working directory on failure.
    monkeypatch.chdir(tmp_path)


def _layers():
    return {
        "dense": (nn.Dense(12, 7), np.ones((2, 12), np.float32)),
        "conv": (nn.Conv2d(3, 5, 3, stride=2, pad_mode="pad", padding=1, has_bias=True),
                 np.ones((2, 3, 8, 8), np.float32)),
        "deconv": (nn.Conv2dTranspose(4, 3, 4, stride=2, pad_mode="pad", padding=1),
                   np.ones((2, 4, 5, 5), np.float32)),
        "embedding": (nn.Embedding(6, 9), np.array([0, 3, 5], np.int32)),
    }


def _weight_matrix(sn: SpectralNorm) -> np.ndarray:
    """The reshaped weight whose largest singular value SN estimates (rows = output units)."""
    layer = sn.layer
    if isinstance(layer, nn.Embedding):
        return layer.embedding_table.asnumpy()
    w = layer.weight.asnumpy()
    if isinstance(layer, nn.Conv2dTranspose):
        w = w.transpose(1, 0, 2, 3)
    return w.reshape(w.shape[0], -1)


def _top_singular_value(m: np.ndarray) -> float:
    return float(np.linalg.svd(m, compute_uv=False)[0])


@pytest.mark.parametrize("kind", ["dense", "conv", "deconv", "embedding"])
def test_sigma_converges_to_largest_singular_value(kind):
    ms.set_seed(1)
    layer, x = _layers()[kind]
    sn = spectral_norm(layer)
    sn.set_train(True)
    forward = ms.jit(sn.construct)  # compiled once: 30 PyNative calls cost more than the compile
    x = Tensor(x)
    for _ in range(30):
        forward(x)
    expected = _top_singular_value(_weight_matrix(sn))
    assert float(sn.sigma()) == pytest.approx(expected, rel=1e-4)
    # The weight the layer actually uses has spectral norm ~1.
    sn.set_train(False)
    w_sn = sn.normalized_weight().asnumpy()
    if kind == "deconv":
        w_sn = w_sn.transpose(1, 0, 2, 3)
    assert _top_singular_value(w_sn.reshape(w_sn.shape[0], -1)) == pytest.approx(1.0, rel=1e-4)


@pytest.mark.parametrize("kind", ["dense", "conv", "deconv"])
def test_output_equals_layer_with_normalized_weight(kind):
    ms.set_seed(2)
    layer, x = _layers()[kind]
    sn = spectral_norm(layer)
    sn.set_train(False)
    x = Tensor(np.random.default_rng(0).standard_normal(x.shape).astype(np.float32))
    sigma = float(sn.sigma())
    got = sn(x).asnumpy()
    plain = layer(x).asnumpy()  # W x + b with the raw weight
    if layer.has_bias:
        bias = layer.bias.asnumpy().reshape((1, -1) + (1,) * (plain.ndim - 2))
        plain = plain - bias
        got = got - bias
    np.testing.assert_allclose(got, plain / sigma, rtol=1e-4, atol=1e-5)


def test_eval_mode_leaves_u_unchanged_and_train_mode_updates_it():
    ms.set_seed(3)
    sn = spectral_norm(nn.Dense(10, 6))
    x = Tensor(np.ones((2, 10), np.float32))
    u0 = sn.weight_u.asnumpy().copy()
    sn.set_train(False)
    for _ in range(3):
        sn(x)
    np.testing.assert_array_equal(sn.weight_u.asnumpy(), u0)
    sn.set_train(True)
    sn(x)
    assert not np.allclose(sn.weight_u.asnumpy(), u0)
    assert not sn.weight_u.requires_grad
    assert np.linalg.norm(sn.weight_u.asnumpy()) == pytest.approx(1.0, rel=1e-5)


def test_invalid_arguments_raise_value_error():
    with pytest.raises(ValueError, match="layer=ReLU.*nn.Dense"):
        SpectralNorm(nn.ReLU())
    with pytest.raises(ValueError, match="n_power_iterations=0"):
        SpectralNorm(nn.Dense(3, 3), n_power_iterations=0)
    with pytest.raises(ValueError, match="output_padding"):
        SpectralNorm(nn.Conv2dTranspose(3, 3, 3, stride=2, pad_mode="pad", padding=1,
                                        output_padding=1))


class _TinyNet(nn.Cell):
    def __init__(self):
        super().__init__()
        self.conv = spectral_norm(nn.Conv2d(2, 4, 3, stride=2, pad_mode="pad", padding=1,
                                            has_bias=True))
        self.act = nn.LeakyReLU(0.2)
        self.flatten = nn.Flatten()
        self.fc = spectral_norm(nn.Dense(4 * 4 * 4, 1))

    def construct(self, x):
        return self.fc(self.flatten(self.act(self.conv(x))))


def test_trains_under_jit_with_gradients_to_raw_weight():
    ms.set_seed(4)
    net = _TinyNet()
    net.set_train(True)
    opt = nn.SGD(net.trainable_params(), learning_rate=0.01)
    assert {p.name for p in opt.parameters} == {
        "conv.layer.weight", "conv.layer.bias", "fc.layer.weight", "fc.layer.bias"}
    x = Tensor(np.random.default_rng(1).standard_normal((4, 2, 8, 8)).astype(np.float32))

    def loss_fn(x):
        return ops.mean(net(x) ** 2)

    grad_fn = ms.value_and_grad(loss_fn, None, opt.parameters)

    @ms.jit
    def step(x):
        loss, grads = grad_fn(x)
        return ops.depend(loss, opt(grads)), grads

    w0 = net.conv.layer.weight.asnumpy().copy()
    u0 = net.conv.weight_u.asnumpy().copy()
    losses = []
    for _ in range(3):
        loss, grads = step(x)
        losses.append(float(loss))
    gw = grads[0].asnumpy()
    assert np.all(np.isfinite(gw)) and np.abs(gw).max() > 0
    assert not np.allclose(net.conv.layer.weight.asnumpy(), w0)
    assert not np.allclose(net.conv.weight_u.asnumpy(), u0)
    assert losses[-1] < losses[0]
