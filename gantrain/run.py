"""A training run built from a config: data, nets, players, hooks and its folder under runs/.

This is the glue between the strict config and the engine; the loop itself stays generic.
"""

from __future__ import annotations

import copy
import shutil
import time
from pathlib import Path
from typing import Any

import numpy as np

from . import checkpoint, runtime
from .builders import optimizer_from_config, post_updates_from_config, transforms_from_config
from .config import Config, ConfigError, dumps_toml, from_dict, to_dict
from .data.registry import DataBundle, build_data
from .ema import EMA
from .ema import PREFIX as EMA_PREFIX
from .gan import GAN, Penalty, build_gan
from .guard import DivergenceGuard, Watchdog
from .hooks import JsonlWriter, MetricsLogger, Periodic
from .imports import build_cell
from .loop import Loop
from .losses import get_loss
from .player import prefix_parameters
from .sampling import Sampler
from .shapes import check_shapes

CONFIG_FILE = "config.toml"


def default_run_dir(config: Config, root: str | Path = "runs") -> Path:
    return Path(root) / f"{config.name}-{time.strftime('%Y%m%d-%H%M%S')}"


def check_run_dir_free(run_dir: Path, overwrite: bool = False) -> None:
    """Refuse a folder that already holds something, unless the user asked to overwrite."""
    if run_dir.exists() and any(run_dir.iterdir()) and not overwrite:
        raise ConfigError(
            f"run directory {str(run_dir)!r} already holds a run; pass --resume to continue "
            "it or --overwrite to replace it"
        )


def prepare_run_dir(run_dir: Path, config: Config, overwrite: bool = False) -> None:
    """Create ``run_dir`` for a new run and write its resolved config."""
    check_run_dir_free(run_dir, overwrite)
    if run_dir.exists():
        shutil.rmtree(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / CONFIG_FILE).write_text(dumps_toml(to_dict(config)))


