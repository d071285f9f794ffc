"""The ALI / BiGAN run (``task = "ali"``): data, G, E and joint D, samples and reconstructions.

Evaluation draws samples from fixed noise (2D mixtures: the PacGAN/VEEGAN mode-coverage report
and a scatter plot; images: a sample grid) and reconstructs fixed real examples through
``x -> E -> G`` (images: a grid whose odd rows are x and even rows G(E(x))). The reconstruction
error is logged next to the error of pairing each x with another example's reconstruction, the
level a G(E(x)) that ignored x would reach. A stochastic encoder reconstructs from its mean.
"""

from __future__ import annotations

from contextlib import nullcontext
from pathlib import Path
from typing import Any

import numpy as np

from ...blocks import latents
from ...blocks.losses import get_loss
from ...config.builders import (
    optimizer_from_config,
    post_updates_from_config,
    transforms_from_config,
)
from ...config.imports import build_cell
from ...config.schema import Config, ConfigError
from ...data.registry import DataBundle, build_data
from ...engine import checkpoint, runtime
from ...engine.ema import EMA
from ...engine.ema import PREFIX as EMA_PREFIX
from ...engine.loop import Loop
from ...engine.player import prefix_parameters
from ...engine.sampling import Sampler
from ..base import BaseRun, resolve_schedules
from .build import ALI, build_ali, check_ali_shapes

RECON_ROWS = 4  # pairs of rows (x, G(E(x))) in a reconstruction grid
RECON_COLS = 8


def check_gan_options(config: Config) -> None:
    """[gan] options that only the plain GAN implements are errors, not silently ignored."""
    gan, unused = config.gan, []
    for key, default in (("penalty", "none"), ("pack", 1), ("num_classes", 0),
                         ("aux_weight", 0.0), ("augment", "")):
        if getattr(gan, key) != default:
            unused.append(f"gan.{key} = {getattr(gan, key)!r}")
    if unused:
        raise ConfigError(f"task 'ali' does not implement {', '.join(unused)}; remove it "
                          "(ALI uses gan.loss, gan.z_dim, gan.n_critic, gan.weight_clip, "
                          "gan.ema_decay)")


def build_nets(config: Config) -> tuple[Any, Any, Any]:
    """G, E and D from the [generator], [encoder] and [discriminator] sections."""
    return (build_cell(config.generator.model, config.generator.args, "generator"),
            build_cell(config.encoder.model, config.encoder.args, "encoder"),
            build_cell(config.discriminator.model, config.discriminator.args, "discriminator"))


def real_examples(data: DataBundle, n: int, seed: int) -> np.ndarray:
    """``n`` fixed real examples: drawn from the mixture, or the dataset's first ones."""
    if data.mixture is not None:
        return data.mixture.sample(np.random.default_rng([seed, 2]), n)
    return np.asarray(data.dataset.x[:n], np.float32)


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


def reconstruction_errors(x: np.ndarray, rec: np.ndarray) -> dict[str, float]:
    """Mean squared error of G(E(x)) against x, and against another example (shifted by one):
    the chance level of a reconstruction that ignores its input."""
    axes = tuple(range(1, x.ndim))
    err = ((rec - x) ** 2).mean(axis=axes)
    other = ((rec - np.roll(x, 1, axis=0)) ** 2).mean(axis=axes)
    return {"recon_mse": float(err.mean()), "recon_mse_shuffled": float(other.mean())}


def save_reconstructions(path: Path, x: np.ndarray, rec: np.ndarray,
                         cols: int = RECON_COLS) -> Path:
    """A grid of images: rows of ``cols`` real images, each followed by their reconstructions."""
    from ...viz.images import save_grid

    rows = len(x) // cols
    x, rec = x[: rows * cols], rec[: rows * cols]
    pairs = np.stack([x.reshape(rows, cols, *x.shape[1:]), rec.reshape(rows, cols, *x.shape[1:])],
                     axis=1)
    return save_grid(path, pairs.reshape(-1, *x.shape[1:]), cols, scale=2)


