"""The GAN recipe's composed losses against numpy.

Each case builds a GAN with :func:`build_gan` from tiny nets (a tanh MLP discriminator, with a
projection and a class head when conditional, and a linear generator), draws one batch through
the phase's own input builder and runs the phase's jitted step once. The loss and the logged
values the step returns (computed before its update) are compared with a float64 numpy
recomputation from the same inputs and the weights before the step, including D's input
gradient for R1, R2 and WGAN-GP.
"""

from __future__ import annotations

import numpy as np
import pytest
from mindspore import Tensor, nn, ops

from gantrain.blocks.losses import get_loss
from gantrain.blocks.penalties import R1, R2, GradientPenalty
from gantrain.engine.context import StepContext
from gantrain.engine.optim import Adam
from gantrain.recipes.gan.build import GAN, build_gan

B, X, Z, H, K = 8, 2, 3, 5, 3  # batch, sample size, noise size, D width, classes
RTOL = 1e-5


def _copy(param) -> np.ndarray:
    # asnumpy() can share the Parameter's buffer, which the step's update then overwrites
    return np.array(param.asnumpy(), dtype=np.float64, copy=True)


def _init(rng, *shape):
    return Tensor((0.6 * rng.standard_normal(shape)).astype(np.float32))


class TanhD(nn.Cell):
    """``v . tanh(W x + b) + c`` (+ ``E[y] . h`` with classes; + class logits with ``aux``)."""

    def __init__(self, in_dim: int, seed: int, num_classes: int = 0, aux: bool = False) -> None:
        super().__init__()
        rng = np.random.default_rng(seed)
        self.fc = nn.Dense(in_dim, H, weight_init=_init(rng, H, in_dim), bias_init=_init(rng, H))
        self.out = nn.Dense(H, 1, weight_init=_init(rng, 1, H), bias_init=_init(rng, 1))
        self.act = nn.Tanh()
        self.num_classes, self.aux = num_classes, aux
        if num_classes:
            self.embed = nn.Embedding(num_classes, H, embedding_table=_init(rng, num_classes, H))
        if aux:
            self.cls = nn.Dense(H, num_classes, weight_init=_init(rng, num_classes, H),
                                bias_init=_init(rng, num_classes))

    def construct(self, x, y=None):
        h = self.act(self.fc(x))
        logit = self.out(h)
        if self.num_classes:
            logit = ops.reshape(logit, (-1,)) + (self.embed(y) * h).sum(1)
        if self.aux:
            return logit, self.cls(h)
        return logit

    def numpy(self):
        """The net in float64 numpy with the weights it has now: ``f(x, y) -> (logits,
        class logits or None, d logits / dx)``."""
        W, b, v, c = (_copy(p) for p in (self.fc.weight, self.fc.bias, self.out.weight,
                                         self.out.bias))
        v, c = v[0], c[0]
        E = _copy(self.embed.embedding_table) if self.num_classes else None
        C = (_copy(self.cls.weight), _copy(self.cls.bias)) if self.aux else None

        def f(x, y=None):
            h = np.tanh(x @ W.T + b)
            proj = np.tile(v, (len(x), 1)) if E is None else v + E[y]
            cls = h @ C[0].T + C[1] if C is not None else None
            return (h * proj).sum(1) + c, cls, (proj * (1 - h**2)) @ W

        return f


class LinearG(nn.Cell):
    """``z A + c`` (+ ``E[y]`` with classes)."""

    def __init__(self, seed: int, num_classes: int = 0) -> None:
        super().__init__()
        rng = np.random.default_rng(seed)
        self.fc = nn.Dense(Z, X, weight_init=_init(rng, X, Z), bias_init=_init(rng, X))
        self.num_classes = num_classes
        if num_classes:
            self.embed = nn.Embedding(num_classes, X, embedding_table=_init(rng, num_classes, X))

    def construct(self, z, y=None):
        x = self.fc(z)
        if self.num_classes:
            x = x + self.embed(y)
        return x

    def numpy(self):
        """The net in float64 numpy with the weights it has now: ``f(z, y) -> samples``."""
        A, c = _copy(self.fc.weight).T, _copy(self.fc.bias)
        E = _copy(self.embed.embedding_table) if self.num_classes else None

        def f(z, y=None):
            return z @ A + c if E is None else z @ A + c + E[y]

        return f


