"""A large uint8 ``.npy`` image array read through a memory map instead of loaded whole.

``load_array`` turns an array into float32 in memory, 4 bytes per pixel. For a ``.npy`` of
uint8 images whose float32 form would exceed :data:`IN_MEMORY_LIMIT`, the registry maps the
file instead and converts each gathered batch, exactly as ``load_array`` converts the whole
(``x / 127.5 - 1``), so the choice changes memory, not values. It is made automatically by
size and stated in the log.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from .arrays import CHANNELS
from .errors import DatasetError
from .prepared import _ImageView

IN_MEMORY_LIMIT = 1 << 30  # bytes of float32 above which a uint8 .npy is mapped, not loaded


class MappedImages:
    """uint8 (N, H, W), (N, C, H, W) or (N, H, W, C) images in a ``.npy``, gathered per batch
    as float32 NCHW in [-1, 1]; unlabelled."""

    y = None
    num_classes = 0

    def __init__(self, path: str | os.PathLike) -> None:
        self.folder = Path(path)
        self.name = self.folder.stem
        try:
            self.pixels = np.load(self.folder, mmap_mode="r", allow_pickle=False)
        except (OSError, ValueError) as exc:
            raise DatasetError(f"{path}: not a readable .npy file: {exc}") from exc
        shape = self.pixels.shape
        if self.pixels.dtype != np.uint8 or self.pixels.ndim not in (3, 4):
            raise DatasetError(f"{path}: mapping needs uint8 images, got {self.pixels.dtype} "
                               f"{shape}")
        if self.pixels.ndim == 3:
            self.layout = "NHW"
        elif shape[1] in CHANNELS:
            self.layout = "NCHW"
        elif shape[3] in CHANNELS:
            self.layout = "NHWC"
        else:
            raise DatasetError(f"{path}: images have shape {shape}, expected (N, H, W), "
                               "(N, C, H, W) or (N, H, W, C) with C in {1, 3}")
        self.x = _ImageView(self)

    def __len__(self) -> int:
        return len(self.pixels)

    @property
    def sample_shape(self) -> tuple[int, ...]:
        shape = self.pixels.shape[1:]
        if self.layout == "NHW":
            return (1, *shape)
        return shape if self.layout == "NCHW" else (shape[2], shape[0], shape[1])

    @property
    def nbytes(self) -> int:
        return self.pixels.size

    def gather(self, indices: np.ndarray) -> np.ndarray:
        rows = self.pixels[np.asarray(indices, dtype=np.int64)]
        if self.layout == "NHW":
            rows = rows[:, None]
        elif self.layout == "NHWC":
            rows = rows.transpose(0, 3, 1, 2)
        return rows.astype(np.float32) / np.float32(127.5) - np.float32(1.0)


def worth_mapping(path: str | os.PathLike, key: str | None, labels_key: str | None,
                  size: object) -> bool:
    """True for a uint8 ``.npy`` (no key, no labels, no resize) too big to hold as float32."""
    path = Path(path)
    if path.suffix != ".npy" or key or labels_key or size is not None or not path.is_file():
        return False
    try:
        array = np.load(path, mmap_mode="r", allow_pickle=False)
    except (OSError, ValueError):
        return False  # load_array reports it
    return array.dtype == np.uint8 and array.size * 4 > IN_MEMORY_LIMIT
