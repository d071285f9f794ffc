"""The ALI / BiGAN run (``task = "ali"``): data, G, E and joint D, samples and reconstructions.

Evaluation draws samples from fixed noise (2D mixtures: the PacGAN/VEEGAN mode-coverage report
and a scatter plot; images: a sample grid) and reconstructs fixed examples the run does not
train on (:mod:`.examples`) through ``x -> E -> G`` (images: a grid whose odd rows are x and
even rows G(E(x))). The reconstruction error is logged next to the error of pairing each x with
another example's reconstruction, the level a G(E(x)) that ignored x would reach, and with where
the examples come from (``eval/recon_examples``). A stochastic encoder reconstructs from its
mean.
"""

from __future__ import annotations

from contextlib import nullcontext
from pathlib import Path
from typing import Any

import numpy as np

from ...blocks.losses import get_loss
from ...config.builders import (
    optimizer_from_config,
    penalty_from_config,
    transforms_from_config,
    weight_clip,
)
from ...config.strict import ConfigError
from ...data.mixtures import Mixture
from ...data.registry import DataBundle, build_data
from ...engine.ema import EMA
from ...engine.loop import Loop
from ...engine.sampling import Sampler
from ..base import Run
from ..shapes import build_latent_net
from .build import ALI, build_ali, check_ali_shapes
from .config import ALIConfig
from .examples import evaluation_examples

RECON_ROWS = 4  # pairs of rows (x, G(E(x))) in a reconstruction grid
RECON_COLS = 8


def build_discriminator(config: ALIConfig) -> Any:
    """The joint D from the [discriminator] section."""
    return build_latent_net(config.gan.z_dim, "discriminator", config.discriminator)


def build_nets(config: ALIConfig) -> tuple[Any, Any, Any]:
    """G, E and D from the [generator], [encoder] and [discriminator] sections."""
    z_dim = config.gan.z_dim
    return (build_latent_net(z_dim, "generator", config.generator),
            build_latent_net(z_dim, "encoder", config.encoder), build_discriminator(config))


class Autoencoder:
    """``G(E(x))`` and ``G(z)`` through eval-mode graphs (BatchNorm uses running statistics)."""

    def __init__(self, G, E, z_dim: int, ema: EMA | None = None) -> None:
        self.generate, self.encoder = Sampler(G), Sampler(E)
        self.z_dim, self.ema = z_dim, ema

    def _weights(self):
        return self.ema.swapped_in() if self.ema is not None else nullcontext()

    def samples(self, z: np.ndarray) -> np.ndarray:
        with self._weights():
            return self.generate(z)

    def reconstruct(self, x: np.ndarray) -> np.ndarray:
        """G(E(x)); a stochastic encoder's mean is used as z (the first z_dim outputs)."""
        with self._weights():
            return self.generate(self.encoder(x)[:, : self.z_dim])


def reconstruction_errors(x: np.ndarray, rec: np.ndarray,
                          mixture: Mixture | None = None) -> dict[str, float]:
    """Mean squared error of G(E(x)) against x, and against another example (shifted by one):
    the chance level of a reconstruction that ignores its input. Examples of a 2D ``mixture``
    also get ``mode_match``, the share of reconstructions in their input's mode."""
    axes = tuple(range(1, x.ndim))
    err = ((rec - x) ** 2).mean(axis=axes)
    other = ((rec - np.roll(x, 1, axis=0)) ** 2).mean(axis=axes)
    out = {"recon_mse": float(err.mean()), "recon_mse_shuffled": float(other.mean())}
    if mixture is not None:
        from ...metrics.mixture import mode_match

        out["mode_match"] = mode_match(x, rec, mixture)
    return out


def reconstruction_rows(x: np.ndarray, rec: np.ndarray, cols: int = RECON_COLS) -> np.ndarray:
    """Images for a grid of ``cols`` columns: rows of real images, each followed by a row of
    their reconstructions."""
    rows = len(x) // cols
    x, rec = x[: rows * cols], rec[: rows * cols]
    pairs = np.stack([x.reshape(rows, cols, *x.shape[1:]), rec.reshape(rows, cols, *x.shape[1:])],
                     axis=1)
    return pairs.reshape(-1, *x.shape[1:])


def save_reconstructions(path: Path, x: np.ndarray, rec: np.ndarray,
                         cols: int = RECON_COLS) -> Path:
    """A grid of rows of real images, each followed by their reconstructions."""
    from ...viz.images import save_grid

    return save_grid(path, reconstruction_rows(x, rec, cols), cols, scale=2)


