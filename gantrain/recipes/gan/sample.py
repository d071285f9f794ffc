"""``gantrain sample`` and ``gantrain eval`` for GAN runs: the trained generator (EMA weights
by default) and what it draws from plain or truncated noise, interpolations or one class."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ...blocks import latents
from ...config.imports import build_cell
from ...engine.sampling import Sampler
from ..sampling import Drawn, SampleOptions, load_player_nets
from .config import GANConfig


@dataclass
class GANSampleOptions(SampleOptions):
    ema: bool = True  # the averaged weights, when the run kept them
    label: int | None = None  # one class of a conditional generator
    truncation: float | None = None  # resample noise entries with |z| above this
    interpolate: int | None = None  # rows of this many images along slerp paths


def load_generator(ckpt: Path, config: GANConfig, ema: bool = True) -> Sampler:
    """The run's generator in eval mode; its EMA weights when it kept them and ``ema``."""
    G = build_cell(config.generator.model, config.generator.args, "generator")
    load_player_nets(ckpt, "G", {"G": G}, ema=ema and config.gan.ema_decay is not None)
    return Sampler(G, config.gan.num_classes > 0)


def sample(ckpt: Path, config: GANConfig, options: GANSampleOptions) -> Drawn:
    generate = load_generator(ckpt, config, options.ema)
    rng = np.random.default_rng(options.seed)
    z = latents.draw(rng, options.n, config.gan.z_dim, options.truncation, options.interpolate)
    y = latents.labels(rng, len(z), config.gan.num_classes, options.label)
    samples = generate(z, y)
    images = samples if samples.ndim == 4 else None
    return Drawn(samples, f"{len(samples)} samples of shape {samples.shape[1:]}", images,
                 cols=options.interpolate or None)
