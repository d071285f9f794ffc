"""Training one seed of a preset for the benchmarks over seeds (``scripts/benchmark_2d.py``,
``scripts/benchmark_images.py``): the run folder, the training and the check that it finished.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from .base import Run
from .registry import build_run, load_config
from .rundir import benchmark_run_dir, prepare_run_dir

#: ``Loop.stop_reason`` values of a run whose figures may enter a table over seeds: it ran its
#: steps, or the time budget its config asked for. Ctrl-C, SIGTERM and the divergence guard
#: leave a generator that was not trained as configured.
FINISHED = ("steps", "time budget")


class UnfinishedRun(RuntimeError):
    """The training stopped before it was done; its figures would mislead."""


@dataclass
class Trained:
    run: Run
    wall_s: float  # building, compiling and training

    def row(self) -> dict:
        """The columns every benchmark row has: steps, wall time, iterations per second."""
        loop = self.run.loop
        return {"steps": loop.iteration, "wall_s": round(self.wall_s, 1),
                "it_per_s": round(loop.iteration / loop.elapsed, 2)}


def train_seed(kind: str, preset: str, seed: int, overrides: Sequence[str] = ()) -> Trained:
    """Train ``preset`` with ``seed`` and ``overrides`` into ``runs/<kind>-<preset>-s<seed>``
    (overwriting it). Raises :class:`UnfinishedRun` when the training stopped early."""
    config = load_config(preset, [f"seed={seed}", "train.progress=false", *overrides])
    start = time.perf_counter()
    run = build_run(config, benchmark_run_dir(kind, preset, seed, overrides))
    prepare_run_dir(run.dir, run.config, overwrite=True)
    loop = run.train()
    if loop.stop_reason not in FINISHED:
        raise UnfinishedRun(
            f"{preset} seed {seed}: training stopped at iteration {loop.iteration} of "
            f"{config.train.steps} ({loop.stop_reason}); not scored (the rows so far are kept)")
    return Trained(run, time.perf_counter() - start)
