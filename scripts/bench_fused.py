"""Iterations per compiled call (``train.iterations_per_call``): compile cost and speed.

    python scripts/bench_fused.py [--preset gan_2d_grid] [--k 1 2 5] [--iters 200] [--rounds 3]

Builds one run of the preset per k in this process, times its first 100 iterations (compile
included), then alternates the runs round by round (k1, k2, k5, k1, ...) for ``--iters``
iterations each and prints iterations/s per round, the median and the ratio to the first k.
Every interval is set to a multiple of every k (no sample grid or checkpoint inside the rounds).
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import tempfile
import time
from pathlib import Path

import gantrain  # noqa: F401  (sets MindSpore's environment first)
from gantrain.recipes.registry import build_run, load_config


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--preset", default="gan_2d_grid")
    p.add_argument("--k", type=int, nargs="+", default=[1, 2, 5])
    p.add_argument("--iters", type=int, default=200)
    p.add_argument("--rounds", type=int, default=3)
    args = p.parse_args()
    lcm = math.lcm(*args.k, 100)
    runs, out = {}, {"preset": args.preset, "first_100_s": {}, "rounds": {}}
    for k in args.k:
        never = 10**7 // lcm * lcm  # no sample grid or checkpoint inside the rounds
        cfg = load_config(args.preset, [
            "train.progress=false", f"train.steps={never}", f"train.log_every={lcm}",
            f"guard.every={lcm}", f"train.sample_every={never}",
            f"train.checkpoint_every={never}", f"train.iterations_per_call={k}"])
        run = build_run(cfg, Path(tempfile.mkdtemp()) / "r")
        start = time.perf_counter()
        run.loop.run(100)
        out["first_100_s"][k] = round(time.perf_counter() - start, 2)
        runs[k] = run
        print(f"k={k}: first 100 iterations incl. compile {out['first_100_s'][k]} s", flush=True)
    iters = args.iters // lcm * lcm or lcm
    for _ in range(args.rounds):
        for k, run in runs.items():
            start = time.perf_counter()
            run.loop.run(run.loop.iteration + iters)
            out["rounds"].setdefault(k, []).append(round(iters / (time.perf_counter() - start), 2))
    base = statistics.median(out["rounds"][args.k[0]])
    for k, speeds in out["rounds"].items():
        med = statistics.median(speeds)
        print(f"k={k}: {med:.1f} it/s (rounds {speeds}), x{med / base:.2f} vs k={args.k[0]}")
    print(json.dumps(out))


if __name__ == "__main__":
    main()
