"""The in-memory dataset every reader returns and every loader consumes."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class ArrayDataset:
    """Samples held in memory as one array, with optional integer labels.

    ``x`` is float32: images are NCHW scaled to [-1, 1]; vector data is (N, D).
    ``y`` is int32 of shape (N,) or None; ``num_classes`` is 0 when unlabelled.
    """

    x: np.ndarray
    y: np.ndarray | None = None
    num_classes: int = 0
    name: str = ""

    def __post_init__(self) -> None:
        if self.x.dtype != np.float32:
            raise TypeError(f"dataset {self.name!r}: x must be float32, got {self.x.dtype}")
        if len(self.x) == 0:
            raise ValueError(f"dataset {self.name!r} is empty")
        if self.y is not None and self.y.shape != (len(self.x),):
            raise ValueError(
                f"dataset {self.name!r}: labels have shape {self.y.shape}, "
                f"expected ({len(self.x)},)"
            )

    def __len__(self) -> int:
        return len(self.x)

    @property
    def sample_shape(self) -> tuple[int, ...]:
        return tuple(self.x.shape[1:])

    def gather(self, indices: np.ndarray) -> np.ndarray:
        """Samples ``indices``, as every loader reads them (see ``PreparedImages.gather``)."""
        return self.x[indices]
