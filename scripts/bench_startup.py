"""Start-up and memory of one preset, measured in a fresh process (run by scripts/benchmark.py).

    python scripts/bench_startup.py PRESET [--set KEY=VALUE ...] [--iters 20] [--long 2000]
                                           [--data-cache DIR]
    python scripts/bench_startup.py PRESET --compare ROUNDS   # cold vs warm data cache

Prints one JSON line: seconds spent importing gantrain + mindspore, building the run (dataset,
nets, players; the dataset build is timed on its own), compiling each player's step (first call
minus a second call), the first loop iteration after that (end-of-run hooks off, as in
scripts/benchmark.py: no final sample grid, evaluation or checkpoint), the total from process
start to the end of the first iteration (less the timing's extra second step calls), and the
peak RSS after ``--iters`` more iterations and one more that ends a run (final
sample grid, evaluation, checkpoint: ``end_of_run_s``). ``rss_mb``
gives the resident set at each stage (``rss`` = VmRSS, split into ``anon`` = RssAnon and
``file`` = RssFile: mapped libraries and files) from /proc/self/status. ``--long N`` also
reports the resident set size every 100 iterations up to N (growth over a long run).

``--data-cache DIR`` points the data cache (prepared datasets, the rendered embedded digits)
at DIR. ``--compare ROUNDS`` runs the measurement in fresh child processes, ROUNDS times a
cold child (empty data cache) then a warm child (the cache the cold one filled), back to back,
and prints each child's line and a summary with the load average before and after.
"""

from __future__ import annotations

import time

T0 = time.perf_counter()


def rss_stage() -> dict[str, float]:
    """VmRSS, RssAnon and RssFile of this process now, in MB (stdlib only: runs before imports)."""
    fields = {"VmRSS:": "rss", "RssAnon:": "anon", "RssFile:": "file"}
    out = {}
    with open("/proc/self/status") as status:
        for line in status:
            key = line.split(maxsplit=1)[0]
            if key in fields:
                out[fields[key]] = round(int(line.split()[1]) / 1024, 1)
    return out


RSS = {"python": rss_stage()}

# isort: split
import argparse  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import resource  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
from pathlib import Path  # noqa: E402

import gantrain  # noqa: E402, F401  (before mindspore: sets its environment)

# isort: split
import mindspore  # noqa: E402, F401

T_IMPORT = time.perf_counter() - T0
RSS["import"] = rss_stage()


def rss_mb() -> float:
    """Current resident set size (VmRSS) in MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def compare(args: argparse.Namespace) -> None:
    """Cold then warm data cache, ROUNDS times, each in a fresh child process."""
    cmd = [sys.executable, __file__, args.preset, "--iters", str(args.iters)]
    for o in args.overrides:
        cmd += ["--set", o]
    rows, load_before = [], os.getloadavg()
    for _ in range(args.compare):
        cache = tempfile.mkdtemp(prefix="gantrain-data-cache-")
        for label in ("cold", "warm"):
            done = subprocess.run([*cmd, "--data-cache", cache], capture_output=True, text=True)
            if done.returncode:
                raise SystemExit(f"{label} child failed: {done.stderr[-2000:]}")
            row = {"cache": label, **json.loads(done.stdout.strip().splitlines()[-1])}
            rows.append(row)
            print(json.dumps(row), flush=True)
    summary = {"load_average_before": load_before, "load_average_after": os.getloadavg()}
    for label in ("cold", "warm"):
        mine = [r for r in rows if r["cache"] == label]
        summary[label] = {key: sorted(r[key] for r in mine) for key in
                          ("dataset_build_s", "build_s", "time_to_first_iteration_s")}
    print(json.dumps(summary), flush=True)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("preset")
    p.add_argument("--set", dest="overrides", action="append", default=[])
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--long", type=int, default=0)
    p.add_argument("--data-cache", help="data cache folder for this run")
    p.add_argument("--compare", type=int, default=0, metavar="ROUNDS",
                   help="cold vs warm data cache in fresh child processes")
    args = p.parse_args()
    if args.compare:
        return compare(args)
    if args.data_cache:
        os.environ["GANTRAIN_DATA_CACHE"] = args.data_cache
    import gantrain.recipes.gan.run as run_module
    from gantrain.data import registry
    from gantrain.recipes.registry import load_config

    data_time = []
    build_data = run_module.build_data

    def timed_build_data(*a, **k):
        t = time.perf_counter()
        out = build_data(*a, **k)
        data_time.append(time.perf_counter() - t)
        RSS["dataset"] = rss_stage()
        return out

    run_module.build_data = timed_build_data
    assert registry.build_data is build_data
    t = time.perf_counter()
    config = load_config(args.preset, ["train.progress=false", *args.overrides])
    run = run_module.GANRun(config, Path(tempfile.mkdtemp(prefix="gantrain-start-")) / "run")
    t_build = time.perf_counter() - t
    RSS["build"] = rss_stage()
    for hook in run.loop.hooks:  # each loop.run() below would end a run (samples, checkpoint)
        if hasattr(hook, "at_end"):
            hook.at_end = False
    ctx, compile_s, extra = run.loop.ctx, {}, 0.0
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
        second = time.perf_counter() - t
        compile_s[name] = round(first - second, 3)
        extra += second  # a call a training run would not make
        RSS[f"compile_{name}"] = rss_stage()
    t = time.perf_counter()
    run.loop.run(1)
    t_first_loop = time.perf_counter() - t
    total = time.perf_counter() - T0 - extra
    RSS["first_iteration"] = rss_stage()
    out = {
        "import_s": round(T_IMPORT, 3), "build_s": round(t_build, 3),
        "dataset_build_s": round(sum(data_time), 4), "compile_s": compile_s,
        "first_loop_iteration_s": round(t_first_loop, 3),
        "time_to_first_iteration_s": round(total, 3),
    }
    run.loop.run(1 + args.iters)
    RSS[f"iteration_{1 + args.iters}"] = rss_stage()
    for hook in run.loop.hooks:  # one end of a run: final sample grid, evaluation, checkpoint
        if hasattr(hook, "at_end"):
            hook.at_end = True
    t = time.perf_counter()
    run.loop.run(2 + args.iters)
    out["end_of_run_s"] = round(time.perf_counter() - t, 3)
    RSS["end_of_run"] = rss_stage()
    for hook in run.loop.hooks:
        if hasattr(hook, "at_end"):
            hook.at_end = False
    out["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
    dataset = run.data.dataset
    out["dataset_mb"] = round(getattr(dataset.x, "nbytes", 0) / 2**20, 1) if dataset else 0
    out["rss_mb"] = RSS
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
