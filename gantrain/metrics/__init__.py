"""Metrics: numbers to compare runs and detect mode collapse. All take arrays (features,
samples or class probabilities), so any feature extractor can be plugged in."""

from .classes import class_report, inception_score
from .frechet import frechet_distance, gaussian_stats
from .kid import kernel_inception_distance
from .mixture import MixtureReport, mixture_report
from .prdc import density_coverage, prdc, precision_recall
from .seeds import over_seeds
from .stacked import stacked_mnist_report

__all__ = [
    "MixtureReport", "class_report", "density_coverage", "frechet_distance", "gaussian_stats",
    "inception_score", "kernel_inception_distance", "mixture_report", "over_seeds", "prdc",
    "precision_recall", "stacked_mnist_report",
]
