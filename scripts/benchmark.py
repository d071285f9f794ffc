"""Training-speed benchmark: gantrain's loop against a hand-written MindSpore loop and PyTorch.

    python scripts/benchmark.py [--presets gan_2d_grid dcgan_digits ...] [--seconds 8]
                                [--rounds 3] [--modes loader memory] [--set KEY=VALUE ...]
                                [--out benchmark.json] [--quick] [--no-torch] [--rss-long]
                                [--mnist-root DIR]
    python scripts/benchmark.py --table benchmark.json   # the markdown tables of a result

For each preset, interleaved round by round (a, b, c, a, b, c, ...) so that the ratios survive a
noisy machine:

* (a) ``gantrain``: the preset's full training loop (hooks, logging, sampling and checkpoints at
  the preset's intervals; progress bar off; the end-of-run sample and checkpoint, which a
  training run does once, are not repeated at the end of every timed round);
* (b) ``handwritten``: the same nets, batch, optimizers, loss, penalty and EMA in the seed style
  (``scripts/bench_handwritten.py``);
* (c) ``torch``: the same architecture and recipe in PyTorch eager (``scripts/torch_baseline.py``),
  when torch is importable, with as many threads as MindSpore's ``runtime_num_threads``;
* ``steps only``: gantrain's compiled steps back to back on fixed inputs, which gives the share of
  wall time spent outside the jitted steps (data, noise, hooks, Python).

Each column runs in two modes: ``loader`` (batches cut from the dataset every D step) and
``memory`` (every D step reuses one pre-made batch). A fresh subprocess
(``scripts/bench_startup.py``) measures time to first iteration (import + build + compile),
compile time per player and peak RSS of gantrain alone. Results go to ``--out`` as JSON.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import gantrain  # noqa: F401  (sets MindSpore's environment before it loads)

# isort: split
import mindspore as ms
import numpy as np
from mindspore import Tensor

from gantrain.engine import runtime
from gantrain.recipes.gan.config import GANConfig as Config
from gantrain.recipes.gan.run import GANRun
from gantrain.recipes.registry import load_config

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_handwritten import Handwritten, supported  # noqa: E402

HERE = Path(__file__).resolve().parent
PRESETS = ["gan_2d_grid", "dcgan_digits", "wgan_gp_mnist", "sngan_hinge_cifar10"]
# 4,000 real MNIST digits shared next to the checkout: <repository>/../shared/data/mnist5k
MNIST5K = HERE.parents[1] / "shared" / "data" / "mnist5k"
QUICK = {  # tiny nets and data for the smoke run
    "gan_2d_grid": ["data.batch_size=64", "generator.args.width=16",
                    "discriminator.args.width=16"],
    "default": ["data.batch_size=16", "generator.args.width=8", "discriminator.args.width=8"],
}


def preset_overrides(preset: str, quick: bool,
                     mnist_root: Path = MNIST5K) -> tuple[list[str], str]:
    """Data overrides that make a preset run without downloads, and a note saying so."""
    sets, note = [], ""
    if preset == "wgan_gp_mnist":
        if (mnist_root / "train-images-idx3-ubyte.gz").exists():
            sets = [f'data.args.root="{mnist_root.resolve()}"']
            note = "real MNIST (mnist5k, 4,000 digits)"
        else:
            sets = ['data.dataset="digits"', "data.args={n = 10000, size = 28}"]
            note = "mnist5k absent: embedded digits"
    elif preset == "sngan_hinge_cifar10":
        path = Path(tempfile.gettempdir()) / "gantrain-bench-fake-cifar.npy"
        if not path.exists():
            rng = np.random.default_rng(0)
            np.save(path, rng.integers(0, 256, (2000, 32, 32, 3), dtype=np.uint8))
        sets = ['data.dataset="array"', f'data.args={{path = "{path}"}}']
        note = "CIFAR-10 absent: 2,000 random 32x32x3 uint8 images (same shapes and cost)"
    elif preset == "dcgan_digits" and quick:
        sets = ["data.args.n=256"]
    if quick:
        sets += QUICK.get(preset, QUICK["default"])
    return sets, note


def _portable(override: str) -> str:
    """``override`` with this machine's path to the checkout's parent folder written as ``..``
    relative to the checkout, so the JSON written into docs/ names no machine's paths."""
    return override.replace(str(HERE.parents[1]), "..")


def time_gantrain(run: GANRun, iters: int) -> float:
    start = time.perf_counter()
    run.loop.run(run.loop.iteration + iters)
    list(run.loop.outputs.values())[-1][0].asnumpy()
    return time.perf_counter() - start


def time_steps_only(run: GANRun, iters: int) -> float:
    """gantrain's compiled steps back to back on inputs built once, in schedule order."""
    ctx = run.loop.ctx
    calls = []
    for phase in run.schedule.phases:
        if phase.every == 1:
            calls += [(phase.target, phase.inputs(ctx))] * phase.repeats
    start = time.perf_counter()
    for _ in range(iters):
        for target, inputs in calls:
            out = target.step(*inputs)
    out[0].asnumpy()
    return time.perf_counter() - start


