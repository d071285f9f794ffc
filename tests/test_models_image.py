"""DCGAN and SNGAN image models on tiny widths: shapes for every size/channel combination, output
range, conditioning, argument validation, and jitted train steps that change the weights."""

import inspect
import os

os.environ.setdefault("ONEDNN_MAX_CPU_ISA", "AVX2")  # before mindspore: fast oneDNN convs

import mindspore as ms  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from mindspore import Tensor, nn, ops  # noqa: E402

from gantrain.models import dcgan, sngan  # noqa: E402

ms.set_device("CPU")
B = 4
Z = 8


@pytest.fixture(autouse=True)
def _in_tmp_dir(tmp_path, monkeypatch):
    # MindSpore writes compile-debug files into the working directory on failure.
    monkeypatch.chdir(tmp_path)


def _z(seed=0, z_dim=Z):
    return Tensor(np.random.default_rng(seed).standard_normal((B, z_dim)).astype(np.float32))


def _labels(*values):
    return Tensor(np.array(values, np.int32))


def _param_names(net):
    return [p.name for p in net.get_parameters()]


# --- shapes and ranges ---------------------------------------------------------------------------

@pytest.mark.parametrize("size", [28, 32, 64])
@pytest.mark.parametrize("channels", [1, 3])
def test_dcgan_shapes_and_range(size, channels):
    ms.set_seed(0)
    g = dcgan.Generator(z_dim=Z, channels=channels, size=size, width=8)
    d = dcgan.Discriminator(channels=channels, size=size, width=8, norm="batch")
    x = g(_z())
    assert x.shape == (B, channels, size, size)
    assert np.abs(x.asnumpy()).max() <= 1.0
    assert d(x).shape == (B,)


@pytest.mark.parametrize("size", [28, 32])
def test_dcgan_refine_adds_stride_1_blocks_at_every_hidden_resolution(size):
    ms.set_seed(0)
    plain = dcgan.Generator(z_dim=Z, size=size, width=8)
    deep = dcgan.Generator(z_dim=Z, size=size, width=8, refine=2, num_classes=3, cond="cbn")
    ms.set_seed(0)
    same = dcgan.Generator(z_dim=Z, size=size, width=8, refine=0)
    # refine = 0 is DCGAN itself: the same parameters, names and output
    assert _param_names(same) == _param_names(plain)
    np.testing.assert_array_equal(same(_z()).asnumpy(), plain(_z()).asnumpy())
    hidden = dcgan.GEOMETRY[size][1]  # resolutions before the output layer
    convs = [n for n in _param_names(deep) if ".convs." in n and n.endswith("weight")]
    assert len(convs) == 2 * hidden
    x = deep(_z(), _labels(0, 1, 2, 0))
    assert x.shape == (B, 1, size, size) and np.abs(x.asnumpy()).max() <= 1.0
    with pytest.raises(ValueError, match="refine=-1 is invalid"):
        dcgan.Generator(z_dim=Z, width=8, refine=-1)


@pytest.mark.parametrize("size", [32, pytest.param(64, marks=pytest.mark.slow)])
def test_sngan_shapes_and_range(size):
    ms.set_seed(0)
    g = sngan.Generator(z_dim=Z, channels=3, size=size, width=8)
    d = sngan.Discriminator(channels=3, size=size, width=8)
    x = g(_z())
    assert x.shape == (B, 3, size, size)
    assert np.abs(x.asnumpy()).max() <= 1.0
    assert d(x).shape == (B,)


def test_parameter_names_are_unique_within_each_model():
    nets = [
        dcgan.Generator(z_dim=Z, width=8, num_classes=3, cond="cbn"),
        dcgan.Discriminator(width=8, norm="spectral", num_classes=3, aux_classifier=True),
        sngan.Generator(z_dim=Z, width=8, num_classes=3),
        sngan.Discriminator(width=8, num_classes=3, aux_classifier=True),
    ]
    for net in nets:
        names = _param_names(net)
        assert len(names) == len(set(names)), type(net)


def test_constructor_defaults_are_plain_python_values():
    for cls in (dcgan.Generator, dcgan.Discriminator, sngan.Generator, sngan.Discriminator):
        for p in list(inspect.signature(cls).parameters.values()):
            assert type(p.default) in (int, float, str, bool), (cls, p.name)


# --- conditioning --------------------------------------------------------------------------------

