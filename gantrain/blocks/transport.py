"""Discriminator optimal transport in latent space (Tanaka 2019, "Discriminator optimal
transport", NeurIPS; its latent-space variant).

A discriminator trained with a Lipschitz constraint (spectral norm, a gradient penalty) is,
divided by its Lipschitz constant, close to the Kantorovich potential of the optimal transport
from the generator's distribution to the data's. DOT uses that: it moves each latent ``z_y`` to

    z* = argmin_z  ||z - z_y + delta|| - D(G(z)) / k_eff

by a few gradient steps, so the sample moves towards where D rates samples as real, but not far
from where it started (which keeps the generator's diversity). ``k_eff`` is the effective
Lipschitz constant of ``D o G``, estimated as the largest ``|D(G(z1)) - D(G(z2))| / ||z1 - z2||``
over random pairs, and ``delta = 0.001`` keeps the norm differentiable at the start. Unlike
rejection sampling (:mod:`gantrain.blocks.rejection`) it needs no density-ratio logit, so it
works with hinge and Wasserstein critics, and it draws no extra candidates.

For a Gaussian prior each latent is kept on its sphere ``||z|| = ||z_y||``: the gradient's
radial component is removed before the step (as the reference implementation does) and the
latent is scaled back to its norm after it, so the moved latents keep the prior's distribution
of norms (its typical set) instead of drifting to norms G never saw in training.
The steps are Adam with ``beta1 = 0, beta2 = 0.9`` as in the reference implementation, learning
rate 0.01.

Only numpy here: ``potential(z) -> (D(G(z)) (N,), its gradient (N, z_dim))`` is given by the
recipe, which owns the networks.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

DELTA = 1e-3
Potential = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]


def effective_lipschitz(values1: np.ndarray, values2: np.ndarray, z1: np.ndarray,
                        z2: np.ndarray) -> float:
    """``max |D(G(z1)) - D(G(z2))| / ||z1 - z2||`` over the given pairs (Tanaka 2019).

    ``values1``, ``values2``: (N,) potentials of the latents ``z1``, ``z2`` (N, z_dim)."""
    num = np.abs(np.asarray(values1, np.float64) - np.asarray(values2, np.float64)).reshape(-1)
    den = np.linalg.norm(np.asarray(z1, np.float64) - np.asarray(z2, np.float64), axis=1)
    if num.shape != den.shape or num.size == 0:
        raise ValueError(f"effective_lipschitz needs as many values as latent pairs, got "
                         f"{num.shape} values and {den.shape} pairs")
    k = float(np.max(num / np.maximum(den, 1e-12)))
    if not np.isfinite(k) or k <= 0:
        raise ValueError(f"the critic's effective Lipschitz constant is {k}: D gives the same "
                         "value to every sample, so DOT has no direction to move them")
    return k


def transport(z_y: np.ndarray, potential: Potential, k: float, steps: int,
              lr: float = 0.01, betas: tuple[float, float] = (0.0, 0.9), eps: float = 1e-8,
              on_sphere: bool = True) -> np.ndarray:
    """The latents ``z_y`` (N, z_dim) after ``steps`` Adam steps on DOT's objective.

    Args:
        z_y: where each latent starts, drawn from the prior.
        potential: ``z -> (D(G(z)) (N,), dD(G(z))/dz (N, z_dim))``.
        k: the effective Lipschitz constant of ``D o G`` (:func:`effective_lipschitz`).
        steps: gradient steps (0 returns ``z_y``).
        lr, betas, eps: Adam's.
        on_sphere: keep each latent's norm (a Gaussian prior; see the module doc).
    """
    if steps < 0:
        raise ValueError(f"DOT steps must be >= 0, got {steps}")
    if k <= 0:
        raise ValueError(f"DOT needs a positive Lipschitz constant k, got {k}")
    z_y = np.asarray(z_y, np.float64)
    z = z_y.copy()
    m, v = np.zeros_like(z), np.zeros_like(z)
    radius = np.linalg.norm(z_y, axis=1, keepdims=True)
    for t in range(1, steps + 1):
        _, grad_d = potential(z.astype(np.float32))
        diff = z - z_y + DELTA
        grad = diff / np.linalg.norm(diff, axis=1, keepdims=True) - np.asarray(
            grad_d, np.float64) / k
        if on_sphere:
            grad -= z * np.sum(grad * z, axis=1, keepdims=True) / np.sum(z * z, axis=1,
                                                                         keepdims=True)
        m = betas[0] * m + (1 - betas[0]) * grad
        v = betas[1] * v + (1 - betas[1]) * grad * grad
        m_hat, v_hat = m / (1 - betas[0] ** t), v / (1 - betas[1] ** t)
        z -= lr * m_hat / (np.sqrt(v_hat) + eps)
        if on_sphere:  # Adam's per-coordinate scaling leaves the tangent plane: retract
            z *= radius / np.maximum(np.linalg.norm(z, axis=1, keepdims=True), 1e-12)
    return z.astype(np.float32)
