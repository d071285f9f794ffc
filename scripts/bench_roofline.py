"""How fast could any implementation of a preset's nets run on this CPU? A roofline check.

Issue 18 asks gantrain for a multiple of PyTorch eager's speed. That is only possible when
PyTorch leaves that much of the machine unused. This script counts the floating-point work of
one training iteration of the PyTorch baseline (``scripts/torch_baseline.py``: the same nets,
batch, loss, penalty, packing and EMA as the preset) with ``torch.utils.flop_counter`` (matmuls
and convolutions, forward, backward and the penalty's double backward), measures the machine's
peak with a large float32 matmul, and times PyTorch's iteration and gantrain's compiled steps
on one fixed batch, interleaved round by round in this process. It prints, per preset:

* the floor: the iteration time if every counted FLOP ran at the matmul peak and everything
  else (element-wise ops, Adam, EMA, launch) were free;
* the share of the peak that PyTorch and gantrain reach;
* the largest speed-up over PyTorch the floor allows (PyTorch's time / the floor), next to the
  issue's target. A target above that ratio is out of reach for any implementation here.

    python scripts/bench_roofline.py --out roofline.json
    python scripts/bench_roofline.py --presets gan_2d_grid --rounds 3

Needs torch (``pip install torch --index-url https://download.pytorch.org/whl/cpu``); torch is
never a dependency of gantrain.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import gantrain  # noqa: F401  (sets MindSpore's environment before it loads)

# isort: split
import mindspore as ms
import numpy as np

from gantrain.engine import runtime
from gantrain.recipes.gan.run import GANRun
from gantrain.recipes.registry import load_config

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from benchmark import MNIST5K, PRESETS, preset_overrides, set_memory_mode  # noqa: E402

TARGETS = {"gan_2d_grid": 1.5, "dcgan_digits": 1.0, "wgan_gp_mnist": 1.0,
           "sngan_hinge_cifar10": 1.0}


def median_time(fn, calls: int, rounds: int) -> float:
    """Seconds per call: the median of ``rounds`` timings of ``calls`` calls."""
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        times.append((time.perf_counter() - start) / calls)
    return statistics.median(times)


def matmul_peak(rounds: int) -> dict:
    """GFLOP/s of a 2048x512x512 float32 matmul in each framework (2 threads each)."""
    import torch

    m, k, n = 2048, 512, 512
    a, b = torch.randn(m, k), torch.randn(k, n)
    ms_a, ms_b = ms.Tensor(a.numpy()), ms.Tensor(b.numpy())

    @ms.jit
    def ms_mm(x, y):
        return ms.ops.matmul(x, y)

    ms_mm(ms_a, ms_b).asnumpy()
    flop = 2 * m * k * n
    torch_s = median_time(lambda: a @ b, 50, rounds)
    ms_s = median_time(lambda: ms_mm(ms_a, ms_b).asnumpy(), 50, rounds)
    return {"shape": [m, k, n], "torch_gflop_s": flop / torch_s / 1e9,
            "mindspore_gflop_s": flop / ms_s / 1e9}


def count_flops(loop) -> tuple[int, dict[str, int]]:
    """FLOPs of one ``loop.iteration()`` by op, with ``torch.utils.flop_counter``'s formulas.

    A bare dispatch mode rather than ``FlopCounterMode``: the latter's module hooks refuse
    ``autograd.grad`` on a leaf (the WGAN-GP penalty's interpolates)."""
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils.flop_counter import flop_registry

    by_op: dict[str, int] = {}

    class Count(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            out = func(*args, **kwargs)
            formula = flop_registry.get(func._overloadpacket)
            if formula is not None:
                name = str(func._overloadpacket)
                by_op[name] = by_op.get(name, 0) + int(formula(*args, **kwargs, out_val=out))
            return out

    with Count():
        loop.iteration()
    return sum(by_op.values()), by_op


def gantrain_steps(run: GANRun):
    """One iteration of gantrain's compiled steps on inputs built once, in schedule order."""
    ctx, calls = run.loop.ctx, []
    for phase in run.schedule.phases:
        if phase.every == 1:
            calls += [(phase.target, phase.inputs(ctx))] * phase.repeats

    def iteration():
        for target, inputs in calls:
            out = target.step(*inputs)
        out[0].asnumpy()

    return iteration


def preset_row(preset: str, args: argparse.Namespace, peak: float) -> dict:
    from torch_baseline import TorchLoop

    sets, note = preset_overrides(preset, False, Path(args.mnist_root))
    config = load_config(preset, ["train.progress=false", *sets])
    run = GANRun(config, Path(tempfile.mkdtemp(prefix="gantrain-roofline-")) / "run")
    batch = run.data.source.next_batch()
    set_memory_mode(run, batch)
    run.loop.run(2)
    steps = gantrain_steps(run)
    fixed = np.asarray(batch[0])
    torch_loop = TorchLoop(config, lambda: fixed, fixed=fixed,
                           threads=int(ms.get_context("runtime_num_threads")))
    torch_loop.run(2)
    flop, by_op = count_flops(torch_loop)
    floor_s = flop / (peak * 1e9)
    calls = max(2, int(args.seconds / max(floor_s * 4, 1e-4)))
    torch_s, ours_s = [], []
    for _ in range(args.rounds):
        torch_s.append(median_time(lambda: float(torch_loop.iteration()), calls, 1))
        ours_s.append(median_time(steps, calls, 1))
    t_torch, t_ours = statistics.median(torch_s), statistics.median(ours_s)
    return {"preset": preset, "data_note": note, "mflop_per_iteration": flop / 1e6,
            "mflop_by_op": {k: v / 1e6 for k, v in by_op.items()},
            "floor_ms": floor_s * 1e3, "torch_ms": t_torch * 1e3, "gantrain_steps_ms": t_ours * 1e3,
            "torch_share_of_peak": floor_s / t_torch, "gantrain_share_of_peak": floor_s / t_ours,
            "max_ratio_vs_torch": t_torch / floor_s, "target_ratio": TARGETS.get(preset),
            "gantrain_vs_torch": t_torch / t_ours, "calls_per_round": calls,
            "torch_ms_rounds": [x * 1e3 for x in torch_s],
            "gantrain_ms_rounds": [x * 1e3 for x in ours_s]}


def table(result: dict) -> str:
    peak = result["peak"]
    lines = [f"matmul peak {peak['shape']}: torch {peak['torch_gflop_s']:.0f} GFLOP/s, MindSpore "
             f"{peak['mindspore_gflop_s']:.0f} GFLOP/s; load {result['load_average']}", "",
             "| preset | MFLOP / iteration | floor ms | torch ms (share of peak) | gantrain steps "
             "ms (share) | gantrain / torch | largest ratio the floor allows (at MindSpore's "
             "matmul peak) | target |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    own = peak["mindspore_gflop_s"] / max(peak["torch_gflop_s"], peak["mindspore_gflop_s"])
    for r in result["presets"]:
        lines.append(
            f"| {r['preset']} | {r['mflop_per_iteration']:.0f} | {r['floor_ms']:.2f} | "
            f"{r['torch_ms']:.2f} ({100 * r['torch_share_of_peak']:.0f}%) | "
            f"{r['gantrain_steps_ms']:.2f} ({100 * r['gantrain_share_of_peak']:.0f}%) | "
            f"{r['gantrain_vs_torch']:.2f} | {r['max_ratio_vs_torch']:.2f} "
            f"({r['max_ratio_vs_torch'] * own:.2f}) | "
            f"{r['target_ratio']} |")
    return "\n".join(lines)


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--table":
        print(table(json.loads(Path(sys.argv[2]).read_text())))
        return
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--presets", nargs="+", default=PRESETS)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--seconds", type=float, default=3.0,
                   help="about how long each framework's timing round takes")
    p.add_argument("--mnist-root", default=str(MNIST5K))
    p.add_argument("--out", default="roofline.json")
    args = p.parse_args()
    runtime.setup("CPU", 0)
    peak = matmul_peak(args.rounds)
    best = max(peak["torch_gflop_s"], peak["mindspore_gflop_s"])
    result = {"peak": peak, "load_average": [round(x, 2) for x in os.getloadavg()],
              "presets": []}
    for preset in args.presets:
        result["presets"].append(preset_row(preset, args, best))
        Path(args.out).write_text(json.dumps(result, indent=1))
        print(table(result), flush=True)
    result["load_average_end"] = [round(x, 2) for x in os.getloadavg()]
    Path(args.out).write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