@pytest.mark.parametrize("make_g", [
    lambda: dcgan.Generator(z_dim=Z, width=8, num_classes=10),
    lambda: dcgan.Generator(z_dim=Z, width=8, num_classes=10, cond="cbn"),
    pytest.param(lambda: sngan.Generator(z_dim=Z, width=8, num_classes=10),
                 marks=pytest.mark.slow),
], ids=["dcgan-concat", "dcgan-cbn", "sngan-cbn"])
def test_conditional_generator_output_depends_on_label(make_g):
    ms.set_seed(1)
    g = make_g()
    # Conditional BN starts as plain BN (scales 1, shifts 0): give the classes distinct shifts.
    for p in g.get_parameters():
        if p.name.endswith("beta.embedding_table"):
            p.set_data(Tensor(np.random.default_rng(2).normal(size=p.shape), ms.float32))
    g.set_train(False)  # per-sample outputs, independent of the rest of the batch
    z = _z(3)
    a = g(z, _labels(0, 1, 2, 3)).asnumpy()
    b = g(z, _labels(4, 5, 6, 7)).asnumpy()
    assert a.shape[0] == B
    assert np.abs(a - b).max() > 1e-4


@pytest.mark.parametrize("make_d, channels, size", [
    (lambda: dcgan.Discriminator(width=8, norm="spectral", num_classes=10, aux_classifier=True),
     1, 28),
    pytest.param(lambda: sngan.Discriminator(width=8, num_classes=10, aux_classifier=True), 3, 32,
                 marks=pytest.mark.slow),
], ids=["dcgan", "sngan"])
def test_projection_discriminator_depends_on_label_and_returns_class_logits(make_d, channels,
                                                                              size):
    ms.set_seed(2)
    d = make_d()
    d.set_train(False)
    x = Tensor(np.random.default_rng(4).uniform(-1, 1, (B, channels, size, size)), ms.float32)
    logit_a, cls_a = d(x, _labels(0, 1, 2, 3))
    logit_b, cls_b = d(x, _labels(9, 8, 7, 6))
    assert logit_a.shape == (B,) and cls_a.shape == (B, 10)
    assert np.abs(logit_a.asnumpy() - logit_b.asnumpy()).min() > 0
    np.testing.assert_allclose(cls_a.asnumpy(), cls_b.asnumpy())  # class logits ignore y


def test_unconditional_discriminator_ignores_missing_labels():
    d = dcgan.Discriminator(width=8, num_classes=0)
    assert d(Tensor(np.zeros((B, 1, 28, 28), np.float32))).shape == (B,)


# --- argument validation -------------------------------------------------------------------------

@pytest.mark.parametrize("cls, kwargs, pattern", [
    (dcgan.Generator, {"size": 48}, r"size=48.*28, 32, 64"),
    (dcgan.Generator, {"norm": "group"}, r"norm='group'.*'batch', 'none'"),
    (dcgan.Generator, {"activation": "tanh"}, r"activation='tanh'.*'relu'"),
    (dcgan.Generator, {"cond": "film"}, r"cond='film'"),
    (dcgan.Generator, {"num_classes": 3, "cond": "cbn", "norm": "none"}, r"norm='none'"),
    (dcgan.Generator, {"width": 0}, r"width=0"),
    (dcgan.Discriminator, {"norm": "layer"}, r"norm='layer'.*'spectral'"),
    (dcgan.Discriminator, {"aux_classifier": True}, r"aux_classifier=True.*num_classes"),
    (dcgan.Discriminator, {"num_classes": 3, "projection": False}, r"num_classes=3"),
    (dcgan.Discriminator, {"num_classes": -1}, r"num_classes=-1"),
    (sngan.Generator, {"size": 28}, r"size=28.*32, 64"),
    (sngan.Discriminator, {"norm": "batch"}, r"norm='batch'"),
])
def test_invalid_constructor_arguments_raise_value_error(cls, kwargs, pattern):
    with pytest.raises(ValueError, match=pattern):
        cls(**kwargs)


# --- jitted training ----------------------------------------------------------------------------

