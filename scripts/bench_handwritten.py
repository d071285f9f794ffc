"""The seed-style MindSpore loop the benchmark compares gantrain against (column (b)).

What a user writes without a framework: the preset's G and D, one ``value_and_grad`` + ``@ms.jit``
step per net with its optimizer, numpy batches turned into Tensors, the WGAN-GP penalty
(Gulrajani et al. 2017) or R1 and PacGAN packing written inline, an EMA of G in its own jitted step.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import gantrain  # noqa: F401  (sets MindSpore's environment before it loads)

# isort: split
import mindspore as ms
import numpy as np
from mindspore import Tensor, ops

from gantrain.blocks.losses import get_loss
from gantrain.config.imports import build_cell
from gantrain.engine.optim import Adam
from gantrain.recipes.gan.config import GANConfig as Config
from gantrain.recipes.shapes import build_latent_net


def supported(c: Config) -> str:
    """Empty when this loop reproduces the preset's recipe, else the reason it does not."""
    if c.gan.penalty not in ("none", "gp", "r1") or c.gan.augment or c.gan.num_classes:
        return "R2/augment/conditioning: no hand-written baseline"
    if c.optim.generator.accumulate > 1 or c.optim.discriminator.accumulate > 1:
        return "gradient accumulation: no hand-written baseline"
    return ""


def _sq_norm(g):
    """Per-sample squared norm of an input gradient, (B, ...) -> (B,)."""
    return ops.reshape(ops.square(g), (g.shape[0], -1)).sum(axis=1)


def _adam(net, oc):
    # the optimizer gantrain builds (nn.Adam's kernel, also for beta1 = 0, which nn.Adam's
    # own check refuses: docs/mindspore-notes.md, item 15), so that the loops differ only in
    # the framework around it
    return Adam(lr=oc.lr, betas=tuple(oc.betas)).build(net.trainable_params())


class Handwritten:
    """``next_x()`` returns a numpy real batch (the loader); ``fixed`` (a numpy batch), when
    set, is turned into a Tensor once and reused by every D step (data already in memory)."""

    def __init__(self, config: Config, next_x: Callable[[], np.ndarray]) -> None:
        c = config
        self.G = build_latent_net(c.gan.z_dim, "generator", c.generator)  # G as a run has it
        self.D = build_cell(c.discriminator.model, c.discriminator.args, "discriminator")
        self.G.update_parameters_name("hwG.")
        self.D.update_parameters_name("hwD.")
        self.next_x, self.fixed = next_x, None
        self.batch, self.z_dim, self.n_critic = c.data.batch_size, c.gan.z_dim, c.gan.n_critic
        self.rng = np.random.default_rng(0)
        loss = get_loss(c.gan.loss)
        G, D, pack = self.G, self.D, c.gan.pack
        gp_weight = float(c.gan.penalty_weight) if c.gan.penalty == "gp" else 0.0
        r1_weight = float(c.gan.penalty_weight) if c.gan.penalty == "r1" else 0.0
        opt_d, opt_g = _adam(D, c.optim.discriminator), _adam(G, c.optim.generator)

        def d_out(x):
            if pack > 1:
                x = ops.reshape(x, (x.shape[0] // pack, pack * x.shape[1]) + x.shape[2:])
            return ops.reshape(D(x), (-1,))

        def d_sum(x):
            return d_out(x).sum()

        grad_x = ms.grad(d_sum, grad_position=0)

        def d_forward(real, z, eps):
            fake = ops.stop_gradient(G(z))
            value = loss.d(d_out(real), d_out(fake))
            if gp_weight > 0:
                g = grad_x(eps * real + (1.0 - eps) * fake)
                norm = ops.sqrt(_sq_norm(g) + 1e-12)
                value = value + gp_weight * ops.square(norm - 1.0).mean()
            if r1_weight > 0:  # gamma / 2 * E[||grad_x D(real)||^2] (Mescheder et al. 2018)
                g = grad_x(real)
                value = value + 0.5 * r1_weight * _sq_norm(g).mean()
            return value

        def g_forward(z):
            d_fake = d_out(G(z))
            return loss.g(d_fake, d_fake)

        d_grad = ms.value_and_grad(d_forward, None, opt_d.parameters)
        g_grad = ms.value_and_grad(g_forward, None, opt_g.parameters)

        @ms.jit
        def d_step(real, z, eps):
            value, grads = d_grad(real, z, eps)
            return ops.depend(value, opt_d(grads))

        @ms.jit
        def g_step(z):
            value, grads = g_grad(z)
            return ops.depend(value, opt_g(grads))

        self.d_step, self.g_step = d_step, g_step
        self.ema = None
        if c.gan.ema_decay is not None:
            params = opt_g.parameters
            shadow = params.clone(prefix="hw_ema", init="same")
            decay = c.gan.ema_decay

            @ms.jit
            def ema_step():
                for s, p in zip(shadow, params):
                    ops.assign(s, s * decay + p * (1.0 - decay))
                return True

            self.ema = ema_step
        G.set_train(True)
        D.set_train(True)

    def set_fixed(self, batch: np.ndarray | None) -> None:
        self.fixed = None if batch is None else Tensor(batch)

    def iteration(self) -> Tensor:
        for _ in range(self.n_critic):
            real = self.fixed if self.fixed is not None else Tensor(self.next_x())
            z = self.rng.standard_normal((self.batch, self.z_dim), dtype=np.float32)
            eps = self.rng.random((real.shape[0],) + (1,) * (real.ndim - 1), dtype=np.float32)
            self.d_step(real, Tensor(z), Tensor(eps))
        z = self.rng.standard_normal((self.batch, self.z_dim), dtype=np.float32)
        loss = self.g_step(Tensor(z))
        if self.ema is not None:
            self.ema()
        return loss

    def run(self, iters: int) -> float:
        start = time.perf_counter()
        for _ in range(iters):
            loss = self.iteration()
        loss.asnumpy()  # wait for the device
        return time.perf_counter() - start
