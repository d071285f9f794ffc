"""Batches from a dataset: whole-batch gathers by index, reshuffled every epoch.

Per docs/mindspore-notes.md, item 22, a batch-level source costs ~0.06 ms per batch where a
per-sample ``mindspore.dataset`` pipeline costs ~2 ms, so batches are cut straight from the
array (or, for a prepared dataset, gathered from its memory map and converted per batch). The
permutation of epoch ``e`` is drawn from ``(seed, e)``, so the loader's whole state is two ints.

Any dataset with ``len()``, ``sample_shape`` and ``gather(indices)`` works: an in-memory
``ArrayDataset`` or a memory-mapped ``PreparedImages``. ``next_indices()`` is the global batch
as row numbers; a data-parallel rank ``r`` of ``n`` can gather only its slice
(``indices[r::n]``) while every rank advances the same state.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .dataset import ArrayDataset
from .prepared import PreparedImages


class ArrayLoader:
    """Endless shuffled batches of ``(x,)`` or ``(x, y)``; the last partial batch is dropped."""

    def __init__(self, dataset: ArrayDataset | PreparedImages, batch_size: int,
                 seed: int = 0) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {batch_size}")
        if batch_size > len(dataset):
            raise ValueError(
                f"batch_size {batch_size} is larger than dataset {dataset.name!r} "
                f"({len(dataset)} samples)"
            )
        self.dataset, self.batch_size, self.seed = dataset, batch_size, seed
        self.epoch, self.position = 0, 0
        self._order = self._permutation(0)

    @property
    def sample_shape(self) -> tuple[int, ...]:
        return self.dataset.sample_shape

    def _permutation(self, epoch: int) -> np.ndarray:
        return np.random.default_rng([self.seed, epoch]).permutation(len(self.dataset))

    def next_indices(self) -> np.ndarray:
        """The next global batch as ascending row numbers; advances the state."""
        if self.position + self.batch_size > len(self.dataset):
            self.epoch, self.position = self.epoch + 1, 0
            self._order = self._permutation(self.epoch)
        idx = np.sort(self._order[self.position : self.position + self.batch_size])
        self.position += self.batch_size
        return idx

    def gather(self, indices: np.ndarray) -> tuple[np.ndarray, ...]:
        """``(x,)`` or ``(x, y)`` for rows ``indices``."""
        x = self.dataset.gather(indices)
        if self.dataset.y is None:
            return (x,)
        return x, self.dataset.y[indices]

    def next_batch(self) -> tuple[np.ndarray, ...]:
        return self.gather(self.next_indices())

    def state_dict(self) -> dict[str, Any]:
        return {"epoch": self.epoch, "position": self.position}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.epoch, self.position = int(state["epoch"]), int(state["position"])
        self._order = self._permutation(self.epoch)