class Source:
    def __init__(self, num_classes: int = 0) -> None:
        rng = np.random.default_rng(7)
        self.x = rng.standard_normal((B, X)).astype(np.float32)
        self.y = rng.integers(0, max(num_classes, 1), B).astype(np.int64)
        self.labelled = num_classes > 0

    def next_batch(self):
        return (self.x, self.y) if self.labelled else (self.x,)


def make(loss="nonsaturating", num_classes=0, aux_weight=0.0, pack=1, penalties=(), seed=0):
    G = LinearG(seed, num_classes)
    D = TanhD(X * pack, seed + 1, num_classes, aux=aux_weight > 0)
    gan = build_gan(G, D, z_dim=Z, batch_size=B, loss=get_loss(loss), g_optimizer=Adam(1e-3),
                    d_optimizer=Adam(1e-3), penalties=penalties, num_classes=num_classes,
                    pack=pack, aux_weight=aux_weight)
    return gan, G, D


def step(gan: GAN, phase: str, G: LinearG, D: TanhD, num_classes: int = 0, seed: int = 3):
    """Run one step of ``phase`` on inputs from its own builder. Returns the inputs (float64
    and int64 numpy), the step's ``(loss, aux)``, and numpy G and D with the weights the step
    started from."""
    g, d = G.numpy(), D.numpy()
    target = {p.name: p for p in gan.schedule.phases}[phase]
    (batch,) = target.inputs(StepContext(Source(num_classes), np.random.default_rng(seed)))
    arrays = {k: v.asnumpy().astype(np.float64 if k in ("real", "z", "eps") else np.int64)
              for k, v in batch.items()}
    return arrays, target.target.step(batch), g, d


def softplus(x):
    return np.logaddexp(0.0, x)


def bce_d(real, fake):
    return softplus(-real).mean() + softplus(fake).mean()


def cross_entropy(logits, y):
    logits = logits - logits.max(1, keepdims=True)
    return -(logits[np.arange(len(y)), y] - np.log(np.exp(logits).sum(1))).mean()


def check(out, loss, **aux):
    got_loss, got_aux = out
    np.testing.assert_allclose(float(got_loss.asnumpy()), loss, rtol=RTOL, atol=1e-7)
    for key, want in aux.items():
        np.testing.assert_allclose(float(got_aux[key].asnumpy()), want, rtol=RTOL, atol=1e-7,
                                   err_msg=key)


@pytest.mark.parametrize("penalty", [R1(gamma=3.0), R2(gamma=3.0)])
def test_inline_r1_and_r2_add_half_gamma_times_the_squared_gradient_norm(penalty):
    gan, G, D = make(penalties=[penalty])
    assert [p.name for p in gan.schedule.phases] == ["D", "G"]
    b, out, g, d = step(gan, "D", G, D)
    assert set(b) == {"real", "z"}
    fake = g(b["z"])
    d_real, _, g_real = d(b["real"])
    d_fake, _, g_fake = d(fake)
    grad = g_real if isinstance(penalty, R1) else g_fake
    reg = (grad**2).sum(1).mean()
    adv = bce_d(d_real, d_fake)
    check(out, adv + 0.5 * 3.0 * reg, adv=adv, penalty=reg, real=d_real.mean(),
          fake=d_fake.mean())
    assert "class" not in out[1]


@pytest.mark.parametrize("penalty,every", [(R1, 4), (R2, 3)])
def test_lazy_r1_and_r2_run_as_their_own_phase_scaled_by_every(penalty, every):
    gan, G, D = make(penalties=[penalty(gamma=2.0, every=every)])
    phases = gan.schedule.phases
    assert [(p.name, p.every) for p in phases] == [("D", 1), ("D_reg", every), ("G", 1)]
    b, out, g, d = step(gan, "D_reg", G, D)
    if penalty is R1:
        assert set(b) == {"real"}  # the lazy R1 step gets the real batch only
        grad = d(b["real"])[2]
    else:
        assert set(b) == {"z"}
        grad = d(g(b["z"]))[2]
    reg = (grad**2).sum(1).mean()
    check(out, 0.5 * 2.0 * every * reg, penalty=reg)
    # D's own loss carries no penalty term
    b, out, g, d = step(gan, "D", G, D)
    d_real, d_fake = d(b["real"])[0], d(g(b["z"]))[0]
    check(out, bce_d(d_real, d_fake))
    assert "penalty" not in out[1]


