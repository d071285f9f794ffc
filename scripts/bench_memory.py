"""Where a preset's resident memory goes, MindSpore (gantrain) against PyTorch eager on the same
nets, each in a fresh process, stage by stage.

    python scripts/bench_memory.py [PRESET] [--iters 20] [--torch-python PYTHON] [--set K=V ...]

The gantrain side is ``scripts/bench_startup.py`` (stages: python, import, dataset, build,
compile_<player>, first_iteration, iteration_<1 + iters>). The PyTorch side runs the preset's
nets and recipe from ``scripts/torch_baseline.py`` (``TorchLoop``) on the same dataset, drawn
through gantrain's loader, with stages python, import (torch, numpy), dataset, build (nets and
optimizers), first_iteration and iteration_<1 + iters>; it never imports mindspore (it asserts
so). ``--torch-python`` is an interpreter with torch installed (default: this one).

Each stage reports VmRSS (``rss``) and its split into anonymous memory (``anon``: heaps,
arrays, graphs, kernels' workspaces) and file-backed pages (``file``: the shared libraries
mapped in); ``peak`` is VmHWM. Prints both processes' JSON lines, then a markdown table.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

TORCH_CHILD = r"""
import ast, json, os, resource, sys, time, types
sys.path[:0] = [os.environ["BENCH_ROOT"], os.environ["BENCH_SCRIPTS"]]


def stage():
    fields = {"VmRSS:": "rss", "RssAnon:": "anon", "RssFile:": "file"}
    out = {}
    with open("/proc/self/status") as status:
        for line in status:
            key = line.split(maxsplit=1)[0]
            if key in fields:
                out[fields[key]] = round(int(line.split()[1]) / 1024, 1)
    return out


rss = {"python": stage()}
import numpy as np
import torch
rss["import"] = stage()
# torch_baseline takes DCGAN's layer plan from gantrain.models.dcgan, which imports mindspore:
# read the constant from the source instead, so no mindspore is loaded in this process.
source = open(os.path.join(os.environ["BENCH_ROOT"], "gantrain", "models", "dcgan.py")).read()
geometry = next(ast.literal_eval(node.value) for node in ast.parse(source).body
                if isinstance(node, ast.Assign)
                and getattr(node.targets[0], "id", "") == "GEOMETRY")
import gantrain.models
stub = types.ModuleType("gantrain.models.dcgan")
stub.GEOMETRY = geometry
sys.modules["gantrain.models.dcgan"] = stub
from torch_baseline import TorchLoop


def namespace(value):
    if isinstance(value, dict):
        return types.SimpleNamespace(**{k: namespace(v) for k, v in value.items()})
    return value


spec = json.loads(os.environ["BENCH_CONFIG"])
config = namespace(spec["config"])
config.generator.args, config.discriminator.args = (spec["config"]["generator"]["args"],
                                                    spec["config"]["discriminator"]["args"])
from gantrain.data.digits import embedded_digits
from gantrain.data.loader import ArrayLoader
args = spec["config"]["data"]["args"]
dataset = embedded_digits(n=args.get("n", 10000), size=args.get("size", 28), seed=spec["seed"])
loader = ArrayLoader(dataset, config.data.batch_size, spec["seed"])
rss["dataset"] = stage()
loop = TorchLoop(config, lambda: loader.next_batch()[0], threads=spec["threads"], seed=spec["seed"])
rss["build"] = stage()
loop.run(1)
rss["first_iteration"] = stage()
loop.run(spec["iters"])
rss["iteration_%d" % (1 + spec["iters"])] = stage()
assert "mindspore" not in sys.modules, "the torch side imported mindspore"
print(json.dumps({"rss_mb": rss, "dataset_mb": round(dataset.x.nbytes / 2**20, 1),
                  "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
                  "torch": torch.__version__}))
"""


def run_gantrain(preset: str, overrides: list[str], iters: int) -> dict:
    cmd = [sys.executable, str(HERE / "bench_startup.py"), preset, "--iters", str(iters)]
    for o in overrides:
        cmd += ["--set", o]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"bench_startup.py failed: {done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def run_torch(preset: str, overrides: list[str], iters: int, python: str, threads: int) -> dict:
    from gantrain.recipes.registry import load_config

    config = load_config(preset, ["train.progress=false", *overrides])
    if config.data.dataset != "digits":
        raise SystemExit(f"the PyTorch side reads the embedded digits only, not "
                         f"{config.data.dataset!r}")
    spec = {"config": dataclasses.asdict(config), "iters": iters, "seed": config.seed,
            "threads": threads}
    env = {**os.environ, "BENCH_CONFIG": json.dumps(spec), "BENCH_ROOT": str(ROOT),
           "BENCH_SCRIPTS": str(HERE)}
    done = subprocess.run([python, "-c", TORCH_CHILD], capture_output=True, text=True, env=env)
    if done.returncode:
        raise SystemExit(f"the PyTorch child failed: {done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def table(ms_row: dict, torch_row: dict) -> str:
    lines = ["| stage | gantrain RSS (anon + file) MB | PyTorch RSS (anon + file) MB |",
             "| --- | --- | --- |"]
    stages = list(ms_row["rss_mb"])
    for name in stages + [s for s in torch_row["rss_mb"] if s not in stages]:
        cells = []
        for row in (ms_row, torch_row):
            r = row["rss_mb"].get(name)
            cells.append(f"{r['rss']:.0f} ({r['anon']:.0f} + {r['file']:.0f})" if r else "-")
        lines.append(f"| {name} | {cells[0]} | {cells[1]} |")
    lines.append(f"| peak (VmHWM) | {ms_row['peak_rss_mb']} | {torch_row['peak_rss_mb']} |")
    return "\n".join(lines)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("preset", nargs="?", default="dcgan_digits")
    p.add_argument("--set", dest="overrides", action="append", default=[])
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--torch-python", default=sys.executable)
    p.add_argument("--torch-threads", type=int, default=2)
    args = p.parse_args()
    load = os.getloadavg()
    ms_row = run_gantrain(args.preset, args.overrides, args.iters)
    torch_row = run_torch(args.preset, args.overrides, args.iters, args.torch_python,
                          args.torch_threads)
    print(json.dumps({"gantrain": ms_row}))
    print(json.dumps({"torch": torch_row}))
    print(f"load average before {load}, after {os.getloadavg()}")
    print(table(ms_row, torch_row))


if __name__ == "__main__":
    main()
