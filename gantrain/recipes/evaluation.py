"""What ``gantrain eval RUN`` hands a recipe's ``evaluate``: the options common to every recipe
that scores its runs. A recipe refuses, with a ConfigError, an option it cannot honour."""

from __future__ import annotations

from dataclasses import dataclass

from ..metrics.report import METRICS


@dataclass
class EvalOptions:
    classifier: str | None = None  # feature classifier folder (image runs)
    n: int = 10000  # generated samples
    metrics: tuple[str, ...] = METRICS[:4]
    ema: bool = True  # the averaged weights, when the run kept them
    seed: int = 0
    drs: float | None = None  # GAN: discriminator rejection sampling percentile
    dot: int | None = None  # GAN: discriminator optimal transport steps
