"""Metrics: numbers to compare runs and detect mode collapse."""

from .mixture import MixtureReport, mixture_report

__all__ = ["MixtureReport", "mixture_report"]
