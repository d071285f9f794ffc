"""A training run built from a config: data, nets, players, hooks and its folder under runs/.

This is the glue between the strict config and the engine; the loop itself stays generic.
"""

from __future__ import annotations

import shutil
import time
from pathlib import Path
from typing import Any

import numpy as np

from . import checkpoint, runtime
from .builders import optimizer_from_config, post_updates_from_config, transforms_from_config
from .config import Config, ConfigError, dumps_toml, from_dict, to_dict
from .data.registry import DataBundle, build_data
from .gan import GAN, Penalty, build_gan
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


class Run:
    """Everything one training run needs, built from ``config`` and writing to ``run_dir``."""

    def __init__(self, config: Config, run_dir: str | Path) -> None:
        self.config, self.dir = config, Path(run_dir)
        runtime.setup(config.device, config.seed)
        self.data: DataBundle = build_data(
            config.data.dataset, config.data.args, config.data.batch_size, config.seed
        )
        self.gan: GAN = self._build_gan()
        self.sampler = Sampler(self.gan.generator.nets["G"], self.gan.num_classes > 0)
        eval_rng = np.random.default_rng([config.seed, 1])  # fixed noise, apart from training's
        self.eval_z = eval_rng.standard_normal((config.train.samples, config.gan.z_dim))
        self.eval_y = eval_rng.integers(0, max(self.gan.num_classes, 1), config.train.samples)
        self.writer = JsonlWriter(self.dir / "metrics.jsonl")
        t = config.train
        hooks = [
            MetricsLogger(self.writer, every=t.log_every),
            Periodic(self.evaluate, every=t.sample_every),
            Periodic(self.save, every=t.checkpoint_every),
        ]
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
        return build_gan(
            G, D, z_dim=c.gan.z_dim, batch_size=c.data.batch_size, loss=get_loss(c.gan.loss),
            g_optimizer=optimizer_from_config(
                c.optim.generator, "optim.generator", c.train.steps),
            d_optimizer=optimizer_from_config(
                c.optim.discriminator, "optim.discriminator", c.train.steps * c.gan.n_critic),
            n_critic=c.gan.n_critic, penalty=penalty, num_classes=num_classes,
            g_transforms=transforms_from_config(c.optim.generator, c.seed),
            d_transforms=transforms_from_config(c.optim.discriminator, c.seed + 1),
            d_post_update=post_updates_from_config(c.gan),
            g_accumulate=c.optim.generator.accumulate,
            d_accumulate=c.optim.discriminator.accumulate,
            pack=c.gan.pack,
        )

    # -- hooks --------------------------------------------------------------------------------

    def evaluate(self, loop: Loop) -> None:
        """Sample from the fixed evaluation noise; score and draw what the data kind allows."""
        from .metrics.mixture import mixture_report
        from .plot import scatter_png

        samples = self.sampler(self.eval_z, self.eval_y)
        record: dict[str, Any] = {"iteration": loop.iteration, "kind": "eval"}
        if self.data.mixture is not None:
            report = mixture_report(samples, self.data.mixture)
            record.update({f"eval/{k}": v for k, v in report.as_dict().items()})
            scatter_png(self.dir / "samples" / f"step_{loop.iteration:06d}.png", samples,
                        self.data.mixture.means)
            self.last_report = report
        self.writer.write(record)

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

    def train(self) -> Loop:
        t = self.config.train
        return self.loop.run(t.steps, t.time_budget)


def load_sampler(path: str | Path) -> tuple[Sampler, Config]:
    """The generator of a run or checkpoint, ready to sample, and the run's config.

    Reads the config stored in the checkpoint, so the training config file is not needed.
    """
    ckpt = checkpoint.resolve(path)
    config = from_dict(Config, checkpoint.read_state(ckpt)["config"], source=str(ckpt))
    runtime.setup(config.device, config.seed)
    G = build_cell(config.generator.model, config.generator.args, "generator")
    prefix_parameters({"G": G}, "G")  # the names the G player gave them when training
    checkpoint.load_parameters(G.get_parameters(), ckpt / "G.ckpt", strict=False)
    return Sampler(G, config.gan.num_classes > 0), config
