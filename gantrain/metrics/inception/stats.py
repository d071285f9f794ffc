"""Real-data Inception statistics computed once and cached as ``.npz``.

A file holds the Gaussian fit FID needs (``mu`` (2048,), ``sigma`` (2048, 2048), ``count``),
up to ``keep`` real feature rows for KID and precision/recall/density/coverage, and what they
were made with: the weights' source sha256, the dataset key and the preprocessing. Statistics
made with other weights or another preprocessing give a different FID, so loading them for a
mismatched evaluation is refused rather than silently mixed.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ...config.strict import ConfigError
from ..frechet import gaussian_stats

FORMAT = "gantrain-inception-stats-1"


@dataclass(frozen=True)
class RealStats:
    mu: np.ndarray
    sigma: np.ndarray
    count: int
    weights_sha256: str
    dataset: str
    preprocessing: dict[str, str]
    features: np.ndarray | None = None  # (k, 2048) float32 rows, k <= count


def make_stats(features: np.ndarray, weights_sha256: str, dataset: str,
               preprocessing: dict[str, str], keep: int = 10000,
               seed: int = 0) -> RealStats:
    """Statistics of (N, 2048) real features; ``keep`` random rows are stored as well."""
    mu, sigma = gaussian_stats(features)
    rows = None
    if keep > 0:
        pick = np.random.default_rng(seed).permutation(len(features))[:keep]
        rows = np.asarray(features, np.float32)[np.sort(pick)]
    return RealStats(mu, sigma, len(features), weights_sha256, dataset, preprocessing, rows)


def save_stats(stats: RealStats, path: str | Path) -> Path:
    """Write ``stats`` to ``path`` (a .npz) atomically."""
    path = Path(path)
    if path.suffix != ".npz":
        raise ConfigError(f"--out {str(path)!r} must end in .npz")
    meta = {"format": FORMAT, "count": stats.count, "weights_sha256": stats.weights_sha256,
            "dataset": stats.dataset, "preprocessing": stats.preprocessing}
    arrays = {"mu": stats.mu, "sigma": stats.sigma, "meta": np.array(json.dumps(meta))}
    if stats.features is not None:
        arrays["features"] = stats.features
    tmp = path.with_name(f".{path.stem}.tmp.npz")
    np.savez(tmp, **arrays)
    os.replace(tmp, path)
    return path


def load_stats(path: str | Path, weights_sha256: str,
               preprocessing: dict[str, str]) -> RealStats:
    """Read cached statistics; refuse them unless made with these weights and preprocessing."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"--ref {str(path)!r} does not exist (make it with `gantrain eval "
                          "stats DATASET --features inception --weights ... --out FILE.npz`)")
    try:
        with np.load(path, allow_pickle=False) as f:
            meta = json.loads(str(f["meta"]))
            mu, sigma = f["mu"], f["sigma"]
            features = f["features"] if "features" in f.files else None
    except (OSError, ValueError, KeyError) as e:
        raise ConfigError(f"--ref {str(path)!r} is not a gantrain statistics file: {e}") from None
    if meta.get("format") != FORMAT:
        raise ConfigError(f"--ref {str(path)!r} has format {meta.get('format')!r}, expected "
                          f"{FORMAT!r}")
    if meta["weights_sha256"] != weights_sha256:
        raise ConfigError(
            f"--ref {str(path)!r} was computed with Inception weights {meta['weights_sha256']}, "
            f"these features come from {weights_sha256}: FIDs across weights are not "
            "comparable; recompute the statistics with these --weights")
    if meta["preprocessing"] != preprocessing:
        raise ConfigError(
            f"--ref {str(path)!r} was computed with preprocessing {meta['preprocessing']}, this "
            f"evaluation uses {preprocessing}: recompute them or pass the matching --resize")
    return RealStats(mu, sigma, int(meta["count"]), meta["weights_sha256"], meta["dataset"],
                     meta["preprocessing"], features)
