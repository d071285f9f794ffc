"""Input checks shared by the feature-based metrics."""

from __future__ import annotations

import numpy as np


def as_features(name: str, feats: np.ndarray, min_rows: int = 2) -> np.ndarray:
    """Return ``feats`` as a finite float64 (N, D) array with N >= ``min_rows``."""
    x = np.asarray(feats, dtype=np.float64)
    if x.ndim != 2:
        raise ValueError(f"{name} must be a 2-D (N, D) feature array, got shape {x.shape}")
    if x.shape[0] < min_rows or x.shape[1] < 1:
        raise ValueError(
            f"{name} must have at least {min_rows} rows and 1 column, got shape {x.shape}"
        )
    if not np.isfinite(x).all():
        raise ValueError(f"{name} (shape {x.shape}) contains NaN or inf")
    return x
