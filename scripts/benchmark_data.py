"""The prepared-dataset pipeline at growing dataset sizes (issue 14's figures).

    python scripts/benchmark_data.py --sizes 10000 50000 200000 --out docs/benchmark-data.json

For each size N the script writes N synthetic 128x128 JPEGs (smooth random patterns plus
noise) into a temp folder (removed at the end unless --keep), then reports:

- prepare time with 1 and with 2 worker processes (each from an empty cache), and its rate;
- the cache's size on disk;
- time to first batch on a second run: a fresh process builds the ``folder`` dataset (listing
  and fingerprinting the files, finding the cache by key, mapping it) and takes one batch;
- loader throughput: 64-image batches gathered from the memory map and converted to float32,
  in images/s, beside the images/s the default 64x64 DCGAN (``dcgan_folder``, batch 64)
  consumes while training in the same process;
- RssAnon (anonymous resident memory, from /proc/self/status: not the page cache of the
  mapped file) of that training process at iteration 100. ``--baseline N`` also trains once
  from today's in-memory path (``data.args.cache = false``) on the N-image folder.

Prints a table and writes every figure to ``--out`` as JSON. Timings depend on the load of
the machine: run it on an idle one for figures to quote.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
PER_FOLDER = 1000  # images per subfolder, as large image sets are usually split


def _write_block(args: tuple[str, int, int, int]) -> None:
    from PIL import Image

    folder, start, stop, side = args
    rng = np.random.default_rng(start)
    yy, xx = np.mgrid[:side, :side] / side
    for i in range(start, stop):
        f = rng.uniform(1, 6, 3)
        phase = rng.uniform(0, 6.3, 3)
        base = np.stack([np.sin(f[c] * (xx + yy * (c + 1)) * 3.14 + phase[c]) for c in range(3)],
                        -1)
        pixels = (base * 90 + 128 + rng.normal(0, 20, (side, side, 3))).clip(0, 255)
        sub = Path(folder) / f"{i // PER_FOLDER:04d}"
        sub.mkdir(exist_ok=True)
        Image.fromarray(pixels.astype(np.uint8)).save(sub / f"{i:07d}.jpg", quality=90)


def make_images(folder: Path, n: int, side: int, workers: int) -> float:
    t = time.perf_counter()
    folder.mkdir(parents=True, exist_ok=True)
    blocks = [(str(folder), s, min(s + PER_FOLDER, n), side) for s in range(0, n, PER_FOLDER)]
    with ProcessPoolExecutor(workers) as pool:
        list(pool.map(_write_block, blocks))
    return time.perf_counter() - t


def du(path: Path) -> int:
    return sum(f.stat().st_blocks * 512 for f in path.rglob("*") if f.is_file())


def child(code: str, env: dict[str, str]) -> dict:
    """Run ``code`` in a fresh interpreter; its last stdout line is a JSON dict."""
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    if out.returncode:
        raise RuntimeError(f"child failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


PREPARE = """
import json, sys, time
from gantrain.data.prepare import Target, prepare
from gantrain.data.sources import FolderSource
t = time.perf_counter()
folder = prepare(FolderSource(sys.argv[1] if len(sys.argv) > 1 else {root!r}), Target((64, 64)),
                 workers={workers}, progress=False, log=lambda m: None)
print(json.dumps({{"seconds": time.perf_counter() - t, "folder": str(folder)}}))
"""

FIRST_BATCH = """
import time
t0 = time.perf_counter()
import json
from gantrain.data.registry import build_data
t = time.perf_counter()
bundle = build_data("folder", {{"root": {root!r}, "size": 64}}, 64, 0)
bundle.source.next_batch()
first = time.perf_counter() - t
n, t = 0, time.perf_counter()
while time.perf_counter() - t < 3.0:
    bundle.source.next_batch()
    n += 64
print(json.dumps({{"first_batch_s": first, "with_imports_s": time.perf_counter() - t0 - 3.0,
                  "loader_img_s": n / (time.perf_counter() - t)}}))
"""

TRAIN = """
import json, time
from pathlib import Path
import gantrain
from gantrain.engine.loop import Hook
from gantrain.recipes.gan.run import GANRun
from gantrain.recipes.registry import load_config

def rss_anon_mb():
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("RssAnon:"):
            return int(line.split()[1]) / 1024

