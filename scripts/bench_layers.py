"""Layer formulations of the DCGAN 28x28 nets, timed forward + backward under ``@ms.jit``.

    python scripts/bench_layers.py [--batch 64] [--width 64] [--rounds 5]

Each candidate is a small Cell on the shapes of the default preset (batch 64, width 64); the
timed function returns the sum of the output and the gradients wrt the input and the weights,
as a training step needs. Candidates are timed interleaved, median of ``--rounds`` rounds of
10 calls. Equivalent pairs are checked to agree numerically before they are timed.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import gantrain  # noqa: F401

# isort: split
import mindspore as ms
import numpy as np
from mindspore import Tensor, nn, ops

from gantrain.engine import runtime
from gantrain.models.sngan import upsample_nearest2x


class Deconv(nn.Cell):
    """The current up-block: 4x4 stride-2 transposed conv."""

    def __init__(self, cin: int, cout: int) -> None:
        super().__init__()
        self.conv = nn.Conv2dTranspose(cin, cout, 4, stride=2, pad_mode="pad", padding=1,
                                       has_bias=False)

    def construct(self, x):
        return self.conv(x)


class ResizeConv(nn.Cell):
    """Nearest 2x upsampling then a 3x3 conv (Odena et al. 2016): a different layer."""

    def __init__(self, cin: int, cout: int) -> None:
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 3, pad_mode="pad", padding=1, has_bias=False)

    def construct(self, x):
        return self.conv(upsample_nearest2x(x))


class Act(nn.Cell):
    def __init__(self, kind: str) -> None:
        super().__init__()
        self.kind = kind
        self.leaky = nn.LeakyReLU(0.2)

    def construct(self, x):
        if self.kind == "leaky":
            return self.leaky(x)
        if self.kind == "max":
            return ops.maximum(x, 0.2 * x)
        return ops.relu(x)


class ConvBN(nn.Cell):
    """D's second block: conv (no bias) -> BatchNorm -> LeakyReLU, or BN after the activation."""

    def __init__(self, cin: int, cout: int, bn_after_act: bool) -> None:
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 4, stride=2, pad_mode="pad", padding=1, has_bias=False)
        self.bn = nn.BatchNorm2d(cout)
        self.act = nn.LeakyReLU(0.2)
        self.after = bn_after_act

    def construct(self, x):
        if self.after:
            return self.bn(self.act(self.conv(x)))
        return self.act(self.bn(self.conv(x)))


def fwd_bwd(cell: nn.Cell):
    params = cell.trainable_params()

    def f(x):
        return cell(x).sum()

    grad = ms.value_and_grad(f, 0, params) if params else ms.value_and_grad(f, 0)

    @ms.jit
    def step(x):
        return grad(x)

    return step


def _sync(out) -> None:
    while isinstance(out, (tuple, list)):
        out = out[0]
    out.asnumpy()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--width", type=int, default=64)
    p.add_argument("--rounds", type=int, default=5)
    args = p.parse_args()
    runtime.setup("CPU", 0)
    b, w = args.batch, args.width
    rng = np.random.default_rng(0)
    x7 = Tensor(rng.standard_normal((b, 2 * w, 7, 7), dtype=np.float32))
    x14 = Tensor(rng.standard_normal((b, w, 14, 14), dtype=np.float32))
    cases = {
        "G up 7->14: Conv2dTranspose 4x4 s2": (Deconv(2 * w, w), x7),
        "G up 7->14: nearest 2x + Conv2d 3x3": (ResizeConv(2 * w, w), x7),
        "G out 14->28: Conv2dTranspose 4x4 s2 (to 1 ch)": (Deconv(w, 1), x14),
        "G out 14->28: nearest 2x + Conv2d 3x3 (to 1 ch)": (ResizeConv(w, 1), x14),
        "LeakyReLU(0.2) on (B, w, 14, 14)": (Act("leaky"), x14),
        "maximum(x, 0.2x) on (B, w, 14, 14)": (Act("max"), x14),
        "ReLU on (B, w, 14, 14)": (Act("relu"), x14),
        "D 14->7: conv, BN, LeakyReLU": (ConvBN(w, 2 * w, False), x14),
        "D 14->7: conv, LeakyReLU, BN": (ConvBN(w, 2 * w, True), x14),
    }
    a, m = Act("leaky"), Act("max")
    assert np.allclose(a(x14).asnumpy(), m(x14).asnumpy()), "maximum form differs"
    steps = {k: (fwd_bwd(cell), x) for k, (cell, x) in cases.items()}
    times: dict[str, list[float]] = {k: [] for k in steps}
    for step, x in steps.values():
        _sync(step(x))
    for _ in range(args.rounds):
        for k, (step, x) in steps.items():
            t = time.perf_counter()
            for _ in range(10):
                out = step(x)
            _sync(out)
            times[k].append(100 * (time.perf_counter() - t))
    print(f"batch {b}, width {w}, load {os.getloadavg()}")
    for k, ts in times.items():
        print(f"| {k} | {statistics.median(ts):.2f} ms ({min(ts):.2f}-{max(ts):.2f}) |")


if __name__ == "__main__":
    main()