def resolve_schedules(config: Config) -> Config:
    """Fix each decaying learning-rate schedule's length from ``train.steps`` (D updates n_critic
    times per iteration, plus its lazy regularizer steps), so the resolved config records it and
    a resume that extends ``train.steps`` keeps the schedule the run started with."""
    config = copy.deepcopy(config)
    steps, gan = config.train.steps, config.gan
    lazy = -(-steps // gan.penalty_every) if gan.penalty in ("r1", "r2") and \
        gan.penalty_every > 1 else 0  # the lazy regularizer phase updates D too
    updates = {"generator": steps, "discriminator": steps * gan.n_critic + lazy}
    for name, total in updates.items():
        oc = getattr(config.optim, name)
        if oc.lr_schedule != "constant" and oc.decay_steps == 0:
            oc.decay_steps = total
    return config


class Run:
    """Everything one training run needs, built from ``config`` and writing to ``run_dir``."""

    def __init__(self, config: Config, run_dir: str | Path) -> None:
        self.config, self.dir = resolve_schedules(config), Path(run_dir)
        runtime.setup(config.device, config.seed)
        self.data: DataBundle = build_data(
            config.data.dataset, config.data.args, config.data.batch_size, config.seed
        )
        self.ema: EMA | None = None
        self.gan: GAN = self._build_gan()
        self.sampler = Sampler(self.gan.generator.nets["G"], self.gan.num_classes > 0)
        eval_rng = np.random.default_rng([config.seed, 1])  # fixed noise, apart from training's
        n_eval = config.train.grid if self.is_image else config.train.samples
        self.eval_z = eval_rng.standard_normal((n_eval, config.gan.z_dim))
        # class-conditional grids show each class in turn along the rows
        self.eval_y = np.arange(n_eval) % max(self.gan.num_classes, 1)
        self.writer = JsonlWriter(self.dir / "metrics.jsonl")
        t, g = config.train, config.guard
        self.watchdog = Watchdog(t.log_every, g.d_loss_floor, g.d_patience, g.grad_norm_limit,
                                 self.writer)
        self.guard = DivergenceGuard(
            [self.gan.discriminator, self.gan.generator], self.restore_last, g.every,
            g.max_skips, g.lr_factor, g.max_rollbacks, self.writer)
        hooks = [
            MetricsLogger(self.writer, every=t.log_every),
            self.watchdog,
            self.guard,
            Periodic(self.evaluate, every=t.sample_every),
            Periodic(self.save, every=t.checkpoint_every),
        ]
        self.quality = None
        if t.eval_every > 0:
            from .quality import QualityHook

            self.quality = QualityHook(self, t.eval_every, t.eval_classifier, t.eval_samples,
                                       t.keep_best)
            hooks.append(self.quality)
        self.loop = Loop(self.gan.schedule, self.data.source, config.seed, hooks, t.progress)
        self.last_report: Any = None

    def _build_gan(self) -> GAN:
        c = self.config
        G = build_cell(c.generator.model, c.generator.args, "generator")
        D = build_cell(c.discriminator.model, c.discriminator.args, "discriminator")
        penalty = None
        if c.gan.penalty != "none":
            penalty = Penalty(c.gan.penalty, c.gan.penalty_weight, c.gan.penalty_every)
        num_classes = c.gan.num_classes
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
        return build_gan(
            G, D, z_dim=c.gan.z_dim, batch_size=c.data.batch_size, loss=get_loss(c.gan.loss),
            g_optimizer=optimizer_from_config(c.optim.generator, "optim.generator"),
            d_optimizer=optimizer_from_config(c.optim.discriminator, "optim.discriminator"),
            n_critic=c.gan.n_critic, penalty=penalty, num_classes=num_classes,
            g_transforms=transforms_from_config(c.optim.generator, c.seed),
            d_transforms=transforms_from_config(c.optim.discriminator, c.seed + 1),
            d_post_update=post_updates_from_config(c.gan),
            g_post_update=g_post,
            augment=c.gan.augment,
            image_size=tuple(shape[1:]) if len(shape) == 3 else None,
            g_accumulate=c.optim.generator.accumulate,
            d_accumulate=c.optim.discriminator.accumulate,
            pack=c.gan.pack,
            aux_weight=c.gan.aux_weight,
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
        from .images import save_grid
        from .metrics.mixture import mixture_report
        from .plot import scatter_png

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

    def players(self) -> dict[str, list]:
        return {"G": self.gan.generator.state(), "D": self.gan.discriminator.state()}

    def save(self, loop: Loop) -> Path:
        state = {"loop": loop.state_dict(), "config": to_dict(self.config)}
        root = self.dir / "checkpoints"
        path = checkpoint.save(root, f"step_{loop.iteration:08d}", self.players(), state)
        checkpoint.prune(root, self.config.train.keep_checkpoints)
        return path

    def restore(self, path: str | Path) -> int:
        """Load the full training state; call before training continues. Returns the iteration."""
        ckpt = checkpoint.resolve(path)
        for name, params in self.players().items():
            checkpoint.load_parameters(params, ckpt / f"{name}.ckpt")
        self.loop.load_state_dict(checkpoint.read_state(ckpt)["loop"])
        return self.loop.iteration

    def restore_last(self) -> int | None:
        """Restore the newest complete checkpoint of this run; None when there is none."""
        try:
            return self.restore(self.dir)
        except checkpoint.CheckpointError:
            return None

    def train(self) -> Loop:
        t = self.config.train
        self.loop.run(t.steps, t.time_budget)
        if self.is_image:
            self.write_final_images()
        return self.loop

    def write_final_images(self) -> None:
        """``samples/final.png`` (the last grid) and ``samples/progress.gif`` (all grids)."""
        from .images import save_gif

        folder = self.dir / "samples"
        frames = sorted(folder.glob("step_*.png"))
        if frames:
            shutil.copyfile(frames[-1], folder / "final.png")
            save_gif(folder / "progress.gif", frames)


def load_sampler(path: str | Path, ema: bool = True) -> tuple[Sampler, Config]:
    """The generator of a run or checkpoint, ready to sample, and the run's config.

    Reads the config stored in the checkpoint, so the training config file is not needed.
    With ``ema`` (and a run that kept an EMA), the averaged weights are loaded.
    """
    ckpt = checkpoint.resolve(path)
    config = from_dict(Config, checkpoint.read_state(ckpt)["config"], source=str(ckpt))
    runtime.setup(config.device, config.seed)
    G = build_cell(config.generator.model, config.generator.args, "generator")
    prefix_parameters({"G": G}, "G")  # the names the G player gave them when training
    file = ckpt / "G.ckpt"
    checkpoint.load_parameters(G.get_parameters(), file, strict=False)
    if ema and config.gan.ema_decay is not None:  # averaged weights and BatchNorm statistics
        checkpoint.load_parameters(list(G.get_parameters()), file, strict=False,
                                   source_prefix=f"{EMA_PREFIX}.")
    return Sampler(G, config.gan.num_classes > 0), config