def _train_steps(g, d, z_dim, channels, size, num_classes, steps=2):
    """Run a few non-saturating GAN steps (one jitted step per player, as the engine does) and
    return (G params before, D params before, losses)."""
    g.update_parameters_name("G.")
    d.update_parameters_name("D.")
    g.set_train(True)
    d.set_train(True)
    opt_g = nn.Adam(g.trainable_params(), learning_rate=1e-3, beta1=0.5)
    opt_d = nn.Adam(d.trainable_params(), learning_rate=1e-3, beta1=0.5)

    def logits(out):
        return out[0] if isinstance(out, tuple) else out

    def d_loss(x, z, y):
        fake = ops.stop_gradient(g(z, y))
        return (ops.mean(ops.softplus(-logits(d(x, y))))
                + ops.mean(ops.softplus(logits(d(fake, y)))))

    def g_loss(z, y):
        return ops.mean(ops.softplus(-logits(d(g(z, y), y))))

    grad_d = ms.value_and_grad(d_loss, None, opt_d.parameters)
    grad_g = ms.value_and_grad(g_loss, None, opt_g.parameters)

    @ms.jit
    def d_step(x, z, y):
        loss, grads = grad_d(x, z, y)
        return ops.depend(loss, opt_d(grads))

    @ms.jit
    def g_step(z, y):
        loss, grads = grad_g(z, y)
        return ops.depend(loss, opt_g(grads))

    before_g = {p.name: p.asnumpy().copy() for p in g.trainable_params()}
    before_d = {p.name: p.asnumpy().copy() for p in d.trainable_params()}
    rng = np.random.default_rng(0)
    x = Tensor(rng.uniform(-1, 1, (B, channels, size, size)).astype(np.float32))
    y = Tensor(rng.integers(0, max(num_classes, 1), B).astype(np.int32))
    losses = []
    for _ in range(steps):
        z = Tensor(rng.standard_normal((B, z_dim)).astype(np.float32))
        losses.append((float(d_step(x, z, y)), float(g_step(z, y))))
    return before_g, before_d, losses


def _changed(net, before):
    return [p.name for p in net.trainable_params()
            if not np.allclose(p.asnumpy(), before[p.name])]


@pytest.mark.slow
def test_conditional_dcgan_trains_under_jit():
    ms.set_seed(5)
    g = dcgan.Generator(z_dim=Z, channels=1, size=28, width=8, num_classes=3, cond="cbn")
    d = dcgan.Discriminator(channels=1, size=28, width=8, norm="spectral", num_classes=3,
                            aux_classifier=True)
    before_g, before_d, losses = _train_steps(g, d, Z, 1, 28, 3)
    assert np.all(np.isfinite(losses))
    # Every G parameter moves; in D the aux classifier gets no gradient from this loss.
    assert len(_changed(g, before_g)) == len(before_g)
    assert set(_changed(d, before_d)) >= {"D.blocks.0.conv.layer.weight",
                                          "D.head.embed.layer.embedding_table"}
    d.set_train(False)
    g.set_train(False)
    out = g(_z(), _labels(0, 1, 2, 0))
    assert np.abs(out.asnumpy()).max() <= 1.0


@pytest.mark.slow
def test_conditional_sngan_trains_under_jit():
    ms.set_seed(6)
    g = sngan.Generator(z_dim=Z, channels=3, size=32, width=8, num_classes=3)
    d = sngan.Discriminator(channels=3, size=32, width=8, num_classes=3)
    before_g, before_d, losses = _train_steps(g, d, Z, 3, 32, 3)
    assert np.all(np.isfinite(losses))
    assert len(_changed(g, before_g)) == len(before_g)
    assert len(_changed(d, before_d)) == len(before_d)


def test_discriminator_step_runs_the_generator_in_training_mode():
    """Regression: D's step compiles before G's, and a graph keeps the train flag of each net
    at compile time. D must see fakes made with batch statistics, as G's own step makes them."""
    from gantrain import Adam
    from gantrain.blocks.losses import get_loss
    from gantrain.engine.context import StepContext
    from gantrain.recipes.gan.build import build_gan

    g = dcgan.Generator(z_dim=Z, channels=1, size=28, width=8)
    d = dcgan.Discriminator(channels=1, size=28, width=8)
    gan = build_gan(g, d, z_dim=Z, batch_size=4, loss=get_loss("nonsaturating"),
                    g_optimizer=Adam(1e-3), d_optimizer=Adam(1e-3))
    stats = [p for p in g.get_parameters() if "moving_mean" in p.name]
    before = [p.asnumpy().copy() for p in stats]

    class Real:
        def next_batch(self):
            return (np.random.default_rng(0).uniform(-1, 1, (4, 1, 28, 28)).astype(np.float32),)

    ctx = StepContext(Real(), np.random.default_rng(0))
    d_phase = gan.schedule.phases[0]
    d_phase.target.step(*d_phase.inputs(ctx))
    # in training mode BatchNorm normalizes with the batch and updates its running mean
    assert stats and all(not np.allclose(b, p.asnumpy()) for b, p in zip(before, stats))
