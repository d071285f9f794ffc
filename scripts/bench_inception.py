"""Throughput of the FID Inception extractor, and what 10k / 50k images cost.

    python scripts/bench_inception.py [--images 100] [--batch 50] [--size 32] [--rounds 2]

Random weights (speed does not depend on their values) on random uint8 images of
``--size`` x ``--size`` (32: CIFAR-10, resized to 299 inside the graph; 299: no resize). The
first batch compiles and is not timed. When torch and pytorch-fid are importable (see
tests/test_inception_reference.py for that environment), pytorch-fid's InceptionV3 on the same
images is timed in the same run, interleaved round by round, so the ratio holds even on a
loaded machine.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import time

import gantrain  # noqa: F401  (MindSpore environment defaults before mindspore loads)

# isort: split
import numpy as np

from gantrain.engine import runtime
from gantrain.metrics.inception.extractor import InceptionExtractor
from gantrain.models.inception import FIDInceptionV3


def _torch_reference(threads: int):
    """pytorch-fid's InceptionV3 with random weights, or None when it cannot be imported."""
    if not all(importlib.util.find_spec(m) for m in ("torch", "torchvision", "pytorch_fid")):
        return None  # MindSpore only
    import torch

    from tests.test_inception_reference import _random_state_dict, pfid
    torch.set_num_threads(threads)
    state = _random_state_dict()
    pfid.load_state_dict_from_url = lambda *a, **k: state
    net = pfid.InceptionV3([3]).eval()

    def run(x: np.ndarray) -> None:
        with torch.no_grad():
            net(torch.from_numpy(x.astype(np.float32) / 255.0))

    return run


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--images", type=int, default=100, help="timed images per round")
    p.add_argument("--batch", type=int, default=50)
    p.add_argument("--size", type=int, default=32)
    p.add_argument("--rounds", type=int, default=2)
    p.add_argument("--threads", type=int, default=2, help="torch threads (reference only)")
    a = p.parse_args()
    runtime.setup("CPU", 0)
    x = np.random.default_rng(0).integers(0, 256, (a.images, 3, a.size, a.size), np.uint8)
    ours = InceptionExtractor(FIDInceptionV3(), batch=a.batch, progress=False)
    ours(x[: a.batch])  # compile
    ref = _torch_reference(a.threads)
    if ref is not None:
        ref(x[: a.batch])
    rates: dict[str, list[float]] = {"gantrain (MindSpore)": [], "pytorch-fid (torch)": []}
    for _ in range(a.rounds):
        t = time.perf_counter()
        ours(x)
        rates["gantrain (MindSpore)"].append(a.images / (time.perf_counter() - t))
        if ref is not None:
            t = time.perf_counter()
            for s in range(0, a.images, a.batch):
                ref(x[s : s + a.batch])
            rates["pytorch-fid (torch)"].append(a.images / (time.perf_counter() - t))
    print(f"{a.images} images of {a.size}x{a.size}, batch {a.batch}, {a.rounds} rounds "
          "(median):")
    for name, r in rates.items():
        if r:
            ips = statistics.median(r)
            print(f"  {name:<22} {ips:7.2f} images/s   10k: {1e4 / ips / 60:6.1f} min   "
                  f"50k: {5e4 / ips / 3600:5.2f} h")


if __name__ == "__main__":
    main()
