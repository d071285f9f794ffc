"""Image metrics of generated against real samples on an extractor's features, each beside the
real-vs-real baseline: Frechet distance, KID, precision/recall, density/coverage, class coverage
and the Stacked MNIST mode count."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..config.strict import ConfigError
from ..data.dataset import ArrayDataset
from .classifier import FeatureExtractor

METRICS = ("fd", "kid", "prdc", "classes", "stacked")


def quality_report(real_feats: np.ndarray, fake_feats: np.ndarray, fake_probs: np.ndarray,
                   metrics: tuple[str, ...], data_class_freq: np.ndarray | None) -> dict:
    """Every requested metric of ``fake`` against ``real`` features."""
    from .classes import class_report
    from .frechet import frechet_distance
    from .kid import kernel_inception_distance
    from .prdc import prdc

    out: dict[str, Any] = {}
    if "fd" in metrics:
        out["fd"] = frechet_distance(real_feats, fake_feats)
    if "kid" in metrics:
        mean, std = kernel_inception_distance(real_feats, fake_feats)
        out["kid"], out["kid_std"] = mean, std
    if "prdc" in metrics:
        out.update(prdc(real_feats, fake_feats))
    if "classes" in metrics:
        out["classes"] = class_report(fake_probs, data_class_freq)
    return out


def stacked_report(images: np.ndarray, extractor: FeatureExtractor,
                   threshold: float = 0.0) -> dict[str, Any]:
    """Stacked MNIST modes: each channel of (N, 3, H, W) images classified as a digit; a
    sample counts when all three channels' confidence reaches ``threshold``."""
    from .stacked import stacked_mnist_report

    probs = [extractor(images[:, c : c + 1])[1] for c in range(3)]
    digits = np.stack([p.argmax(1) for p in probs], axis=1)
    confident = np.stack([p.max(1) for p in probs], axis=1).min(1) >= threshold
    report = stacked_mnist_report(digits, confident)
    report.pop("histogram", None)
    report["confidence_threshold"] = threshold
    return report


def real_threshold(real: np.ndarray, extractor: FeatureExtractor) -> float:
    """The confidence threshold from real stacked digits (every channel of ``real``)."""
    from .stacked import confidence_threshold

    conf = [extractor(real[:, c : c + 1])[1].max(1) for c in range(real.shape[1])]
    return confidence_threshold(np.concatenate(conf))


def evaluate_samples(fake: np.ndarray, real: ArrayDataset, extractor: FeatureExtractor,
                     metrics: tuple[str, ...] = METRICS[:4], seed: int = 0) -> dict[str, Any]:
    """Metrics of generated images against real ones, beside the real-vs-real baseline.

    The baseline compares two disjoint halves of the real data, each as large as the smaller
    of ``len(fake)`` and half the dataset, so a reader can tell what a perfect generator scores.
    ``stacked`` classifies each channel of 3-channel Stacked MNIST images with a digit
    classifier and counts the 1000 modes.
    """
    unknown = [m for m in metrics if m not in METRICS]
    if unknown:
        raise ConfigError(f"unknown metrics {unknown}; choose from {', '.join(METRICS)}")
    needed = 1 if "stacked" in metrics else fake.shape[1]
    if extractor.channels != needed or ("stacked" in metrics and fake.shape[1] != 3):
        raise ConfigError(
            f"the classifier takes {extractor.channels}-channel images; these metrics need "
            f"{needed} for {fake.shape[1]}-channel samples (the stacked metric needs 3-channel "
            "samples and a digit classifier)")
    report: dict[str, Any] = {"samples": len(fake), "generated": {}, "real_vs_real": {}}
    if "stacked" in metrics:
        # threshold from one half of the real images, the baseline row scored on the other
        half = min(len(fake), len(real) // 2)
        threshold = real_threshold(real.x[half : 2 * half], extractor)
        report["generated"]["stacked"] = stacked_report(fake, extractor, threshold)
        report["real_vs_real"]["stacked"] = stacked_report(real.x[:half], extractor, threshold)
    feature_metrics = tuple(m for m in metrics if m != "stacked")
    if not feature_metrics:
        return report
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(real))
    half = min(len(fake), len(real) // 2)
    a, b = order[:half], order[half : 2 * half]
    real_a, _ = extractor(real.x[a])
    real_b, probs_b = extractor(real.x[b])
    fake_feats, fake_probs = extractor(fake)
    freq = None
    if real.y is not None and real.num_classes:
        freq = np.bincount(real.y, minlength=real.num_classes) / len(real.y)
    report["real_samples"] = int(half)
    report["generated"].update(
        quality_report(real_a, fake_feats, fake_probs, feature_metrics, freq))
    report["real_vs_real"].update(
        quality_report(real_a, real_b, probs_b, feature_metrics, freq))
    return report


def format_report(report: dict[str, Any]) -> str:
    gen, base = report["generated"], report["real_vs_real"]
    lines = [f"{'metric':<20}{'generated':>12}{'real vs real':>14}"]
    for key in ("fd", "kid", "precision", "recall", "density", "coverage"):
        if key in gen:
            lines.append(f"{key:<20}{gen[key]:>12.4f}{base[key]:>14.4f}")
    if "stacked" in gen:
        for key in ("modes", "kl", "confident"):
            lines.append(f"{'stacked ' + key:<20}{gen['stacked'][key]:>12.3f}"
                         f"{base['stacked'][key]:>14.3f}")
    if "classes" in gen:
        g, b = gen["classes"], base["classes"]
        for key in ("classes_covered", "kl", "inception_score"):
            if key in g:
                lines.append(f"{key:<20}{g[key]:>12.4f}{b[key]:>14.4f}")
    return "\n".join(lines)


def plain(obj: Any) -> Any:
    """numpy values in reports -> JSON."""
    return obj.tolist() if isinstance(obj, (np.ndarray, np.generic)) else str(obj)