class ALIRun(Run):
    """An ALI / BiGAN training run (``task = "ali"``)."""

    config: ALIConfig
    data_parallel = True

    def build(self) -> None:
        c = self.config
        self.data: DataBundle = build_data(c.data.dataset, c.data.args, c.data.batch_size, c.seed)
        G, E, D = build_nets(c)
        stochastic = bool(getattr(E, "stochastic", False))
        check_ali_shapes(G, E, D, z_dim=c.gan.z_dim, sample_shape=self.data.sample_shape,
                         stochastic=stochastic, names=(c.generator.model, c.encoder.model,
                                                       c.discriminator.model))
        if not c.gan.cycle_weight >= 0:  # also NaN
            raise ConfigError(f"gan.cycle_weight must be >= 0, got {c.gan.cycle_weight}")
        self.ema: EMA | None = None
        if c.gan.ema_decay is not None:  # averages G and E (and their BatchNorm statistics)
            buffers = [p for net in (G, E) for p in net.get_parameters() if not p.requires_grad]
            self.ema = EMA(c.gan.ema_decay, buffers=buffers)
        self.ali: ALI = build_ali(
            G, E, D, z_dim=c.gan.z_dim, batch_size=c.data.batch_size, loss=get_loss(c.gan.loss),
            g_optimizer=optimizer_from_config(c.optim.generator, "optim.generator"),
            d_optimizer=optimizer_from_config(c.optim.discriminator, "optim.discriminator"),
            stochastic=stochastic, n_critic=c.gan.n_critic,
            penalty=penalty_from_config(c.gan.penalty, c.gan.penalty_weight,
                                        allowed=("r1", "r2")),
            cycle_weight=c.gan.cycle_weight,
            g_transforms=transforms_from_config(c.optim.generator, c.seed),
            d_transforms=transforms_from_config(c.optim.discriminator, c.seed + 1),
            g_post_update=[self.ema] if self.ema is not None else [],
            d_post_update=weight_clip(c.gan.weight_clip),
            g_accumulate=c.optim.generator.accumulate,
            d_accumulate=c.optim.discriminator.accumulate,
            shard=self.world.shard(c.data.batch_size) if self.world.size > 1 else None)
        self.schedule, self.source = self.ali.schedule, self.data.source
        self.players = {"discriminator": [self.ali.discriminator],
                        "generator": [self.ali.generator]}
        self.autoencoder = Autoencoder(G, E, c.gan.z_dim, self.ema)
        n_eval = c.train.grid if self.is_image else c.train.samples
        self.eval_z = np.random.default_rng([c.seed, 1]).standard_normal((n_eval, c.gan.z_dim))
        n_recon = 256 if self.is_image else 500
        self.eval_x, self.eval_x_source = evaluation_examples(c, self.data, n_recon, c.seed)

    @property
    def is_image(self) -> bool:
        return len(self.data.sample_shape) == 3

    def evaluate(self, loop: Loop) -> None:
        """Samples from the fixed noise and reconstructions of the fixed real examples."""
        from ...metrics.mixture import mixture_report
        from ...viz.images import save_grid
        from ...viz.plot import scatter_png

        step = f"step_{loop.iteration:06d}.png"
        folder = self.dir / "samples"
        samples = self.autoencoder.samples(self.eval_z)
        rec = self.autoencoder.reconstruct(self.eval_x)
        record: dict[str, Any] = {"iteration": loop.iteration, "kind": "eval"}
        errors = reconstruction_errors(self.eval_x, rec, self.data.mixture)
        record.update({f"eval/{k}": v for k, v in errors.items()})
        record["eval/recon_examples"] = self.eval_x_source
        if self.is_image:
            save_grid(folder / step, samples, scale=2)
            n = RECON_ROWS * RECON_COLS
            save_reconstructions(folder / f"recon_{step}", self.eval_x[:n], rec[:n])
        elif self.data.mixture is not None:
            report = mixture_report(samples, self.data.mixture)
            record.update({f"eval/{k}": v for k, v in report.as_dict().items()})
            scatter_png(folder / step, samples, self.data.mixture.means)
            self.last_report = report
        self.writer.write(record)

    def finish(self) -> None:
        """``samples/final.png`` and ``samples/recon_final.png``: the last grids."""
        from ...viz.images import finish_grids

        if self.is_image:
            finish_grids(self.dir / "samples", gif=None)
            finish_grids(self.dir / "samples", "recon_step_*.png", "recon_final.png", gif=None)