def set_memory_mode(run: GANRun, batch: tuple | None) -> None:
    """Memory mode: every ``ctx.batch()`` returns the same pre-made Tensors."""
    ctx = run.loop.ctx
    if batch is None:
        ctx.__dict__.pop("batch", None)
    else:
        tensors = tuple(Tensor(a) for a in batch)
        ctx.batch = lambda: tensors


def baseline_source(run: GANRun, seed: int = 1):
    """``next_x()`` for the baselines: the same kind of stream gantrain's loader draws from."""
    ds = run.data.dataset
    if ds is not None:
        rng, n, b = np.random.default_rng(seed), len(ds.x), run.config.data.batch_size

        def next_x():
            return ds.x[np.sort(rng.choice(n, b, replace=False))]

        return next_x
    source = copy.deepcopy(run.data.source)
    return lambda: source.next_batch()[0]


def startup(preset: str, overrides: list[str], iters: int, long: int = 0) -> dict:
    cmd = [sys.executable, str(HERE / "bench_startup.py"), preset, "--iters", str(iters)]
    for o in overrides:
        cmd += ["--set", o]
    if long:
        cmd += ["--long", str(long)]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode:  # keep the speed results; say what failed
        return {"error": f"exit {out.returncode}: {out.stderr[-500:]}", "compile_s": {},
                "import_s": None, "build_s": None, "time_to_first_iteration_s": None,
                "peak_rss_mb": None}
    return json.loads(out.stdout.strip().splitlines()[-1])


def stats(xs: list[float]) -> dict | None:
    if not xs:
        return None
    return {"median": round(statistics.median(xs), 3), "min": round(min(xs), 3),
            "max": round(max(xs), 3)}


def ratio(a: list[float], b: list[float]) -> float | None:
    return round(statistics.median(a) / statistics.median(b), 3) if a and b else None


def bench(preset: str, args: argparse.Namespace, torch_loop) -> dict:
    sets, note = preset_overrides(preset, args.quick, Path(args.mnist_root))
    overrides = [*sets, *args.overrides]
    config: Config = load_config(preset, ["train.progress=false", *overrides])
    run = GANRun(config, Path(tempfile.mkdtemp(prefix="gantrain-bench-")) / "run")
    run.loop.run(1)
    for hook in run.loop.hooks:  # each timed round is a loop.run(); a training run ends once
        if hasattr(hook, "at_end"):
            hook.at_end = False
    reason = supported(config)
    hand = None
    if not reason:
        runtime.setup(config.device, config.seed)
        hand = Handwritten(config, baseline_source(run))
        hand.run(1)
    torch = None
    if torch_loop is not None:
        torch = torch_loop(config, baseline_source(run, 2), threads=args.threads)
        torch.run(1)
    # Calibrate: iterations per round so that gantrain's round takes about --seconds.
    iters = args.iters
    if iters is None:
        rate = 2 / time_gantrain(run, 2)
        iters = max(args.min_iters, int(rate * args.seconds))
    batch = run.data.source.next_batch()
    cols = {f"{m}_{c}": [] for m in args.modes for c in ("gantrain", "handwritten", "torch")}
    steps = []
    for _ in range(args.rounds):
        for mode in args.modes:
            fixed = batch if mode == "memory" else None
            set_memory_mode(run, fixed)
            cols[f"{mode}_gantrain"].append(iters / time_gantrain(run, iters))
            if hand is not None:
                hand.set_fixed(fixed[0] if fixed else None)
                cols[f"{mode}_handwritten"].append(iters / hand.run(iters))
            if torch is not None:
                torch.fixed = torch_tensor(fixed[0]) if fixed else None
                cols[f"{mode}_torch"].append(iters / torch.run(iters))
        set_memory_mode(run, None)
        steps.append(iters / time_steps_only(run, iters))
    row = {"preset": preset, "data_note": note, "overrides": [_portable(o) for o in overrides],
           "iters_per_round": iters, "rounds": args.rounds, "steps_only_it_s": stats(steps),
           "baseline_note": reason}
    for mode in args.modes:
        a, b, c = (cols[f"{mode}_{k}"] for k in ("gantrain", "handwritten", "torch"))
        row[mode] = {"gantrain_it_s": stats(a), "handwritten_it_s": stats(b),
                     "torch_it_s": stats(c), "ratio_gantrain_handwritten": ratio(a, b),
                     "ratio_gantrain_torch": ratio(a, c)}
    row["outside_steps_share"] = round(1 - statistics.median(cols[f"{args.modes[0]}_gantrain"])
                                       / statistics.median(steps), 3)
    row["startup"] = startup(preset, overrides, 3 if args.quick else 20,
                             2000 if args.rss_long and preset == "dcgan_digits" else 0)
    return row


def torch_tensor(a: np.ndarray):
    import torch

    return torch.from_numpy(np.ascontiguousarray(a))


