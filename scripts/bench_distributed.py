"""What data parallelism costs on this machine, and a paper estimate for 8 devices.

    python scripts/bench_distributed.py [--preset dcgan_digits] [--steps 40] [--out FILE.json]

Measures, for the preset (default: the default DCGAN, global batch 64):

* ``init()``: how long ``mindspore.communication.init()`` takes on each of 2 workers;
* the launch: wall time of ``msrun`` with 2 workers that only join and leave;
* all-reduce cost per iteration: the mean of G's and D's losses and gradients, on
  gradient-sized Tensors inside jitted functions, as the players' steps do it (one flat
  all-reduce per player) and, side by side, one ``nn.DistributedGradReducer`` call per Tensor;
  plus the per-iteration stop agreement;
* throughput: training iterations per second with 1 process (batch 64) and with 2 workers
  (32 each), after a warm-up that compiles every step, both measured in this one run;
* a paper estimate for 8 devices: a ring all-reduce moves 2 (N - 1) / N times the gradient bytes
  through each device's link, at a typical interconnect bandwidth.

On a 2-core CPU two workers share the cores, so no speed-up is expected; the figures show the
overhead. Timings taken while other jobs load the machine say so in the table's header: re-run on
an idle machine for clean numbers.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
LINKS_GBPS = {"PCIe 4.0 x16 (~25 GB/s)": 25.0, "Ascend HCCS (~56 GB/s)": 56.0,
              "NVLink 3 (~300 GB/s)": 300.0}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")])
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    return env


def _msrun(workers: int, args: list[str], log_dir: Path) -> float:
    """Run this script's worker role under msrun; return the wall time in seconds."""
    msrun = Path(sys.executable).parent / "msrun"
    cmd = [str(msrun), f"--worker_num={workers}", f"--local_worker_num={workers}",
           "--master_addr=127.0.0.1", f"--master_port={_free_port()}", "--join=True",
           "--cluster_time_out=120", f"--log_dir={log_dir}", str(Path(__file__).resolve()),
           *args]
    start = time.perf_counter()
    subprocess.run(cmd, env=_env(), check=True, timeout=900, stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def _gradient_sizes(run) -> dict[str, int]:
    return {p.name: sum(int(q.size) for q in p.parameters) for p in run.player_list}


def _allreduce_ms(run, calls: int = 20) -> dict[str, dict[str, float]]:
    """Time of one iteration's all-reduces, median and fastest over ``calls``, in ms, two ways
    side by side: "per tensor", what the players run (``dist.reduce_gradients``: one
    ``nn.DistributedGradReducer`` call per gradient Tensor, one for the loss), and "fused", the
    lever tried and dropped (a player's loss and gradients concatenated into one flat
    all-reduce and split again); both plus the stop agreement. The fastest is the cost with the
    least scheduling noise: on a loaded machine a rank often waits for the other one."""
    import mindspore as ms
    from mindspore import ops

    from gantrain.engine import dist

    size = dist.world().size
    # mutable: a plain tuple of Tensors would compile a new graph on every call
    grads = [ms.mutable(tuple(ops.zeros_like(q) for q in p.parameters)) for p in run.player_list]
    allreduce = ops.AllReduce()

    def per_tensor(player):
        def grad_fn(g):
            return (ops.reduce_sum(g[0]), ()), g

        reduced = dist.reduce_gradients(grad_fn, player.optimizer.parameters)

        @ms.jit
        def call(g):
            (loss, _), out = reduced(g)
            return loss, out

        return call

    def fused(player):
        shapes = [tuple(q.shape) for q in player.parameters]
        sizes = [int(q.size) for q in player.parameters]

        @ms.jit
        def call(g):
            parts = [ops.reshape(ops.reduce_sum(g[0]), (1,))] + [ops.reshape(x, (-1,)) for x in g]
            flat = allreduce(ops.concat(parts)) * (1.0 / size)
            out, start = [], 1
            for shape, n in zip(shapes, sizes):
                out.append(ops.reshape(flat[start:start + n], shape))
                start += n
            return flat[0], tuple(out)

        return call

    figures = {}
    for name, make in (("per tensor", per_tensor), ("fused", fused)):
        fns = [make(p) for p in run.player_list]
        for fn, g in zip(fns, grads):  # compile
            fn(g)[0].asnumpy()
        times = []
        for _ in range(calls):
            dist.barrier()  # start together: the figure should not include a late rank's lag
            start = time.perf_counter()
            for fn, g in zip(fns, grads):
                fn(g)[0].asnumpy()
            dist.any_rank(False)
            times.append((time.perf_counter() - start) * 1e3)
        figures[name] = {"median": float(np.median(times)), "min": min(times)}
    return figures


def worker(args: argparse.Namespace) -> None:
    """One process of the measurement (alone, or one rank under msrun)."""
    import gantrain  # noqa: F401
    from gantrain.engine import dist, runtime
    from gantrain.recipes.registry import build_run, load_config

    config = load_config(args.preset, ["train.progress=false", "train.sample_every=1000000",
                                       "train.checkpoint_every=1000000", "train.log_every=1000000"])
    runtime.setup(config.device, config.seed)
    start = time.perf_counter()
    world = dist.init() if dist.in_cluster() else dist.world()
    init_s = time.perf_counter() - start
    with tempfile.TemporaryDirectory() as tmp:
        run = build_run(config, Path(tmp) / "run")
        run.loop.hooks = []  # steps only: no metrics, samples or checkpoints in the timing
        run.loop.run(args.warmup)
        start = time.perf_counter()
        run.loop.run(args.warmup + args.steps)
        its = args.steps / (time.perf_counter() - start)
        result = {"rank": world.rank, "workers": world.size, "init_s": init_s,
                  "iterations_per_s": its, "gradient_values": _gradient_sizes(run)}
        if world.size > 1:
            result["allreduce_ms_per_iteration"] = _allreduce_ms(run)
    dist.barrier()  # every rank finishes measuring before any leaves the job
    with open(Path(args.result) / f"{world.size}_{world.rank}.json", "w") as f:
        json.dump(result, f)


def estimate(values: int, devices: int = 8) -> dict[str, float]:
    """Milliseconds per iteration to all-reduce ``values`` float32 gradients over ``devices``
    with a ring all-reduce, for each bandwidth in ``LINKS_GBPS`` (bandwidth term only)."""
    moved = 2 * (devices - 1) / devices * values * 4
    return {link: moved / (gbps * 1e9) * 1e3 for link, gbps in LINKS_GBPS.items()}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--preset", default="dcgan_digits")
    p.add_argument("--steps", type=int, default=40, help="timed iterations per setup")
    p.add_argument("--warmup", type=int, default=5, help="untimed iterations (compiles)")
    p.add_argument("--out", help="also write the figures as JSON here")
    p.add_argument("--result", help=argparse.SUPPRESS)  # worker role: folder for its JSON
    args = p.parse_args()
    if args.result:
        return worker(args)
    loadavg = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        common = ["--preset", args.preset, "--steps", str(args.steps), "--warmup",
                  str(args.warmup), "--result", str(tmp)]
        subprocess.run([sys.executable, __file__, *common], env=_env(), check=True, timeout=900)
        wall = _msrun(2, common, tmp / "logs")
        one = json.loads((tmp / "1_0.json").read_text())
        ranks = [json.loads((tmp / f"2_{r}.json").read_text()) for r in range(2)]
    values = sum(one["gradient_values"].values())
    figures = {
        "preset": args.preset, "load_average_at_start": loadavg,
        "init_s": [r["init_s"] for r in ranks],
        "msrun_job_wall_s": wall,
        "allreduce_ms_per_iteration": ranks[0]["allreduce_ms_per_iteration"],
        "iterations_per_s": {"1 process": one["iterations_per_s"],
                             "2 workers": min(r["iterations_per_s"] for r in ranks)},
        "gradient_values": one["gradient_values"],
        "estimate_8_devices_ms": estimate(values),
    }
    its = figures["iterations_per_s"]
    print(f"## Data parallel on this machine ({args.preset}, global batch as in the preset; "
          f"load average {loadavg:.1f} at start)\n")
    print("| figure | value |\n| --- | --- |")
    print(f"| init() on each rank | {', '.join(f'{t:.1f} s' for t in figures['init_s'])} |")
    print(f"| whole 2-worker msrun job (launch, init, build, compile, {args.warmup}+"
          f"{args.steps} iterations) | {wall:.0f} s |")
    for way, ms_ in figures["allreduce_ms_per_iteration"].items():
        label = "as gantrain does it" if way == "per tensor" else "tried, not used"
        print(f"| all-reduce per iteration, {way}, {label} (G + D: {values / 1e6:.2f} M "
              f"values, + stop agreement), median (fastest) | {ms_['median']:.1f} ms "
              f"({ms_['min']:.1f} ms) |")
    print(f"| iterations/s, 1 process | {its['1 process']:.2f} |")
    print(f"| iterations/s, 2 workers | {its['2 workers']:.2f} "
          f"({its['2 workers'] / its['1 process']:.2f}x) |")
    print(f"\nPaper estimate, 8 devices, ring all-reduce of {values * 4 / 1e6:.1f} MB of "
          "float32 gradients per iteration (bandwidth term only, plus ~10-50 us latency per "
          "call):\n")
    for link, ms_ in figures["estimate_8_devices_ms"].items():
        print(f"- {link}: {ms_:.2f} ms per iteration")
    if args.out:
        Path(args.out).write_text(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()
