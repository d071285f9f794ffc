"""``gantrain sample --dot STEPS``: discriminator optimal transport of the noise of a GAN run
(Tanaka 2019; the algorithm is :mod:`gantrain.blocks.transport`), with the run's trained
generator and discriminator."""

from __future__ import annotations

import mindspore as ms
import numpy as np
from mindspore import Tensor, nn, ops

from ...blocks import latents
from ...blocks.transport import Potential, effective_lipschitz, transport
from ...config.strict import ConfigError
from ...engine.player import prefix_parameters
from .config import GANConfig
from .wrappers import Critic, Unconditional

LIPSCHITZ_PAIRS = 1000  # random latent pairs k_eff is the largest ratio over
CHUNK = 500  # latents per compiled call (one graph, padded)


class _CriticOfLatent(nn.Cell):
    """``z -> D(G(z)) (B,)``, the potential DOT climbs; G and D in eval mode."""

    def __init__(self, G: nn.Cell, D: nn.Cell) -> None:
        super().__init__(auto_prefix=False)
        self.G, self.D = G, Critic(Unconditional(D))

    def construct(self, z: Tensor) -> Tensor:
        return self.D(self.G(z))


def latent_potential(G: nn.Cell, D: nn.Cell, chunk: int = CHUNK) -> Potential:
    """``z (N, z_dim) -> (D(G(z)) (N,), its gradient (N, z_dim))`` in fixed-size compiled
    chunks. The nets are put in eval mode before the graph compiles, which then keeps it, and
    get their players' parameter names (``G.``, ``D.``; a checkpoint's nets have them already),
    since one graph cannot hold two parameters of the same name."""
    prefix_parameters({"G": G}, "G")
    prefix_parameters({"D": D}, "D")
    net = _CriticOfLatent(G, D)
    net.set_train(False)

    def total(z):
        values = net(z)
        return ops.sum(values), values

    grad_fn = ms.value_and_grad(total, grad_position=0, has_aux=True)

    @ms.jit
    def step(z):
        (_, values), grad = grad_fn(z)
        return values, grad

    def potential(z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        values, grads = [], []
        for start in range(0, len(z), chunk):
            part = z[start : start + chunk]
            padded = np.zeros((chunk,) + z.shape[1:], np.float32)
            padded[: len(part)] = part
            v, g = step(Tensor(padded))
            values.append(v.asnumpy()[: len(part)])
            grads.append(g.asnumpy()[: len(part)])
        return np.concatenate(values), np.concatenate(grads)

    return potential


def check_dot(config: GANConfig) -> None:
    """Refuse runs whose D does not score single unconditional samples."""
    if config.gan.num_classes > 0:
        raise ConfigError("--dot is for unconditional GAN runs; this run is class-conditional")
    if config.gan.pack > 1:
        raise ConfigError(f"--dot moves single samples, but this run's D judges packs of "
                          f"{config.gan.pack} (gan.pack); use --drs, which scores packs")


def dot_latents(G: nn.Cell, D: nn.Cell, config: GANConfig, z: np.ndarray, steps: int,
                rng: np.random.Generator) -> tuple[np.ndarray, dict]:
    """The latents ``z`` moved by ``steps`` DOT steps with the run's trained ``G`` and ``D``,
    and what the move did: ``{"k_eff", "critic_before", "critic_after", "moved"}`` (mean
    D(G(z)) before and after, mean ||z* - z||)."""
    check_dot(config)
    potential = latent_potential(G, D)
    pairs = latents.normal(rng, 2 * LIPSCHITZ_PAIRS, config.gan.z_dim)
    values, _ = potential(pairs)
    k = effective_lipschitz(values[:LIPSCHITZ_PAIRS], values[LIPSCHITZ_PAIRS:],
                            pairs[:LIPSCHITZ_PAIRS], pairs[LIPSCHITZ_PAIRS:])
    moved = transport(z, potential, k, steps)
    before, after = potential(z)[0], potential(moved)[0]
    return moved, {"k_eff": k, "critic_before": float(before.mean()),
                   "critic_after": float(after.mean()),
                   "moved": float(np.linalg.norm(moved - z, axis=1).mean())}
