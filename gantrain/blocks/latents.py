"""Latent codes for sampling: plain or truncated noise, interpolations, class labels."""

from __future__ import annotations

import numpy as np


def normal(rng: np.random.Generator, n: int, z_dim: int,
           truncation: float | None = None) -> np.ndarray:
    """N(0, I) noise; with ``truncation``, entries with |z| > truncation are redrawn (the
    truncation trick, Brock et al. 2019, "Large Scale GAN Training", Sec. 3.1)."""
    z = rng.standard_normal((n, z_dim)).astype(np.float32)
    if truncation is not None:
        if truncation <= 0:
            raise ValueError(f"--truncation must be > 0, got {truncation}")
        bad = np.abs(z) > truncation
        while bad.any():
            z[bad] = rng.standard_normal(int(bad.sum())).astype(np.float32)
            bad = np.abs(z) > truncation
    return z


def slerp(a: np.ndarray, b: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Spherical interpolation between rows ``a`` and ``b`` (White 2016, "Sampling Generative
    Networks"), the right path between Gaussian latents; ``t`` has shape (T,)."""
    a_n = a / np.linalg.norm(a, axis=-1, keepdims=True)
    b_n = b / np.linalg.norm(b, axis=-1, keepdims=True)
    omega = np.arccos(np.clip((a_n * b_n).sum(-1, keepdims=True), -1.0, 1.0))
    so = np.sin(omega)
    t = t[:, None, None]
    safe = np.where(so < 1e-6, 1.0, so)
    curved = np.sin((1 - t) * omega) / safe * a + np.sin(t * omega) / safe * b
    return np.where(so < 1e-6, (1 - t) * a + t * b, curved)  # (T, rows, z_dim)


def interpolation(rng: np.random.Generator, rows: int, steps: int, z_dim: int,
                  truncation: float | None = None) -> np.ndarray:
    """``rows`` strips of ``steps`` latents each, row-major: (rows * steps, z_dim). With
    ``truncation`` the two ends of each strip are truncated noise; the slerp between them may
    leave the box |z| <= truncation by up to a factor 1 / cos(angle / 2) mid-path."""
    if steps < 2:
        raise ValueError(f"--interpolate needs at least 2 steps, got {steps}")
    a, b = normal(rng, rows, z_dim, truncation), normal(rng, rows, z_dim, truncation)
    path = slerp(a, b, np.linspace(0.0, 1.0, steps))  # (steps, rows, z_dim)
    return path.transpose(1, 0, 2).reshape(rows * steps, z_dim).astype(np.float32)


def draw(rng: np.random.Generator, n: int, z_dim: int, truncation: float | None = None,
         interpolate: int | None = None) -> np.ndarray:
    """What ``gantrain sample`` feeds a generator: ``n`` rows of ``interpolate`` slerp steps
    (between truncated ends with ``truncation``), or ``n`` plain (or truncated) latents."""
    if interpolate:
        return interpolation(rng, n, interpolate, z_dim, truncation)
    return normal(rng, n, z_dim, truncation)


def labels(rng: np.random.Generator, n: int, num_classes: int,
           label: int | None = None) -> np.ndarray | None:
    """Labels for a conditional generator: all ``label``, or cycling through the classes."""
    if not num_classes:
        if label is not None:
            raise ValueError("--class was given but this generator is not class-conditional")
        return None
    if label is None:
        return (np.arange(n) % num_classes).astype(np.int32)
    if not 0 <= label < num_classes:
        raise ValueError(f"--class must be in [0, {num_classes}), got {label}")
    return np.full(n, label, np.int32)
