"""The run every recipe shares: its folder's metrics file, the divergence guard, periodic
evaluation and checkpoints, learning-rate schedules fitted to the phase list, save/restore and
the loop.

A recipe's run subclasses :class:`Run` and fills in :meth:`Run.build` (players by optimizer
role, schedule, batch source) and :meth:`Run.evaluate`.
"""

from __future__ import annotations

import copy
import math
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from ..config.builders import lr_schedule_from_config
from ..config.schema import OptimConfig, RunConfig
from ..config.strict import ConfigError, to_dict
from ..engine import checkpoint, dist, runtime
from ..engine.context import BatchSource
from ..engine.guard import DivergenceGuard
from ..engine.hooks import JsonlWriter, MetricsLogger, Periodic
from ..engine.loop import Hook, Loop
from ..engine.player import Player
from ..engine.rank_state import synchronizer
from ..engine.schedule import Schedule
from ..engine.tensorboard import RecordWriters, TensorBoardWriter


class NullWriter:
    """Where the records of ranks other than 0 go: nowhere."""

    def write(self, record: dict[str, Any]) -> None:
        pass


class Run:
    """A run built from ``config``, writing to ``run_dir``.

    Subclasses set, in :meth:`build`: ``self.schedule`` (the phases), ``self.source`` (the
    batch stream) and ``self.players``: every Player whose state a checkpoint holds, by the
    name of the ``[optim.<role>]`` section that configures it (e.g. ``{"discriminator": [D],
    "generator": [G]}``).
    """

    schedule: Schedule
    source: BatchSource
    players: dict[str, list[Player]]
    # True for a recipe whose run gives the same result on N data-parallel workers as in one
    # process (global batch split over the ranks); the others refuse more than one worker.
    data_parallel: bool = False
    # why a recipe that is not data-parallel is not, for the refusal message
    data_parallel_blocker: str = "it has not been made data-parallel"

    def __init__(self, config: RunConfig, run_dir: str | Path) -> None:
        self.config, self.dir = copy.deepcopy(config), Path(run_dir)
        runtime.setup(config.device, config.seed, config.jit_level)
        self.world = dist.world()
        if self.world.size > 1:
            self.check_data_parallel(config, self.world.size)
        self.last_report: Any = None
        self.report_path: Path | None = None  # report.html, once written
        self.build()
        self.fit_lr_schedules()
        # BatchNorm statistics differ per rank: averaged before they are used or stored
        self.sync_rank_state = synchronizer(self.player_list)
        t, g = self.config.train, self.config.guard
        writes = self.world.is_main  # the other ranks write nothing in the run folder
        self.tensorboard = self._tensorboard() if t.tensorboard and writes else None
        self.writer = JsonlWriter(self.dir / "metrics.jsonl") if writes else NullWriter()
        if self.tensorboard is not None:
            self.writer = RecordWriters(self.writer, self.tensorboard)
        self.guard = DivergenceGuard(self.player_list, self.restore_last, g.every,
                                     g.max_skips, g.lr_factor, g.max_rollbacks, self.writer)
        hooks: list[Hook] = [MetricsLogger(self.writer, every=t.log_every), *self.extra_hooks(),
                             self.guard, Periodic(self.evaluate_and_report, every=t.sample_every),
                             Periodic(self.save, every=t.checkpoint_every)]
        hooks += self.late_hooks()
        self.loop = self._loop(hooks, t.progress and writes)

    def _loop(self, hooks: list[Hook], progress: bool) -> Loop:
        t, k = self.config.train, self.config.train.iterations_per_call
        if k != 1:
            intervals = {"train.log_every": t.log_every, "train.sample_every": t.sample_every,
                         "train.checkpoint_every": t.checkpoint_every,
                         "guard.every": self.config.guard.every, **self.interval_keys()}
            bad = [f"{key} = {value}" for key, value in intervals.items() if value % k]
            if bad:
                raise ConfigError(f"train.iterations_per_call = {k}: hooks run between calls, "
                                  f"so every interval must be a multiple of {k}; not "
                                  f"{', '.join(bad)}")
        try:
            agree = dist.any_rank if self.world.size > 1 else None
            return Loop(self.schedule, self.source, self.config.seed, hooks, progress, agree,
                        iterations_per_call=k)
        except ValueError as e:
            raise ConfigError(f"train.iterations_per_call = {k}: {e}") from None

    @classmethod
    def check_data_parallel(cls, config: RunConfig, workers: int) -> None:
        """Refuse a run on ``workers`` > 1 workers that this recipe or config cannot do (the
        launcher calls it before any worker starts, each worker again)."""
        if not cls.data_parallel:
            raise ConfigError(f"task {config.task!r} runs in one process only: "
                              f"{cls.data_parallel_blocker}; train it without --workers")
        if config.train.iterations_per_call != 1:
            raise ConfigError(f"train.iterations_per_call = {config.train.iterations_per_call} "
                              "is not verified with --workers yet (each step's all-reduce "
                              "inside one compiled call of several); use 1 with --workers")
        batch = config.data.batch_size
        if batch % workers:
            raise ConfigError(f"data.batch_size = {batch} is the global batch and must be "
                              f"divisible by the number of workers ({workers}); each worker "
                              f"takes batch_size / workers samples")

    def _tensorboard(self) -> TensorBoardWriter:
        try:
            return TensorBoardWriter(self.dir / "tensorboard")
        except ImportError as e:
            raise ConfigError(str(e)) from None

    # -- what a recipe provides ----------------------------------------------------------------

    def interval_keys(self) -> dict[str, int]:
        """The recipe's own hook intervals in iterations, by config key (0: off), which
        ``train.iterations_per_call`` must divide."""
        return {}

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

    def fit_optim(self, oc: OptimConfig) -> None:
        """Adjust a decaying schedule once its length is known (e.g. where the decay starts)."""

    def extra_state(self) -> dict[str, Any]:
        """Host-side state beyond the loop's (e.g. an image pool) saved in ``state.json``."""
        return {}

    def load_extra_state(self, state: dict[str, Any]) -> None:
        pass

    def checkpoint_state(self) -> dict[str, list]:
        """The Parameters a checkpoint holds, one file per key (``<key>.ckpt``)."""
        return {p.name: p.state() for p in self.player_list}

    # -- shared --------------------------------------------------------------------------------

    @property
    def player_list(self) -> list[Player]:
        return [p for group in self.players.values() for p in group]

    def fit_lr_schedules(self) -> None:
        """Give every decaying learning-rate schedule its length in optimizer updates:
        ``train.steps`` times the updates each player makes per iteration, read off the phase
        list (``repeats / every`` over its phases, divided by its ``accumulate``). The length
        is written into the config, so a resume that extends ``train.steps`` keeps it."""
        rates = self.schedule.updates_per_iteration()
        for role, group in self.players.items():
            oc = getattr(self.config.optim, role)
            if oc.lr_schedule == "constant":
                continue
            if oc.decay_steps == 0:
                rate = max(rates.get(p.name, 0.0) for p in group)
                oc.decay_steps = max(1, math.ceil(self.config.train.steps * rate))
            self.fit_optim(oc)
            schedule = lr_schedule_from_config(oc, f"optim.{role}")
            for player in group:
                player.set_lr_schedule(schedule)

    def evaluate_and_report(self, loop: Loop) -> None:
        """The periodic evaluation, then ``report.html`` rewritten to show it (rank 0 only, after
        the ranks' BatchNorm statistics were averaged)."""
        self.sync_rank_state()
        if not self.world.is_main:
            return
        self.evaluate(loop)
        if self.tensorboard is not None:
            grid = self.dir / "samples" / f"step_{loop.iteration:06d}.png"
            if grid.is_file():
                self.tensorboard.image("samples", grid, loop.iteration)
        self.write_report()

    def write_report(self) -> Path | None:
        """Rewrite ``report.html`` from the run folder (metrics, sample grids, config).

        It reads the small metrics file and lists the sample grids, so it is cheap at every
        sample interval. A report that cannot be written (full disk, a bad line we did not
        foresee) is reported on the terminal and does not stop training.
        """
        from ..viz.report import REPORT_FILE, build_report

        try:
            self.report_path = build_report(self.dir, self.dir / REPORT_FILE)
        except Exception as e:  # a page must never end a training run
            tqdm.write(f"gantrain: could not write {self.dir / REPORT_FILE}: {e}")
        return self.report_path

    def save(self, loop: Loop) -> Path:
        """Write a checkpoint. Every rank calls it: the ranks' BatchNorm statistics are averaged,
        rank 0 writes, and the others wait until the checkpoint is complete (renamed)."""
        self.sync_rank_state()
        path = self.write_checkpoint(loop)
        dist.barrier()
        return path

    def write_checkpoint(self, loop: Loop) -> Path:
        """Write ``checkpoints/step_<iteration>`` from this process's state (rank 0 only writes;
        other ranks return the path without writing)."""
        if not self.world.is_main:
            return self.dir / "checkpoints" / f"step_{loop.iteration:08d}"
        state = {"loop": loop.state_dict(), "config": to_dict(self.config),
                 "extra": self.extra_state()}
        root = self.dir / "checkpoints"
        path = checkpoint.save(root, f"step_{loop.iteration:08d}", self.checkpoint_state(), state)
        checkpoint.prune(root, self.config.train.keep_checkpoints)
        return path

    def restore(self, path: str | Path) -> int:
        """Load the full training state; call before training continues. Returns the iteration."""
        ckpt = checkpoint.resolve(path)
        players = {p.name: p for p in self.player_list}
        for name, params in self.checkpoint_state().items():
            upgrade = players[name].upgrade_checkpoint if name in players else None
            checkpoint.load_parameters(params, ckpt / f"{name}.ckpt", upgrade=upgrade)
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
        if not self.world.is_main:
            return self.loop
        self.finish()
        self.write_report()  # after finish: shows the final grid and the GIF
        if self.tensorboard is not None:
            self.tensorboard.close()
        return self.loop