class Probe(Hook):
    marks = {{}}
    def after_iteration(self, loop):
        if loop.iteration in (20, 100):
            self.marks[loop.iteration] = (time.perf_counter(), rss_anon_mb())

overrides = [{root_override!r}, "data.args.size=64", "train.steps=100", "train.progress=false",
             "train.log_every=1000", "train.sample_every=1000", "train.checkpoint_every=1000",
             "data.args.cache={cache}"]
run = GANRun(load_config("dcgan_folder", overrides), Path({run_dir!r}))
probe = Probe()
run.loop.hooks.append(probe)
run.loop.run(100)
(t20, _), (t100, rss) = probe.marks[20], probe.marks[100]
print(json.dumps({{"rss_anon_mb_at_100": rss, "train_img_s": 80 * 64 / (t100 - t20)}}))
"""


def bench_size(n: int, tmp: Path, args: argparse.Namespace, env: dict[str, str]) -> dict:
    images = tmp / f"images{n}"
    row: dict = {"images": n}
    if not images.exists():
        row["generate_s"] = make_images(images, n, args.side, 2)
    root = str(images)
    for workers in args.workers:
        cache = tmp / f"cache-w{workers}"
        shutil.rmtree(cache, ignore_errors=True)
        res = child(PREPARE.format(root=root, workers=workers),
                    {**env, "GANTRAIN_DATA_CACHE": str(cache)})
        row[f"prepare_s_w{workers}"] = res["seconds"]
        row["cache_bytes"] = du(Path(res["folder"]))
        if workers != args.workers[-1]:
            shutil.rmtree(cache)
    env = {**env, "GANTRAIN_DATA_CACHE": str(tmp / f"cache-w{args.workers[-1]}")}
    row.update(child(FIRST_BATCH.format(root=root), env))
    if not args.skip_train:
        row.update(child(TRAIN.format(root_override=f'data.args.root="{root}"', cache="true",
                                      run_dir=str(tmp / f"run{n}")), env))
    if n in args.baseline and not args.skip_train:
        base = child(TRAIN.format(root_override=f'data.args.root="{root}"', cache="false",
                                  run_dir=str(tmp / f"base{n}")), env)
        row["in_memory_rss_anon_mb_at_100"] = base["rss_anon_mb_at_100"]
    shutil.rmtree(tmp / f"cache-w{args.workers[-1]}", ignore_errors=True)
    if not args.keep:
        shutil.rmtree(images, ignore_errors=True)
    return row


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", type=int, nargs="+", default=[10000, 50000, 200000])
    p.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    p.add_argument("--side", type=int, default=128, help="side of the synthetic JPEGs")
    p.add_argument("--baseline", type=int, nargs="*", default=[],
                   help="sizes also trained from the in-memory path, for comparison")
    p.add_argument("--skip-train", action="store_true", help="no training processes")
    p.add_argument("--tmp", help="work folder (default: a new temp folder)")
    p.add_argument("--keep", action="store_true", help="keep the generated images")
    p.add_argument("--out", help="write the figures as JSON here")
    args = p.parse_args()
    tmp = Path(args.tmp) if args.tmp else Path(tempfile.mkdtemp(prefix="gantrain-data-bench-"))
    tmp.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    rows = []
    try:
        for n in args.sizes:
            rows.append(bench_size(n, tmp, args, env))
            print(json.dumps(rows[-1]), flush=True)
            if args.out:
                Path(args.out).write_text(json.dumps({"load": os.getloadavg(), "rows": rows},
                                                     indent=1))
    finally:
        if not args.tmp and not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    print(table(rows))


def table(rows: list[dict]) -> str:
    lines = ["| images | prepare 1 proc | prepare 2 procs | cache | first batch (2nd run) | "
             "loader img/s | DCGAN img/s | RssAnon @100 |", "|" + "---|" * 8]
    for r in rows:
        lines.append(
            f"| {r['images']} | {r.get('prepare_s_w1', float('nan')):.1f} s | "
            f"{r.get('prepare_s_w2', float('nan')):.1f} s | {r['cache_bytes'] / 2**20:.0f} MiB | "
            f"{r['first_batch_s']:.2f} s | {r['loader_img_s']:.0f} | "
            f"{r.get('train_img_s', float('nan')):.0f} | "
            f"{r.get('rss_anon_mb_at_100', float('nan')):.0f} MB |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
