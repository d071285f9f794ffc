"""Gradient penalties: values against closed forms, and their weight gradients (grad of grad,
computed under jit) against finite differences, on conv -> activation -> flatten -> Dense, the
layer pattern for which PyNative silently returns 0 (docs/mindspore-notes.md, item 14)."""

from __future__ import annotations

import mindspore as ms
import numpy as np
import pytest
from mindspore import Tensor, nn, ops

from gantrain.blocks.penalties import make_gradient_penalty, make_joint_r1, make_r1
from gantrain.engine.player import prefix_parameters


class JointConvD(nn.Cell):
    """D(x, z) for ALI: conv features of x concatenated with z, then Dense."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3, stride=2, pad_mode="pad", padding=1, has_bias=True)
        self.act = nn.LeakyReLU(0.2)
        self.flat = nn.Flatten()
        self.fc = nn.Dense(4 * 4 * 4 + 3, 1)

    def construct(self, x, z):
        h = self.flat(self.act(self.conv(x)))
        return self.fc(ops.concat((h, ops.tanh(z)), 1))


class ConvD(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(1, 4, 3, stride=2, pad_mode="pad", padding=1, has_bias=True)
        self.act = nn.LeakyReLU(0.2)
        self.flat = nn.Flatten()
        self.fc = nn.Dense(4 * 4 * 4, 1)

    def construct(self, x):
        return self.fc(self.flat(self.act(self.conv(x))))


def d_apply_of(D):
    def d_apply(x, y):
        return ops.reshape(D(x), (-1,))

    return d_apply


RNG = np.random.default_rng(0)
REAL = Tensor(RNG.standard_normal((4, 1, 8, 8)).astype(np.float32))
FAKE = Tensor(RNG.standard_normal((4, 1, 8, 8)).astype(np.float32))
Y = Tensor(np.zeros(4, np.int32))
EPS = Tensor(RNG.random((4, 1, 1, 1)).astype(np.float32))
Z = Tensor(RNG.standard_normal((4, 3)).astype(np.float32))


def penalty_and_grads(D, which: str):
    params = D.trainable_params()
    if which == "joint":
        def d_joint(x, z):
            return ops.reshape(D(x, z), (-1,))

        joint = make_joint_r1(d_joint)

        def value(real, fake, y, eps):
            return joint(real, Z)
    else:
        gp, r1 = make_gradient_penalty(d_apply_of(D)), make_r1(d_apply_of(D))

        def value(real, fake, y, eps):
            if which == "gp":
                return gp(real, fake, y, eps)
            return r1(real, y)

    grad_fn = ms.value_and_grad(value, None, params)
    jitted = ms.jit(grad_fn)
    v, grads = jitted(REAL, FAKE, Y, EPS)
    plain = ms.jit(value)
    return float(v.asnumpy()), [g.asnumpy() for g in grads], plain


@pytest.mark.parametrize("which", ["gp", "r1", "joint"])
def test_penalty_weight_gradients_match_finite_differences(which):
    ms.set_seed(0)
    D = JointConvD() if which == "joint" else ConvD()
    prefix_parameters({"D": D}, f"D{which}")
    _, grads, value = penalty_and_grads(D, which)
    params = D.trainable_params()
    rng = np.random.default_rng(1)
    checked = 0
    for p, g in zip(params, grads):
        if p.name.endswith("conv.bias"):
            continue  # piecewise-linear D: the bias enters only through kinks
        for _ in range(3):
            idx = tuple(rng.integers(0, s) for s in p.shape)
            base = p.asnumpy().copy()
            h = 1e-2
            plus, minus = base.copy(), base.copy()
            plus[idx] += h
            minus[idx] -= h
            ops.assign(p, Tensor(plus))
            f_plus = float(value(REAL, FAKE, Y, EPS).asnumpy())
            ops.assign(p, Tensor(minus))
            f_minus = float(value(REAL, FAKE, Y, EPS).asnumpy())
            ops.assign(p, Tensor(base))
            numeric = (f_plus - f_minus) / (2 * h)
            np.testing.assert_allclose(g[idx], numeric, rtol=2e-2, atol=2e-4, err_msg=p.name)
            checked += 1
    fc = [g for p, g in zip(params, grads) if p.name.endswith("fc.weight")][0]
    assert np.abs(fc).max() > 1e-3  # the case PyNative gets silently wrong
    assert checked >= 9


def test_closed_forms_for_a_linear_critic():
    D = nn.Dense(6, 1)
    prefix_parameters({"D": D}, "Dlin")
    w = D.weight.asnumpy().ravel()
    x = Tensor(RNG.standard_normal((5, 6)).astype(np.float32))
    f = Tensor(RNG.standard_normal((5, 6)).astype(np.float32))
    y = Tensor(np.zeros(5, np.int32))
    eps = Tensor(RNG.random((5, 1)).astype(np.float32))
    gp = ms.jit(make_gradient_penalty(d_apply_of(D)))(x, f, y, eps)
    r1 = ms.jit(make_r1(d_apply_of(D)))(x, y)
    norm = np.linalg.norm(w)
    np.testing.assert_allclose(float(gp.asnumpy()), (norm - 1) ** 2, rtol=1e-4)
    np.testing.assert_allclose(float(r1.asnumpy()), norm**2, rtol=1e-5)


def test_joint_r1_differentiates_both_inputs():
    """For a linear D(x, z) = [x, z] . w + b: the joint penalty is ||w||^2, x's weights and
    z's, where R1 on x alone would give ||w_x||^2."""
    D = nn.Dense(6 + 2, 1)
    prefix_parameters({"D": D}, "Djoint")
    w = D.weight.asnumpy().ravel()
    x = Tensor(RNG.standard_normal((5, 6)).astype(np.float32))
    z = Tensor(RNG.standard_normal((5, 2)).astype(np.float32))

    def d_joint(a, b):
        return ops.reshape(D(ops.concat((a, b), 1)), (-1,))

    joint = ms.jit(make_joint_r1(d_joint))
    np.testing.assert_allclose(float(joint(x, z).asnumpy()), (w**2).sum(), rtol=1e-5)
    assert (w[6:] ** 2).sum() > 1e-3  # z's part is there to be missed