@pytest.mark.slow
def test_gradient_penalty_with_acgan_adds_weight_gp_and_aux_weight_class_loss():
    gan, G, D = make(loss="hinge", num_classes=K, aux_weight=0.7,
                     penalties=[GradientPenalty(10.0)])
    b, out, g, d = step(gan, "D", G, D, K)
    assert set(b) == {"real", "y_real", "z", "y_fake", "eps"}
    fake = g(b["z"], b["y_fake"])
    d_real, c_real, _ = d(b["real"], b["y_real"])
    d_fake, c_fake, _ = d(fake, b["y_fake"])
    x_hat = b["eps"] * b["real"] + (1 - b["eps"]) * fake
    grad = d(x_hat, b["y_real"])[2]  # GP uses the real labels at the interpolates
    gp = ((np.sqrt((grad**2).sum(1) + 1e-12) - 1) ** 2).mean()
    adv = np.maximum(0, 1 - d_real).mean() + np.maximum(0, 1 + d_fake).mean()
    cls = cross_entropy(c_real, b["y_real"]) + cross_entropy(c_fake, b["y_fake"])
    check(out, adv + 10.0 * gp + 0.7 * cls, adv=adv, penalty=gp, real=d_real.mean(),
          fake=d_fake.mean(), **{"class": cls})

    b, out, g, d = step(gan, "G", G, D, K)
    assert set(b) == {"z", "y_fake"}
    d_fake, c_fake, _ = d(g(b["z"], b["y_fake"]), b["y_fake"])
    cls = cross_entropy(c_fake, b["y_fake"])
    check(out, -d_fake.mean() + 0.7 * cls, adv=-d_fake.mean(), fake=d_fake.mean(),
          **{"class": cls})


def test_packing_joins_consecutive_samples_for_d():
    m = 2
    gan, G, D = make(pack=m)
    assert D.fc.weight.shape == (H, m * X)
    b, out, g, d = step(gan, "D", G, D)
    packed_real = b["real"].reshape(B // m, m * X)  # rows: (x_0, x_1), (x_2, x_3), ...
    packed_fake = g(b["z"]).reshape(B // m, m * X)
    d_real, d_fake = d(packed_real)[0], d(packed_fake)[0]
    assert d_real.shape == (B // m,)
    check(out, bce_d(d_real, d_fake), real=d_real.mean(), fake=d_fake.mean())
    # an interleaving order (x_0, x_4), ... would give other logits
    interleaved = b["real"].reshape(m, B // m, X).transpose(1, 0, 2).reshape(B // m, m * X)
    assert not np.allclose(d(interleaved)[0].mean(), d_real.mean(), rtol=1e-3)

    b, out, g, d = step(gan, "G", G, D)
    d_fake = d(g(b["z"]).reshape(B // m, m * X))[0]
    check(out, softplus(-d_fake).mean(), fake=d_fake.mean())


def test_conditional_hinge_passes_labels_to_both_nets():
    gan, G, D = make(loss="hinge", num_classes=K)
    b, out, g, d = step(gan, "D", G, D, K)
    assert set(b) == {"real", "y_real", "z", "y_fake"}
    d_real = d(b["real"], b["y_real"])[0]
    d_fake = d(g(b["z"], b["y_fake"]), b["y_fake"])[0]
    adv = np.maximum(0, 1 - d_real).mean() + np.maximum(0, 1 + d_fake).mean()
    check(out, adv, adv=adv, real=d_real.mean(), fake=d_fake.mean())
    assert not {"penalty", "class"} & set(out[1])
    # wrong labels change D's output: the labels do reach the projection
    assert not np.allclose(d(b["real"], (b["y_real"] + 1) % K)[0], d_real)

    b, out, g, d = step(gan, "G", G, D, K)
    d_fake = d(g(b["z"], b["y_fake"]), b["y_fake"])[0]
    check(out, -d_fake.mean(), adv=-d_fake.mean(), fake=d_fake.mean())


def test_relativistic_generator_step_reads_a_real_batch():
    gan, G, D = make(loss="relativistic_average")
    b, out, g, d = step(gan, "G", G, D)
    assert set(b) == {"real", "z"}
    d_real, d_fake = d(b["real"])[0], d(g(b["z"]))[0]
    adv = softplus(-(d_fake - d_real.mean())).mean() + softplus(d_real - d_fake.mean()).mean()
    check(out, adv, adv=adv, fake=d_fake.mean())
