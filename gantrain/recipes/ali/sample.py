"""``gantrain sample`` for ALI / BiGAN runs: samples from the prior and reconstructions
``x | G(E(x))`` of the run's own data, with the reconstruction error beside chance level."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ...blocks import latents
from ...data.registry import build_data
from ..sampling import Drawn, SampleOptions, load_player_nets
from .config import ALIConfig
from .run import (
    RECON_COLS,
    Autoencoder,
    build_nets,
    real_examples,
    reconstruction_errors,
    reconstruction_rows,
)


@dataclass
class ALISampleOptions(SampleOptions):
    ema: bool = True  # the averaged weights, when the run kept them
    truncation: float | None = None  # resample noise entries with |z| above this
    interpolate: int | None = None  # rows of this many images along slerp paths


def sample(ckpt: Path, config: ALIConfig, options: ALISampleOptions) -> Drawn:
    G, E, _ = build_nets(config)
    load_player_nets(ckpt, "GE", {"G": G, "E": E},
                     ema=options.ema and config.gan.ema_decay is not None)
    auto = Autoencoder(G, E, config.gan.z_dim)
    rng = np.random.default_rng(options.seed)
    z = latents.draw(rng, options.n, config.gan.z_dim, options.truncation, options.interpolate)
    samples = auto.samples(z)
    c = config
    data = build_data(c.data.dataset, c.data.args, c.data.batch_size, c.seed)
    x = real_examples(data, max(options.n, RECON_COLS), options.seed)
    rec = auto.reconstruct(x)
    errors = reconstruction_errors(x, rec)
    summary = (f"{len(samples)} samples of shape {samples.shape[1:]} and {len(x)} "
               f"reconstructions (x | G(E(x)), mse {errors['recon_mse']:.4f}, another example's "
               f"{errors['recon_mse_shuffled']:.4f})")
    if samples.ndim == 4:
        return Drawn(samples, summary, images=samples, cols=options.interpolate or None,
                     extra_grids={"recon": (reconstruction_rows(x, rec), RECON_COLS)})
    # (N, 2, ...): x and G(E(x))
    return Drawn(samples, summary, extra={"recon": np.stack([x, rec], axis=1)})