class ALIRun(BaseRun):
    """An ALI / BiGAN training run (``task = "ali"``)."""

    def resolve(self, config: Config) -> Config:
        return resolve_schedules(config, {"generator": 1, "discriminator": config.gan.n_critic})

    def build(self) -> None:
        c = self.config
        check_gan_options(c)
        self.data: DataBundle = build_data(c.data.dataset, c.data.args, c.data.batch_size, c.seed)
        G, E, D = build_nets(c)
        stochastic = bool(getattr(E, "stochastic", False))
        check_ali_shapes(G, E, D, z_dim=c.gan.z_dim, sample_shape=self.data.sample_shape,
                         stochastic=stochastic, names=(c.generator.model, c.encoder.model,
                                                       c.discriminator.model))
        self.ema: EMA | None = None
        if c.gan.ema_decay is not None:  # averages G and E (and their BatchNorm statistics)
            buffers = [p for net in (G, E) for p in net.get_parameters() if not p.requires_grad]
            self.ema = EMA(c.gan.ema_decay, buffers=buffers)
        self.ali: ALI = build_ali(
            G, E, D, z_dim=c.gan.z_dim, batch_size=c.data.batch_size, loss=get_loss(c.gan.loss),
            g_optimizer=optimizer_from_config(c.optim.generator, "optim.generator"),
            d_optimizer=optimizer_from_config(c.optim.discriminator, "optim.discriminator"),
            stochastic=stochastic, n_critic=c.gan.n_critic,
            g_transforms=transforms_from_config(c.optim.generator, c.seed),
            d_transforms=transforms_from_config(c.optim.discriminator, c.seed + 1),
            g_post_update=[self.ema] if self.ema is not None else [],
            d_post_update=post_updates_from_config(c.gan))
        self.schedule, self.source = self.ali.schedule, self.data.source
        self.player_list = [self.ali.discriminator, self.ali.generator]
        self.autoencoder = Autoencoder(G, E, c.gan.z_dim, self.ema)
        n_eval = c.train.grid if self.is_image else c.train.samples
        self.eval_z = np.random.default_rng([c.seed, 1]).standard_normal((n_eval, c.gan.z_dim))
        n_recon = 256 if self.is_image else 500
        self.eval_x = real_examples(self.data, n_recon, c.seed)

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
        record.update({f"eval/{k}": v for k, v in reconstruction_errors(self.eval_x, rec).items()})
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

    @classmethod
    def sample_command(cls, ckpt: Path, config: Config, args: Any) -> str:
        """Samples from the prior and reconstructions of the run's own data (x | G(E(x)))."""
        if args.label is not None:
            raise ConfigError("--class: an ALI run's generator is unconditional")
        runtime.setup(config.device, config.seed)
        G, E, _ = build_nets(config)
        prefix_parameters({"G": G, "E": E}, "GE")  # the names the GE player gave them
        params = [*G.get_parameters(), *E.get_parameters()]
        checkpoint.load_parameters(params, ckpt / "GE.ckpt", strict=False)
        if args.ema and config.gan.ema_decay is not None:
            checkpoint.load_parameters(params, ckpt / "GE.ckpt", strict=False,
                                       source_prefix=f"{EMA_PREFIX}.")
        auto = Autoencoder(G, E, config.gan.z_dim)
        rng = np.random.default_rng(args.seed)
        z_dim = config.gan.z_dim
        z = (latents.interpolation(rng, args.n, args.interpolate, z_dim) if args.interpolate
             else latents.normal(rng, args.n, z_dim, args.truncation))
        samples = auto.samples(z)
        data = build_data(config.data.dataset, config.data.args, config.data.batch_size,
                          config.seed)
        x = real_examples(data, max(args.n, RECON_COLS), args.seed)
        rec = auto.reconstruct(x)
        return _write_outputs(args, samples, x, rec)


def _write_outputs(args: Any, samples: np.ndarray, x: np.ndarray, rec: np.ndarray) -> str:
    from ...viz.images import save_grid, save_images

    written = []
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        np.save(args.out, samples)
        written.append(args.out)
    if samples.ndim == 4:
        if args.out_dir:
            save_images(args.out_dir, samples)
            written.append(f"{args.out_dir}/")
        grid = Path(args.grid or "samples.png")
        if args.grid or not written:
            written.append(str(save_grid(grid, samples, args.interpolate or None, scale=2)))
        recon = grid.with_name(f"{grid.stem}_recon.png")
        written.append(str(save_reconstructions(recon, x, rec)))
    else:
        if not written:
            np.save("samples.npy", samples)
            written.append("samples.npy")
        stem = Path(args.out or "samples.npy")
        recon = stem.with_name(f"{stem.stem}_recon.npy")
        np.save(recon, np.stack([x, rec], axis=1))  # (N, 2, ...): x and G(E(x))
        written.append(str(recon))
    errors = reconstruction_errors(x, rec)
    return (f"wrote {len(samples)} samples of shape {samples.shape[1:]} and {len(x)} "
            f"reconstructions (x | G(E(x)), mse {errors['recon_mse']:.4f}, another example's "
            f"{errors['recon_mse_shuffled']:.4f}) to {', '.join(written)}")
