"""Image output: grids of samples, per-sample PNGs, the training-progress GIF."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from PIL import Image


def to_uint8(images: np.ndarray) -> np.ndarray:
    """NCHW floats in [-1, 1] -> NHWC uint8 (C = 1 or 3); values outside are clipped."""
    if images.ndim != 4 or images.shape[1] not in (1, 3):
        raise ValueError(f"expected images of shape (N, 1|3, H, W), got {images.shape}")
    x = np.clip((np.asarray(images, np.float32) + 1.0) * 127.5 + 0.5, 0, 255).astype(np.uint8)
    return x.transpose(0, 2, 3, 1)


def grid(images: np.ndarray, cols: int | None = None, pad: int = 2) -> Image.Image:
    """Tile NCHW images in [-1, 1] into one picture (``cols`` per row, square by default)."""
    x = to_uint8(images)
    n, h, w, c = x.shape
    cols = cols or math.ceil(math.sqrt(n))
    rows = math.ceil(n / cols)
    canvas = np.zeros((rows * (h + pad) + pad, cols * (w + pad) + pad, c), np.uint8)
    for i in range(n):
        r, k = divmod(i, cols)
        top, left = pad + r * (h + pad), pad + k * (w + pad)
        canvas[top : top + h, left : left + w] = x[i]
    return Image.fromarray(canvas[..., 0] if c == 1 else canvas)


def save_grid(path: str | Path, images: np.ndarray, cols: int | None = None,
              scale: int = 1) -> Path:
    """Write a grid PNG; ``scale`` enlarges small images with nearest-neighbour pixels."""
    img = grid(images, cols)
    if scale > 1:
        img = img.resize((img.width * scale, img.height * scale), Image.NEAREST)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    img.save(path)
    return path


def save_images(folder: str | Path, images: np.ndarray, prefix: str = "sample") -> list[Path]:
    """Write one PNG per image: ``folder/sample_00000.png`` ..."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for i, arr in enumerate(to_uint8(images)):
        p = folder / f"{prefix}_{i:05d}.png"
        Image.fromarray(arr[..., 0] if arr.shape[-1] == 1 else arr).save(p)
        paths.append(p)
    return paths


def save_gif(path: str | Path, frames: Sequence[str | Path], duration_ms: int = 300) -> Path | None:
    """Animate PNG files in order (the last frame held longer); None when there are none."""
    if not frames:
        return None
    images = [Image.open(f).convert("RGB") for f in frames]
    durations = [duration_ms] * (len(images) - 1) + [duration_ms * 5]
    path = Path(path)
    images[0].save(path, save_all=True, append_images=images[1:], duration=durations, loop=0)
    return path


def finish_grids(folder: str | Path, pattern: str = "step_*.png", final: str = "final.png",
                 gif: str | None = "progress.gif") -> None:
    """At the end of a run: copy the newest grid matching ``pattern`` in ``folder`` to
    ``final`` and, unless ``gif`` is None, animate all of them, in order, into ``gif``."""
    import shutil

    folder = Path(folder)
    frames = sorted(folder.glob(pattern))
    if frames:
        shutil.copyfile(frames[-1], folder / final)
        if gif is not None:
            save_gif(folder / gif, frames)
