"""Unpaired two-domain image data for CycleGAN: folders in the ``trainA/ trainB/ testA/ testB/``
layout of the paper's datasets (horse2zebra, monet2photo...) and an offline pair of digit styles.

The stream yields ``(a, b)`` batches cut by two independently shuffled loaders, so an ``a`` and
the ``b`` next to it have nothing to do with each other (unpaired). Labels are dropped.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .dataset import ArrayDataset
from .errors import DatasetError
from .loader import ArrayLoader

FOLDERS = ("trainA", "trainB", "testA", "testB")


@dataclass(frozen=True)
class UnpairedData:
    """Train and test images of both domains, each (N, C, H, W) float32 in [-1, 1]."""

    train_a: np.ndarray
    train_b: np.ndarray
    test_a: np.ndarray
    test_b: np.ndarray

    def __post_init__(self) -> None:
        shapes = {name: getattr(self, name).shape[1:] for name in
                  ("train_a", "train_b", "test_a", "test_b")}
        if len(set(shapes.values())) != 1:
            raise DatasetError(f"unpaired data: every split needs one image shape, got {shapes}")

    @property
    def sample_shape(self) -> tuple[int, ...]:
        return tuple(self.train_a.shape[1:])


class UnpairedSource:
    """Endless ``(a, b)`` batches from two independently shuffled loaders."""

    def __init__(self, data: UnpairedData, batch_size: int, seed: int = 0) -> None:
        self.a = ArrayLoader(ArrayDataset(data.train_a, name="trainA"), batch_size, seed)
        self.b = ArrayLoader(ArrayDataset(data.train_b, name="trainB"), batch_size, seed + 1)

    def next_batch(self) -> tuple[np.ndarray, np.ndarray]:
        return self.a.next_batch()[0], self.b.next_batch()[0]

    def state_dict(self) -> dict[str, Any]:
        return {"a": self.a.state_dict(), "b": self.b.state_dict()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.a.load_state_dict(state["a"])
        self.b.load_state_dict(state["b"])


def unpaired_folder(root: str | os.PathLike, size: int = 256, channels: int = 3) -> UnpairedData:
    """Read ``root/trainA``, ``root/trainB`` and, when present, ``testA``/``testB`` (without
    them the test images are the training images). Images are resized and centre-cropped to
    ``size`` like :func:`gantrain.data.folder.image_folder`."""
    from .folder import image_folder

    root = Path(root)
    if not root.is_dir():
        raise DatasetError(f"unpaired folder {root} does not exist (expected {', '.join(FOLDERS)} "
                           "inside it)")
    for name in ("trainA", "trainB"):
        if not (root / name).is_dir():
            raise DatasetError(f"unpaired folder {root}: missing {root / name} (expected the "
                               f"layout {'/, '.join(FOLDERS)}/)")
    read = {}
    for name in FOLDERS:
        if (root / name).is_dir():
            read[name] = image_folder(root / name, size=size, channels=channels,
                                      labelled=False).x
    test_a = read.get("testA", read["trainA"])
    test_b = read.get("testB", read["trainB"])
    return UnpairedData(read["trainA"], read["trainB"], test_a, test_b)


# -- the offline default: embedded digits in two styles --------------------------------------


def thicken(x: np.ndarray, radius: int = 1) -> np.ndarray:
    """Grey dilation: every pixel takes the max over its (2r+1)^2 neighbourhood."""
    pad = np.pad(x, ((0, 0), (0, 0), (radius, radius), (radius, radius)), constant_values=-1.0)
    h, w = x.shape[2:]
    out = np.full_like(x, -1.0)
    for dy in range(2 * radius + 1):
        for dx in range(2 * radius + 1):
            np.maximum(out, pad[:, :, dy : dy + h, dx : dx + w], out=out)
    return out


def slant(x: np.ndarray, shear: float = 0.35) -> np.ndarray:
    """Italicize: shift each row right by ``shear`` pixels per row above the centre
    (linear interpolation, background -1 shifted in)."""
    n, c, h, w = x.shape
    out = np.empty_like(x)
    cols = np.arange(w, dtype=np.float32)
    for r in range(h):
        src = cols - shear * ((h - 1) / 2 - r)  # top rows move right
        lo = np.floor(src).astype(int)
        frac = (src - lo).astype(np.float32)
        left = np.where((lo >= 0) & (lo < w), x[:, :, r, np.clip(lo, 0, w - 1)], -1.0)
        right = np.where((lo + 1 >= 0) & (lo + 1 < w), x[:, :, r, np.clip(lo + 1, 0, w - 1)],
                         -1.0)
        out[:, :, r] = (1 - frac) * left + frac * right
    return out


def style_b(x: np.ndarray) -> np.ndarray:
    """Domain B of ``digit_styles``: thick, slanted, dark ink on a light background."""
    return -slant(thicken(x)).astype(np.float32)


def digit_styles(n: int = 10000, size: int = 28, test: int = 256, seed: int = 0) -> UnpairedData:
    """Embedded digits as domain A (plain: thin white strokes on black) and B (:func:`style_b`).

    A and B are rendered from different seeds, so they hold different digits; no download.
    """
    from .digits import embedded_digits

    if n < 1 or test < 1:
        raise DatasetError(f"digit_styles: n and test must be >= 1, got n={n}, test={test}")
    base = np.random.default_rng(seed).integers(0, 2**31, 4)
    a, b, ta, tb = (embedded_digits(k, size, int(s)).x for k, s in zip((n, n, test, test), base))
    return UnpairedData(a, style_b(b), ta, style_b(tb))
