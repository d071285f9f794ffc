"""What the live report costs a training run, measured inside one run.

    python scripts/report_cost.py [PRESET] [--steps 300] [--set KEY=VALUE ...]
                                  [--long 1000000 --log-every 50]

Trains PRESET (default ``dcgan_digits``) for ``--steps`` iterations with every rewrite of
``report.html`` timed, and prints the number of rewrites, their median and total time, and
their share of the run's wall time: the share the report adds to the benchmark's "outside the
steps" column (``scripts/benchmark.py``). Both times come from the same run, so the share holds
on a loaded machine too.

``--long N`` then times ``build_report`` on a synthetic ``metrics.jsonl`` of a run N iterations
long logged every ``--log-every`` (the preset's player keys, a quality record every 100 lines),
to show what a rewrite costs late in a long run and how large the page gets.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import gantrain  # noqa: F401  (sets MindSpore's environment before it loads)
from gantrain.recipes.base import Run
from gantrain.recipes.registry import build_run, load_config
from gantrain.viz.report import build_report


def timed_run(preset: str, steps: int, overrides: list[str], folder: Path) -> dict:
    times: list[float] = []
    original = Run.write_report

    def write_report(self):
        t = time.perf_counter()
        try:
            return original(self)
        finally:
            times.append(time.perf_counter() - t)

    Run.write_report = write_report
    try:
        config = load_config(preset, [f"train.steps={steps}", "train.progress=false",
                                      *overrides])
        start = time.perf_counter()
        run = build_run(config, folder / "run")
        run.train()
        wall = time.perf_counter() - start
    finally:
        Run.write_report = original
    page = folder / "run" / "report.html"
    return {"preset": preset, "steps": steps, "rewrites": len(times),
            "median_ms": round(1000 * statistics.median(times), 2),
            "total_s": round(sum(times), 3), "wall_s": round(wall, 1),
            "share_of_wall": round(sum(times) / wall, 6), "page_bytes": page.stat().st_size}


def long_log(folder: Path, iterations: int, log_every: int) -> dict:
    run = folder / "long"
    run.mkdir()
    (run / "config.toml").write_text('task = "gan"\n')
    with open(run / "metrics.jsonl", "w") as f:
        for k, it in enumerate(range(log_every, iterations + 1, log_every)):
            f.write(json.dumps({"iteration": it, "elapsed": it / 4, "D/loss": 1 + (k % 13) / 9,
                                "G/loss": 2 - (k % 7) / 5, "D/real": 0.6, "D/fake": 0.3,
                                "D/grad_norm": 3.0, "G/grad_norm": 4.0, "D/lr": 2e-4,
                                "G/lr": 2e-4, "it_per_s": 4.0}) + "\n")
            if k % 100 == 0:
                f.write(json.dumps({"iteration": it, "kind": "quality", "fd": 100 / (k + 1),
                                    "kid": 0.1 / (k + 1)}) + "\n")
    times = []
    for _ in range(3):
        t = time.perf_counter()
        page = build_report(run)
        times.append(time.perf_counter() - t)
    return {"iterations": iterations, "log_lines": iterations // log_every,
            "median_ms": round(1000 * statistics.median(times), 1),
            "page_bytes": page.stat().st_size}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("preset", nargs="?", default="dcgan_digits")
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--set", dest="overrides", action="append", default=[])
    p.add_argument("--long", type=int, default=0)
    p.add_argument("--log-every", type=int, default=50)
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="gantrain-report-cost-") as tmp:
        result = timed_run(args.preset, args.steps, args.overrides, Path(tmp))
        print(json.dumps(result))
        if args.long:
            print(json.dumps(long_log(Path(tmp), args.long, args.log_every)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
