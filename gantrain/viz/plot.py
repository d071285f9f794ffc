"""Pictures drawn with Pillow only (no plotting dependency)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw


def scatter_png(
    path: str | Path,
    samples: np.ndarray,
    modes: np.ndarray | None = None,
    size: int = 512,
    margin: float = 0.15,
) -> Path:
    """Scatter plot of 2D ``samples`` (blue) over the true ``modes`` (red crosses)."""
    pts = np.asarray(samples, dtype=np.float64)
    pts = pts[np.isfinite(pts).all(axis=1)]
    ref = modes if modes is not None and len(modes) else pts
    lo, hi = ref.min(axis=0), ref.max(axis=0)
    span = np.maximum(hi - lo, 1e-6).max()
    center = (lo + hi) / 2
    half = span * (0.5 + margin)

    def to_px(p: np.ndarray) -> np.ndarray:
        u = (p - center + half) / (2 * half)
        return np.stack([u[:, 0] * (size - 1), (1 - u[:, 1]) * (size - 1)], axis=1)

    img = Image.new("RGB", (size, size), "white")
    draw = ImageDraw.Draw(img)
    for x, y in to_px(pts):
        if 0 <= x < size and 0 <= y < size:
            draw.ellipse((x - 1, y - 1, x + 1, y + 1), fill=(40, 90, 200))
    if modes is not None:
        for x, y in to_px(np.asarray(modes, dtype=np.float64)):
            draw.line((x - 5, y, x + 5, y), fill=(220, 30, 30), width=2)
            draw.line((x, y - 5, x, y + 5), fill=(220, 30, 30), width=2)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    img.save(path)
    return path
