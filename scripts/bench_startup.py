"""Start-up and memory of one preset, measured in a fresh process (run by scripts/benchmark.py).

    python scripts/bench_startup.py PRESET [--set KEY=VALUE ...] [--iters 20] [--long 2000]

Prints one JSON line: seconds spent importing gantrain + mindspore, building the run (dataset,
nets, players; the dataset build is timed on its own), compiling each player's step (first call
minus a second call), the first loop iteration after that, the total from process start to the
end of the first iteration, and the peak RSS after ``--iters`` more iterations. ``--long N``
also reports the resident set size every 100 iterations up to N (growth over a long run).
"""

from __future__ import annotations

import time

T0 = time.perf_counter()

# isort: split
import argparse  # noqa: E402
import json  # noqa: E402
import resource  # noqa: E402
import tempfile  # noqa: E402
from pathlib import Path  # noqa: E402

import gantrain  # noqa: E402, F401  (before mindspore: sets its environment)

# isort: split
import mindspore  # noqa: E402, F401

T_IMPORT = time.perf_counter() - T0


def rss_mb() -> float:
    """Current resident set size (VmRSS) in MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("preset")
    p.add_argument("--set", dest="overrides", action="append", default=[])
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--long", type=int, default=0)
    args = p.parse_args()
    import gantrain.recipes.gan.run as run_module
    from gantrain.data import registry
    from gantrain.recipes.registry import load_config

    data_time = []
    build_data = run_module.build_data

    def timed_build_data(*a, **k):
        t = time.perf_counter()
        out = build_data(*a, **k)
        data_time.append(time.perf_counter() - t)
        return out

    run_module.build_data = timed_build_data
    assert registry.build_data is build_data
    t = time.perf_counter()
    config = load_config(args.preset, ["train.progress=false", *args.overrides])
    run = run_module.GANRun(config, Path(tempfile.mkdtemp(prefix="gantrain-start-")) / "run")
    t_build = time.perf_counter() - t
    ctx, compile_s = run.loop.ctx, {}
    for phase in run.schedule.phases:
        name = phase.target.name
        if name in compile_s:
            continue
        inputs = phase.inputs(ctx)
        t = time.perf_counter()
        phase.target.step(*inputs)[0].asnumpy()
        first = time.perf_counter() - t
        t = time.perf_counter()
        phase.target.step(*inputs)[0].asnumpy()
        compile_s[name] = round(first - (time.perf_counter() - t), 3)
    t = time.perf_counter()
    run.loop.run(1)
    t_first_loop = time.perf_counter() - t
    total = time.perf_counter() - T0
    out = {
        "import_s": round(T_IMPORT, 3), "build_s": round(t_build, 3),
        "dataset_build_s": round(sum(data_time), 4), "compile_s": compile_s,
        "first_loop_iteration_s": round(t_first_loop, 3),
        "time_to_first_iteration_s": round(total, 3),
    }
    run.loop.run(1 + args.iters)
    out["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    if args.long:  # RSS every 100 iterations, printed as it goes (a slow run still reports)
        out["rss_mb_by_iteration"] = {}
        t, start = time.perf_counter(), run.loop.iteration
        for stop in range(100, args.long + 1, 100):
            run.loop.run(stop)
            out["rss_mb_by_iteration"][stop] = round(rss_mb())
            print(json.dumps({"iteration": stop, "rss_mb": round(rss_mb())}), flush=True)
        out["long_it_s"] = round((args.long - start) / (time.perf_counter() - t), 3)
        out["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
