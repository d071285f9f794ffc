"""Stacked MNIST (Srivastava et al. 2017, VEEGAN; Metz et al. 2017): three digits stacked as
the channels of one image, 1,000 modes."""

from __future__ import annotations

import numpy as np

_PLACE = np.array([100, 10, 1])  # mode = 100 * d0 + 10 * d1 + d2


def stack_digits(
    images: np.ndarray, labels: np.ndarray, n: int, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """Build ``n`` Stacked MNIST images from single-channel digits.

    ``images`` (N, 1, H, W) float, ``labels`` (N,) digits 0-9. Each output picks three digit
    images independently and uniformly with replacement (``np.random.default_rng(seed)``) and
    puts them in channels 0, 1, 2. Returns x (n, 3, H, W) with the dtype of ``images`` and
    modes (n,) int64 = 100 * label0 + 10 * label1 + label2.
    """
    imgs = np.asarray(images)
    if imgs.ndim != 4 or imgs.shape[1] != 1 or imgs.shape[0] < 1:
        raise ValueError(f"images must have shape (N, 1, H, W) with N >= 1, got {imgs.shape}")
    lab = np.asarray(labels)
    if lab.shape != (imgs.shape[0],):
        raise ValueError(f"labels must have shape ({imgs.shape[0]},) to match images, "
                         f"got shape {lab.shape}")
    if not np.issubdtype(lab.dtype, np.integer) or lab.min() < 0 or lab.max() > 9:
        raise ValueError(f"labels (shape {lab.shape}, dtype {lab.dtype}) must be integer "
                         "digits in 0..9")
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    idx = np.random.default_rng(seed).integers(0, imgs.shape[0], size=(n, 3))
    x = imgs[idx, 0]  # (n, 3, H, W): channel c is digit image idx[:, c]
    modes = lab[idx].astype(np.int64) @ _PLACE
    return x, modes
