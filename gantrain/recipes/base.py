"""What every training run shares, whatever its recipe: its folder under runs/, the metrics
file, the divergence guard, periodic evaluation and checkpoints, save/restore and the loop.

A recipe's run (the GAN :class:`~gantrain.run.Run`, CycleGAN, ALI, actor-critic) subclasses
:class:`BaseRun` and fills in :meth:`BaseRun.build` and :meth:`BaseRun.evaluate`.
"""

from __future__ import annotations

import copy
import shutil
import time
from pathlib import Path
from typing import Any

from ..config.schema import Config, ConfigError, dumps_toml, to_dict
from ..engine import checkpoint, runtime
from ..engine.context import BatchSource
from ..engine.guard import DivergenceGuard
from ..engine.hooks import JsonlWriter, MetricsLogger, Periodic
from ..engine.loop import Hook, Loop
from ..engine.player import Player
from ..engine.schedule import Schedule

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


def resolve_schedules(config: Config, updates_per_iteration: dict[str, float]) -> Config:
    """Fix each decaying learning-rate schedule's length from ``train.steps`` and how many
    updates each optimizer makes per iteration, so the resolved config records it and a resume
    that extends ``train.steps`` keeps the schedule the run started with."""
    config = copy.deepcopy(config)
    for name, per_iteration in updates_per_iteration.items():
        oc = getattr(config.optim, name)
        if oc is not None and oc.lr_schedule != "constant" and oc.decay_steps == 0:
            oc.decay_steps = max(1, int(-(-config.train.steps * per_iteration // 1)))
    return config


class BaseRun:
    """A run built from ``config``, writing to ``run_dir``.

    Subclasses set, in :meth:`build`: ``self.schedule`` (the phases), ``self.source`` (the
    batch stream) and ``self.player_list`` (every Player whose state a checkpoint holds).
    """

    schedule: Schedule
    source: BatchSource
    player_list: list[Player]

    def __init__(self, config: Config, run_dir: str | Path) -> None:
        self.config, self.dir = self.resolve(config), Path(run_dir)
        runtime.setup(config.device, config.seed)
        self.last_report: Any = None
        self.build()
        self.writer = JsonlWriter(self.dir / "metrics.jsonl")
        t, g = self.config.train, self.config.guard
        self.guard = DivergenceGuard(self.player_list, self.restore_last, g.every,
                                     g.max_skips, g.lr_factor, g.max_rollbacks, self.writer)
        hooks: list[Hook] = [MetricsLogger(self.writer, every=t.log_every), *self.extra_hooks(),
                             self.guard, Periodic(self.evaluate, every=t.sample_every),
                             Periodic(self.save, every=t.checkpoint_every)]
        hooks += self.late_hooks()
        self.loop = Loop(self.schedule, self.source, self.config.seed, hooks, t.progress)

    # -- what a recipe provides ----------------------------------------------------------------

    def resolve(self, config: Config) -> Config:
        """The config with everything derived from it fixed (e.g. LR schedule lengths)."""
        return config

    def build(self) -> None:
        raise NotImplementedError

    def extra_hooks(self) -> list[Hook]:
        """Hooks that run before the guard (e.g. warnings reading the step outputs)."""
        return []

    def late_hooks(self) -> list[Hook]:
        """Hooks that run after the periodic checkpoint (e.g. quality metrics)."""
        return []

    def evaluate(self, loop: Loop) -> None:
        """Periodic samples and metrics (every ``train.sample_every`` iterations and at the end)."""

    def finish(self) -> None:
        """Called once training stops (final images, summaries)."""

    @classmethod
    def sample_command(cls, ckpt: Path, config: Config, args: Any) -> str:
        """``gantrain sample`` for this task's runs (the GAN run's is in the CLI itself);
        returns the line to print."""
        raise ConfigError(f"`gantrain sample` has nothing to draw for task {config.task!r}")

    # -- shared --------------------------------------------------------------------------------

    def players(self) -> dict[str, list]:
        return {p.name: p.state() for p in self.player_list}

    def extra_state(self) -> dict[str, Any]:
        """Host-side state beyond the loop's (e.g. an image pool) saved in ``state.json``."""
        return {}

    def load_extra_state(self, state: dict[str, Any]) -> None:
        pass

    def save(self, loop: Loop) -> Path:
        state = {"loop": loop.state_dict(), "config": to_dict(self.config),
                 "extra": self.extra_state()}
        root = self.dir / "checkpoints"
        path = checkpoint.save(root, f"step_{loop.iteration:08d}", self.players(), state)
        checkpoint.prune(root, self.config.train.keep_checkpoints)
        return path

    def restore(self, path: str | Path) -> int:
        """Load the full training state; call before training continues. Returns the iteration."""
        ckpt = checkpoint.resolve(path)
        for name, params in self.players().items():
            checkpoint.load_parameters(params, ckpt / f"{name}.ckpt")
        state = checkpoint.read_state(ckpt)
        self.loop.load_state_dict(state["loop"])
        self.load_extra_state(state.get("extra", {}))
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
        self.finish()
        return self.loop
