"""The GAN run (``task = "gan"``): data, the G and D players of :func:`build_gan`, sample
grids or 2D scatter plots with their mode-coverage report, failure-sign warnings, and quality
metrics during training."""

from __future__ import annotations

from typing import Any

import numpy as np

from ...blocks.augment import AugmentPolicy, parse_policy
from ...blocks.losses import get_loss
from ...blocks.watchdog import Watchdog
from ...config.builders import (
    optimizer_from_config,
    penalty_from_config,
    transforms_from_config,
    weight_clip,
)
from ...config.imports import build_cell
from ...config.strict import ConfigError
from ...data.registry import DataBundle, build_data
from ...engine.ema import EMA
from ...engine.hooks import Periodic
from ...engine.loop import Hook, Loop
from ...engine.sampling import Sampler
from ...metrics.quality_hook import QualityHook
from ..base import Run
from ..shapes import build_latent_net, check_shapes
from .build import GAN, build_gan
from .config import GANConfig


class GANRun(Run):
    """A GAN training run (``task = "gan"``): data, G and D players, sampling and metrics."""

    config: GANConfig
    data_parallel = True

    @classmethod
    def check_data_parallel(cls, config: GANConfig, workers: int) -> None:
        super().check_data_parallel(config, workers)
        share, pack = config.data.batch_size // workers, config.gan.pack
        if pack >= 1 and share % pack:
            raise ConfigError(f"each worker's share of data.batch_size = "
                              f"{config.data.batch_size} ({share}) must be a multiple of "
                              f"gan.pack = {pack}")

    def build(self) -> None:
        config = self.config
        self.data: DataBundle = build_data(
            config.data.dataset, config.data.args, config.data.batch_size, config.seed
        )
        self.ema: EMA | None = None
        self.gan: GAN = self._build_gan()
        self.schedule, self.source = self.gan.schedule, self.data.source
        self.players = {"discriminator": [self.gan.discriminator],
                        "generator": [self.gan.generator]}
        self.sampler = Sampler(self.gan.generator.nets["G"], self.gan.num_classes > 0)
        eval_rng = np.random.default_rng([config.seed, 1])  # fixed noise, apart from training's
        n_eval = config.train.grid if self.is_image else config.train.samples
        self.eval_z = eval_rng.standard_normal((n_eval, config.gan.z_dim))
        # class-conditional grids show each class in turn along the rows
        self.eval_y = np.arange(n_eval) % max(self.gan.num_classes, 1)

    def extra_hooks(self) -> list[Hook]:
        t, g = self.config.train, self.config.guard
        self.watchdog = Watchdog(t.log_every, g.d_loss_floor, g.d_patience, g.grad_norm_limit,
                                 self.writer)
        return [self.watchdog]

    def interval_keys(self) -> dict[str, int]:
        return {"train.eval_every": self.config.train.eval_every}

    def late_hooks(self) -> list[Hook]:
        t = self.config.train
        self.quality = None
        if t.eval_every > 0:
            if not self.is_image:
                raise ConfigError("train.eval_every needs image data (2D runs are scored by the "
                                  "sample hook already)")
            # every rank averages its BatchNorm statistics, then rank 0 alone scores and writes
            sync = Periodic(lambda loop: self.sync_rank_state(), every=t.eval_every)
            if not self.world.is_main:
                return [sync]
            self.quality = QualityHook(
                self.generate, self.data.dataset, self.writer, self.dir, self.write_checkpoint,
                every=t.eval_every, classifier=t.eval_classifier, samples=t.eval_samples,
                z_dim=self.config.gan.z_dim, num_classes=self.gan.num_classes,
                seed=self.config.seed, keep_best=t.keep_best)
            return [sync, self.quality]
        return []

    def _build_gan(self) -> GAN:
        c = self.config
        G = build_latent_net(c.gan.z_dim, "generator", c.generator)
        D = build_cell(c.discriminator.model, c.discriminator.args, "discriminator")
        penalty = penalty_from_config(c.gan.penalty, c.gan.penalty_weight, c.gan.penalty_every)
        penalties = [penalty] if penalty is not None else []
        num_classes = c.gan.num_classes
        local = c.data.batch_size // self.world.size  # each worker's share of the batch
        if c.gan.pack < 1 or local % c.gan.pack:
            share = f" / {self.world.size} workers" if self.world.size > 1 else ""
            raise ConfigError(f"gan.pack = {c.gan.pack} must be >= 1 and divide data.batch_size "
                              f"= {c.data.batch_size}{share} (D judges whole packs of samples)")
        if num_classes and not self.data.num_classes:
            raise ConfigError("gan.num_classes > 0 needs a labelled dataset; "
                              f"{c.data.dataset!r} has no labels")
        check_shapes(G, D, z_dim=c.gan.z_dim, sample_shape=self.data.sample_shape,
                     num_classes=num_classes, pack=c.gan.pack,
                     g_name=c.generator.model, d_name=c.discriminator.model)
        g_post = []
        if c.gan.ema_decay is not None:
            buffers = [p for p in G.get_parameters() if not p.requires_grad]
            self.ema = EMA(c.gan.ema_decay, buffers=buffers)
            g_post.append(self.ema)
        shape = self.data.sample_shape
        augment = None
        if parse_policy(c.gan.augment):
            if len(shape) != 3:
                raise ConfigError(f"gan.augment = {c.gan.augment!r} augments images; the data "
                                  f"has samples of shape {tuple(shape)}")
            augment = AugmentPolicy(c.gan.augment, image_size=tuple(shape[1:]))
        return build_gan(
            G, D, z_dim=c.gan.z_dim, batch_size=c.data.batch_size, loss=get_loss(c.gan.loss),
            g_optimizer=optimizer_from_config(c.optim.generator, "optim.generator"),
            d_optimizer=optimizer_from_config(c.optim.discriminator, "optim.discriminator"),
            n_critic=c.gan.n_critic, penalties=penalties, num_classes=num_classes,
            g_transforms=transforms_from_config(c.optim.generator, c.seed),
            d_transforms=transforms_from_config(c.optim.discriminator, c.seed + 1),
            d_post_update=weight_clip(c.gan.weight_clip),
            g_post_update=g_post,
            augment=augment,
            g_accumulate=c.optim.generator.accumulate,
            d_accumulate=c.optim.discriminator.accumulate,
            pack=c.gan.pack,
            aux_weight=c.gan.aux_weight,
            shard=self.world.shard(c.data.batch_size) if self.world.size > 1 else None,
        )

    @property
    def is_image(self) -> bool:
        return len(self.data.sample_shape) == 3

    def generate(self, z: np.ndarray, y: np.ndarray | None = None, ema: bool = True) -> np.ndarray:
        """Samples from the generator (its EMA weights when it has them and ``ema``)."""
        if ema and self.ema is not None:
            with self.ema.swapped_in():
                return self.sampler(z, y)
        return self.sampler(z, y)

    # -- hooks --------------------------------------------------------------------------------

    def evaluate(self, loop: Loop) -> None:
        """Sample from the fixed evaluation noise; score and draw what the data kind allows."""
        from ...metrics.mixture import mixture_report
        from ...viz.images import save_grid
        from ...viz.plot import scatter_png

        samples = self.generate(self.eval_z, self.eval_y)
        if loop.iteration >= self.config.guard.diversity_after:
            self.watchdog.check_diversity(loop, samples, self.real_reference(len(samples)))
        record: dict[str, Any] = {"iteration": loop.iteration, "kind": "eval"}
        if self.is_image:
            cols = self.gan.num_classes or None
            save_grid(self.dir / "samples" / f"step_{loop.iteration:06d}.png", samples, cols,
                      scale=2)
        elif self.data.mixture is not None:
            report = mixture_report(samples, self.data.mixture)
            record.update({f"eval/{k}": v for k, v in report.as_dict().items()})
            scatter_png(self.dir / "samples" / f"step_{loop.iteration:06d}.png", samples,
                        self.data.mixture.means)
            self.last_report = report
        self.writer.write(record)

    def real_reference(self, n: int) -> np.ndarray:
        """A fixed set of real samples (not drawn from the training stream)."""
        if self.data.mixture is not None:
            return self.data.mixture.sample(np.random.default_rng(0), n)
        return self.data.dataset.x[:n]

    def finish(self) -> None:
        """``samples/final.png`` (the last grid) and ``samples/progress.gif`` (all grids)."""
        if self.is_image:
            from ...viz.images import finish_grids

            finish_grids(self.dir / "samples")
