"""2D Gaussian mixtures: the ring and grid benchmarks for mode collapse.

Protocol of PacGAN (Lin et al. 2018, Sec. 5.1 and Table 1, following VEEGAN): ``ring`` is 8
Gaussians evenly spaced on a circle of radius 1 with std 0.01; ``grid`` is 25 Gaussians at
(-4 + 2i, -4 + 2j), i, j in 0..4, with std 0.05. Samples are drawn on the fly from a seed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Mixture:
    """Equal-weight isotropic Gaussians at ``means`` (K, 2) with standard deviation ``std``."""

    name: str
    means: np.ndarray
    std: float

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        k = rng.integers(0, len(self.means), size=n)
        noise = rng.standard_normal((n, 2)) * self.std
        return (self.means[k] + noise).astype(np.float32)


def ring(n_modes: int = 8, radius: float = 1.0, std: float = 0.01) -> Mixture:
    angles = 2 * np.pi * np.arange(n_modes) / n_modes
    means = radius * np.stack([np.cos(angles), np.sin(angles)], axis=1)
    return Mixture("ring", means, std)


def grid(side: int = 5, spacing: float = 2.0, std: float = 0.05) -> Mixture:
    coords = (np.arange(side) - (side - 1) / 2) * spacing
    means = np.array([(x, y) for x in coords for y in coords], dtype=np.float64)
    return Mixture("grid", means, std)


MIXTURES = {"ring": ring, "grid": grid}


def get_mixture(name: str) -> Mixture:
    if name not in MIXTURES:
        raise ValueError(f"unknown mixture {name!r}; choose one of {sorted(MIXTURES)}")
    return MIXTURES[name]()


class MixtureSource:
    """Endless batches from a mixture, drawn from its own seeded Generator (state saved)."""

    def __init__(self, mixture: Mixture, batch_size: int, seed: int = 0) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        self.mixture, self.batch_size = mixture, batch_size
        self.rng = np.random.default_rng(seed)

    @property
    def sample_shape(self) -> tuple[int, ...]:
        return (2,)

    def next_batch(self) -> tuple[np.ndarray, ...]:
        return (self.mixture.sample(self.rng, self.batch_size),)

    def state_dict(self) -> dict[str, Any]:
        return {"rng": self.rng.bit_generator.state}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.rng.bit_generator.state = state["rng"]
