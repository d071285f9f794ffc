"""Datasets by config name: ``[data] dataset = "mixture"`` plus the reader's ``args``.

Each builder returns a :class:`DataBundle`: the batch stream and what the rest of the run
needs to know about it (sample shape, classes, and for mixtures the mixture itself).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..config import ConfigError
from ..context import BatchSource
from ..imports import check_kwargs
from .mixtures import Mixture, MixtureSource, get_mixture


@dataclass
class DataBundle:
    source: BatchSource
    sample_shape: tuple[int, ...]
    num_classes: int = 0
    mixture: Mixture | None = None
    dataset: Any = None  # the ArrayDataset, for in-memory data


def _mixture(batch_size: int, seed: int, name: str = "grid") -> DataBundle:
    """``args = {name = "ring" | "grid"}``."""
    mixture = get_mixture(name)
    return DataBundle(MixtureSource(mixture, batch_size, seed), (2,), mixture=mixture)


BUILDERS: dict[str, Callable[..., DataBundle]] = {
    "mixture": _mixture,
}


def build_data(dataset: str, args: dict[str, Any], batch_size: int, seed: int) -> DataBundle:
    """Build the dataset named in the config; unknown names and arguments are ConfigErrors."""
    if dataset not in BUILDERS:
        raise ConfigError(f"data.dataset: unknown dataset {dataset!r}; choose one of "
                          f"{', '.join(sorted(BUILDERS))}")
    builder = BUILDERS[dataset]
    where = f"data.args ({dataset})"
    check_kwargs(builder, {"batch_size": batch_size, "seed": seed, **args}, where)
    return builder(batch_size, seed, **args)
