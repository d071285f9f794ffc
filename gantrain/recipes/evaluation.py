"""What ``gantrain eval RUN`` hands a recipe's ``evaluate`` (the options common to every recipe
that scores its runs; a recipe refuses, with a ConfigError, an option it cannot honour), and
how every recipe scores generated samples."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..config.strict import ConfigError
from ..data.registry import DataBundle
from ..metrics.classifier import FeatureExtractor, load_classifier
from ..metrics.mixture import mixture_report
from ..metrics.report import METRICS, evaluate_samples, format_report


@dataclass
class EvalOptions:
    classifier: str | None = None  # feature classifier folder (image runs)
    n: int = 10000  # generated samples
    metrics: tuple[str, ...] = METRICS[:4]
    ema: bool = True  # the averaged weights, when the run kept them
    seed: int = 0
    drs: float | None = None  # GAN: discriminator rejection sampling percentile
    dot: int | None = None  # GAN: discriminator optimal transport steps
    mh: int | None = None  # GAN: Metropolis-Hastings chain length
    truncation: float | None = None  # GAN, ALI: redraw noise entries with |z| above this


def score_samples(fake: np.ndarray, data: DataBundle, classifier: str | Path | None,
                  metrics: tuple[str, ...], seed: int
                  ) -> tuple[dict[str, Any], str, FeatureExtractor | None]:
    """The report on generated samples, its printable table and the classifier used: mode
    coverage for a 2D mixture; for images the classifier metrics beside the real-vs-real
    baseline (``classifier`` required)."""
    if data.mixture is not None:
        mixture = mixture_report(fake, data.mixture)
        return {"samples": len(fake), "mixture": mixture.as_dict()}, str(mixture), None
    if classifier is None:
        raise ConfigError("image metrics need --classifier (train one with `gantrain eval "
                          "train-classifier --data digits --out classifiers/digits`)")
    extractor, meta = load_classifier(classifier)
    report = evaluate_samples(fake, data.dataset, extractor, metrics, seed)
    report["classifier"] = {"path": str(classifier), "test_accuracy": meta["test_accuracy"]}
    return report, format_report(report), extractor