IMAGE = ["data.args={n = 64, size = 28}", "data.batch_size=16", "generator.args.width=8",
         "discriminator.args.width=8"]
ACGAN = [*IMAGE, "gan.aux_weight=1.0", "discriminator.args.aux_classifier=true"]


@pytest.mark.parametrize("preset, penalty, extra", [
    ("gan_2d_ring", "r1", []), ("gan_2d_ring", "r2", []), ("cgan_digits", "r1", ACGAN)])
def test_a_zero_weight_penalty_trains_d_like_no_penalty(preset, penalty, extra, tmp_path):
    """D learns from both sides with R1/R2 inline (ACGAN's class head included): with
    gamma = 0 the run ends with the weights of a run without the penalty. (The logits used to
    come from the aux output of the penalty's input-gradient call, whose gradient MindSpore
    stops: D then learned nothing from that side and the 2D grid and ring collapsed to 0 modes
    at any gamma; docs/mindspore-notes.md, item 31.)"""
    from gantrain.recipes.registry import build_run, load_config

    common = ["train.steps=3", "train.progress=false", "train.log_every=1000",
              "train.sample_every=1000", "train.checkpoint_every=1000", "train.samples=16",
              "train.grid=4", *(extra or ["data.batch_size=64", "generator.args.width=16",
                                          "discriminator.args.width=16"])]
    weights = []
    for pen in ([], [f'gan.penalty="{penalty}"', "gan.penalty_weight=0.0"]):
        run = build_run(load_config(preset, common + pen), tmp_path / str(len(pen)))
        run.train()
        weights.append({p.name: p.asnumpy() for p in run.gan.discriminator.state()
                        if "moment" not in p.name and p.name.count(".") >= 2
                        and p.asnumpy().size > 1})
    assert len(weights[0]) >= 6 and weights[0].keys() == weights[1].keys()
    for name, value in weights[0].items():
        np.testing.assert_allclose(weights[1][name], value, rtol=1e-5, atol=1e-7, err_msg=name)