def environment(threads: int, with_torch: bool) -> dict:
    env = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
           "machine": platform.processor() or platform.machine(), "cpus": os.cpu_count(),
           "python": platform.python_version(), "mindspore": ms.__version__,
           "numpy": np.__version__, "gantrain": gantrain.__version__,
           "ONEDNN_MAX_CPU_ISA": os.environ.get("ONEDNN_MAX_CPU_ISA"),
           "mindspore_runtime_num_threads": ms.get_context("runtime_num_threads"),
           "torch_threads": threads if with_torch else None,
           "load_average_start": os.getloadavg()}
    try:
        cpu = [ln for ln in Path("/proc/cpuinfo").read_text().splitlines()
               if ln.startswith("model name")]
        env["cpu"] = cpu[0].split(":", 1)[1].strip() if cpu else ""
    except OSError:
        pass
    if with_torch:
        import torch

        env["torch"] = torch.__version__
    return env


def fmt(s: dict | None) -> str:
    return f"{s['median']} ({s['min']}-{s['max']})" if s else "-"


def table(result: dict) -> str:
    """The results as the markdown table of docs/performance.md."""
    lines = ["| preset | data | gantrain it/s (min-max) | hand-written | torch | a/b | a/c |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for row in result["presets"]:
        for mode in ("loader", "memory"):
            if mode in row:
                r = row[mode]
                lines.append(f"| {row['preset']} | {mode} | {fmt(r['gantrain_it_s'])} | "
                             f"{fmt(r['handwritten_it_s'])} | {fmt(r['torch_it_s'])} | "
                             f"{r['ratio_gantrain_handwritten']} | {r['ratio_gantrain_torch']} |")
    lines += ["", "| preset | outside steps | first iteration (import, build, compile D, G) | "
              "peak RSS |", "| --- | --- | --- | --- |"]
    for row in result["presets"]:
        st = row["startup"]
        compile_s = ", ".join(f"{v} s" for v in st["compile_s"].values())
        lines.append(f"| {row['preset']} | {100 * row['outside_steps_share']:.0f}% | "
                     f"{st['time_to_first_iteration_s']} s ({st['import_s']} s, {st['build_s']} s,"
                     f" {compile_s}) | {st['peak_rss_mb']} MB |")
    return "\n".join(lines)


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--table":  # markdown from a saved result
        print(table(json.loads(Path(sys.argv[2]).read_text())))
        return
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--presets", nargs="+", default=PRESETS)
    p.add_argument("--seconds", type=float, default=8.0, help="target seconds per round (a)")
    p.add_argument("--iters", type=int, help="iterations per round (default: from --seconds)")
    p.add_argument("--min-iters", type=int, default=2, help="floor of the calibrated iters")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--torch-threads", type=int,
                   help="torch.set_num_threads (default: MindSpore's runtime_num_threads)")
    p.add_argument("--modes", nargs="+", default=["loader", "memory"],
                   choices=["loader", "memory"])
    p.add_argument("--set", dest="overrides", action="append", default=[])
    p.add_argument("--out", default="benchmark.json")
    p.add_argument("--mnist-root", default=str(MNIST5K),
                   help="MNIST IDX files for wgan_gp_mnist (default: ../shared/data/mnist5k "
                        "next to the checkout; embedded digits when absent)")
    p.add_argument("--quick", action="store_true", help="tiny smoke run (a test uses it)")
    p.add_argument("--no-torch", action="store_true", help="skip the PyTorch column")
    p.add_argument("--rss-long", action="store_true",
                   help="dcgan_digits: also RSS at iteration 100 and 2,000 (slow)")
    args = p.parse_args()
    if args.quick:
        args.iters, args.rounds = args.iters or 3, 1
    runtime.setup("CPU", 0)
    args.threads = args.torch_threads or int(ms.get_context("runtime_num_threads"))
    torch_loop = None
    if not args.no_torch:
        try:
            from torch_baseline import TorchLoop as torch_loop
        except ImportError:
            torch_loop = None
    result = {"environment": environment(args.threads, torch_loop is not None), "presets": []}
    for preset in args.presets:
        row = bench(preset, args, torch_loop)
        result["presets"].append(row)
        st = row["startup"]
        for mode in args.modes:
            r = row[mode]
            print(f"{preset} [{mode}]: gantrain {fmt(r['gantrain_it_s'])} it/s, "
                  f"hand-written {fmt(r['handwritten_it_s'])}, torch {fmt(r['torch_it_s'])}; "
                  f"ratio a/b {r['ratio_gantrain_handwritten']}, "
                  f"a/c {r['ratio_gantrain_torch']}", flush=True)
        print(f"{preset}: outside steps {100 * row['outside_steps_share']:.1f}%, first iteration "
              f"{st['time_to_first_iteration_s']} s (import {st['import_s']}, build "
              f"{st['build_s']}, compile {st['compile_s']}), peak RSS {st['peak_rss_mb']} MB",
              flush=True)
        result["environment"]["load_average_end"] = os.getloadavg()
        Path(args.out).write_text(json.dumps(result, indent=1))
    print(table(result))


if __name__ == "__main__":
    main()
