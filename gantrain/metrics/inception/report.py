"""Paper-comparable scores of generated images on FID-Inception features: FID, IS (10 splits),
KID and precision/recall/density/coverage, against cached or freshly computed real statistics."""

from __future__ import annotations

from typing import Any

import numpy as np

from ...config.strict import ConfigError
from ..frechet import frechet_from_stats, gaussian_stats
from ..kid import kernel_inception_distance
from ..prdc import prdc
from .score import inception_score, unbiased_logits
from .stats import RealStats

METRICS = ("fid", "is", "kid", "prdc")


def check_metrics(metrics: tuple[str, ...]) -> tuple[str, ...]:
    unknown = [m for m in metrics if m not in METRICS]
    if unknown:
        raise ConfigError(f"unknown Inception metrics {unknown}; choose from {', '.join(METRICS)}")
    return metrics


def inception_report(fake_pool3: np.ndarray, fc_weight: np.ndarray, real: RealStats,
                     metrics: tuple[str, ...] = METRICS, seed: int = 0) -> dict[str, Any]:
    """{"fid", "is", "is_std", "kid", "kid_std", "precision", ...} of the generated features.

    FID uses the real Gaussian fit over all ``real.count`` images; KID and PRDC use the stored
    real feature rows and are left out (with a note) when the statistics kept none.
    """
    check_metrics(metrics)
    out: dict[str, Any] = {}
    if "fid" in metrics:
        out["fid"] = frechet_from_stats(*gaussian_stats(fake_pool3), real.mu, real.sigma)
    if "is" in metrics:
        out["is"], out["is_std"] = inception_score(unbiased_logits(fake_pool3, fc_weight))
    needs_rows = [m for m in ("kid", "prdc") if m in metrics]
    if needs_rows and real.features is None:
        out["note"] = (f"{'/'.join(needs_rows)} skipped: the real statistics keep no feature "
                       "rows (make them with --keep > 0)")
        return out
    if "kid" in metrics:
        out["kid"], out["kid_std"] = kernel_inception_distance(real.features, fake_pool3,
                                                               seed=seed)
    if "prdc" in metrics:
        out.update(prdc(real.features, fake_pool3))
    return out


def format_inception(report: dict[str, Any]) -> str:
    gen = report["generated"]
    lines = [f"{'metric':<12}{'value':>12}"]
    for key in ("fid", "is", "is_std", "kid", "kid_std", "precision", "recall", "density",
                "coverage"):
        if key in gen:
            lines.append(f"{key:<12}{gen[key]:>12.4f}")
    if "note" in gen:
        lines.append(gen["note"])
    weights = report["weights"]
    if not weights["reference"]:
        lines.append("WARNING: not the reference Inception weights; not comparable with papers")
    return "\n".join(lines)
