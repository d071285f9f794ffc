"""What the data-parallel tests run on every rank (under msrun) or alone: train a preset with
overrides through the public API, then store this rank's whole training state.

    python worker.py OUT_DIR CONFIG.toml [CONFIG.toml ...]

trains each config in turn (one job, to pay msrun's start-up once) and writes
``OUT_DIR/<config name>/rank<r>.npz``: every Parameter a checkpoint holds (weights, BatchNorm
statistics, optimizer moments, EMA, spectral-norm vectors, counters), after the ranks' BatchNorm
statistics were averaged, and ``raw<r>.npz`` before that (after one more iteration). Started by
msrun, it joins the job the way ``gantrain train`` does when an outside msrun starts it. For a
config named ``*_sigterm``, rank 1 sends itself SIGTERM after iteration 3, as Ctrl-C through the
launcher would.
"""

import os
import signal
import sys
from pathlib import Path

import numpy as np

import gantrain  # noqa: F401  (sets MindSpore's environment first)
from gantrain.engine import dist, runtime
from gantrain.engine.loop import Hook
from gantrain.recipes.registry import build_run, load_config


class SignalAt(Hook):
    def __init__(self, iteration: int) -> None:
        self.iteration = iteration

    def after_iteration(self, loop) -> None:
        if loop.iteration == self.iteration:
            os.kill(os.getpid(), signal.SIGTERM)


def state(run) -> dict[str, np.ndarray]:
    params = {p.name: p.asnumpy() for player in run.player_list for p in player.state()}
    return {**params, "loop_iteration": np.array(run.loop.iteration)}


def main() -> None:
    out, configs = Path(sys.argv[1]), [Path(c) for c in sys.argv[2:]]
    runtime.setup("CPU", 0)
    world = dist.init() if dist.in_cluster() else dist.world()
    for path in configs:
        folder = out / path.stem
        folder.mkdir(parents=True, exist_ok=True)
        run = build_run(load_config(str(path)), folder / "run")
        if path.stem.endswith("_sigterm") and world.rank == 1:
            run.loop.hooks.append(SignalAt(3))
        run.train()  # ends with a checkpoint, so with averaged statistics
        run.schedule.run_iteration(run.loop.ctx)  # one more iteration: they drift apart again
        np.savez(folder / f"raw{world.rank}.npz", **state(run))
        run.sync_rank_state()  # as before every checkpoint and sample
        np.savez(folder / f"rank{world.rank}.npz", **state(run))


if __name__ == "__main__":
    main()
