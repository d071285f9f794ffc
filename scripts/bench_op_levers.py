"""Formulation levers for the slow ops of the per-op table (scripts/bench_ops.py), MindSpore only.

    python scripts/bench_op_levers.py [--groups deconv7 leaky14 ...] [--rounds 5] [--calls 10]
                                      [--out levers.json]

Each group is one op of the default preset (dcgan_digits, batch 64, width 64) written several
ways that compute the same function from the same Parameters. Every variant is first checked
against the group's first one (the formulation gantrain uses): forward output, input gradients
and weight gradients for a fixed output gradient, as max |diff| / max |reference|. Then the
variants are timed interleaved in this one process (A, B, C, A, B, C, ...): fwd = a jitted
forward call, fwd+bwd = a jitted ``ms.vjp`` call returning the output and all gradients, as in
bench_ops.py; median over ``rounds x calls`` calls, ms per call. A variant that fails to compile
or run (no CPU kernel) is reported with MindSpore's message. ``mint`` conv2d / conv_transpose2d
are left out: eagerly they fail at once ("The kernel Conv2DExt / ConvTranspose2D unregistered"),
so they are not timed. A sub-pixel form of the transposed conv (one 3x3 conv to 4x the channels
from gathered taps of the same kernel, then DepthToSpace) was tried too and dropped: its jitted
``vjp`` had not finished compiling or running after 3 minutes here. So did the zero-dilated
form (insert zeros between the inputs, pad 2, stride-1 conv with the flipped kernel) after 4
minutes; eagerly its forward alone took 230 ms against ~70 ms for the transposed conv (4x the
multiply-adds, three quarters of them on zeros). The same fate met the space-to-depth form of
D's strided conv (pad 1, SpaceToDepth(2), 2x2 stride-1 conv with the rearranged kernel): no
result after 3 minutes. Convolutions whose kernel is computed in the graph from the Parameter
seem to leave oneDNN's fast path here; not traced further.
Use ``--threads`` and ``--jit-level`` for the process-wide settings (each run is its own process).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

import gantrain  # noqa: F401  (sets ONEDNN_MAX_CPU_ISA before mindspore loads)

# isort: split
import mindspore as ms
import numpy as np
from mindspore import Tensor, mint, nn, ops

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_ops import arrays  # noqa: E402

from gantrain.blocks.losses import bce_d  # noqa: E402
from gantrain.engine import runtime  # noqa: E402

B, W = 64, 64


class Fn(nn.Cell):
    """A function of the inputs and, optionally, of a reference Cell's Parameters."""

    def __init__(self, fn, owner: nn.Cell | None = None) -> None:
        super().__init__()
        self.fn = fn
        self.owner = owner  # registers the shared Parameters so vjp differentiates them

    def construct(self, *xs):
        return self.fn(self.owner, *xs) if self.owner is not None else self.fn(*xs)


# --- transposed convolution (G) ---------------------------------------------------------------

def _deconv(cin: int, cout: int, bias: bool) -> nn.Conv2dTranspose:
    cell = nn.Conv2dTranspose(cin, cout, 4, stride=2, pad_mode="pad", padding=1, has_bias=bias,
                              weight_init="normal", bias_init="normal")
    return cell


def deconv_variants(cin: int, cout: int, bias: bool, hw: int) -> dict:
    ref = _deconv(cin, cout, bias)
    backprop = ops.Conv2DBackpropInput(cin, 4, pad_mode="pad", pad=1, stride=2)
    out_shape = (B, cout, 2 * hw, 2 * hw)

    def add_bias(c, y):
        return y + c.bias.reshape(1, -1, 1, 1) if bias else y

    def adjoint(c, x):  # the deconv IS the input-gradient of a conv with the same weight
        return add_bias(c, backprop(x, c.weight, out_shape))

    return {"nn.Conv2dTranspose": ref, "ops.Conv2DBackpropInput (adjoint)": Fn(adjoint, ref)}


# --- strided convolution (D) ------------------------------------------------------------------

def conv_variants(cin: int, cout: int, bias: bool) -> dict:
    ref = nn.Conv2d(cin, cout, 4, stride=2, pad_mode="pad", padding=1, has_bias=bias,
                    weight_init="normal", bias_init="normal")

    def add_bias(c, y):
        return y + c.bias.reshape(1, -1, 1, 1) if bias else y

    def functional(c, x):
        return add_bias(c, ops.conv2d(x, c.weight, stride=2, pad_mode="pad", padding=1))

    return {"nn.Conv2d": ref, "ops.conv2d": Fn(functional, ref)}


# --- element-wise, BatchNorm, losses ----------------------------------------------------------

class LeakyBprop(nn.Cell):
    """``ops.leaky_relu`` with a hand-written backward that keeps MaximumGrad's ties exactly: where
    ``slope * x == x`` (x = 0, +-inf) each branch gets half the gradient, ``h + slope * h``.
    Exact zeros do reach D's activations (DiffAugment's zero padding and cutout meet zero biases),
    and the simpler ReLU form, whose gradient at 0 is 0, changes recorded training traces
    (tests/test_gan_traces.py, relativistic_diffaugment case)."""

    def __init__(self, slope: float) -> None:
        super().__init__()
        self.slope = slope

    def construct(self, x):
        return ops.leaky_relu(x, self.slope)

    def bprop(self, x, out, dout):
        scaled = x * self.slope
        half = dout * 0.5
        tie = half + half * self.slope
        return (ops.select(x > scaled, dout, ops.select(x < scaled, dout * self.slope, tie)),)


def leaky_variants() -> dict:
    def where(x):
        return ops.select(x > 0, x, 0.2 * x)

    def relus(x):
        return ops.relu(x) - 0.2 * ops.relu(-x)

    def slope(x):
        return x * ops.select(x > 0, ops.ones_like(x), ops.fill(x.dtype, x.shape, 0.2))

    def mint_leaky(x):
        return mint.nn.functional.leaky_relu(x, 0.2)

    return {"nn.LeakyReLU (maximum(0.2x, x))": nn.LeakyReLU(0.2),
            "same forward, bprop with selects": LeakyBprop(0.2),
            "select(x > 0, x, 0.2x)": Fn(where), "relu(x) - 0.2 relu(-x)": Fn(relus),
            "x * select(x > 0, 1, 0.2)": Fn(slope), "mint leaky_relu": Fn(mint_leaky)}


def bn_variants(c: int) -> dict:
    ref = nn.BatchNorm2d(c)

    def by_hand(bn, x):  # batch statistics only (no running-average update)
        mean = x.mean((0, 2, 3), keep_dims=True)
        var = ops.square(x - mean).mean((0, 2, 3), keep_dims=True)
        return ((x - mean) * ops.rsqrt(var + 1e-5) * bn.gamma.reshape(1, -1, 1, 1)
                + bn.beta.reshape(1, -1, 1, 1))

    def mint_bn(bn, x):
        return mint.nn.functional.batch_norm(x, bn.moving_mean, bn.moving_variance, bn.gamma,
                                             bn.beta, True)

    return {"nn.BatchNorm2d (train)": ref, "mean/var by hand (no running stats)": Fn(by_hand, ref),
            "mint batch_norm": Fn(mint_bn, ref)}


def loss_variants() -> dict:
    def softplus_ops(real, fake):
        return ops.softplus(-real).mean() + ops.softplus(fake).mean()

    def softplus_mint(real, fake):
        sp = mint.nn.functional.softplus
        return sp(-real).mean() + sp(fake).mean()

    def bce(real, fake):
        f = ops.binary_cross_entropy_with_logits
        one = ops.ones_like(real)
        return f(real, one, one, one) + f(fake, ops.zeros_like(fake), one, one)

    return {"relu + log1p(exp(-|x|)) (gantrain)": Fn(bce_d), "ops.softplus": Fn(softplus_ops),
            "mint softplus": Fn(softplus_mint), "ops.binary_cross_entropy_with_logits": Fn(bce)}


GROUPS = {
    "deconv7": ("G ConvT 128->64 7->14", lambda: deconv_variants(2 * W, W, False, 7),
                [(B, 2 * W, 7, 7)]),
    "deconv14": ("G ConvT 64->1 14->28", lambda: deconv_variants(W, 1, True, 14),
                 [(B, W, 14, 14)]),
    "conv14": ("D Conv 64->128 14->7", lambda: conv_variants(W, 2 * W, False),
               [(B, W, 14, 14)]),
    "conv28": ("D Conv 1->64 28->14", lambda: conv_variants(1, W, True), [(B, 1, 28, 28)]),
    "leaky14": ("D LeakyReLU 64x14x14", leaky_variants, [(B, W, 14, 14)]),
    "leaky7": ("D LeakyReLU 128x7x7", leaky_variants, [(B, 2 * W, 7, 7)]),
    "bn14": ("G BatchNorm 64 @14x14", lambda: bn_variants(W), [(B, W, 14, 14)]),
    "loss_d": ("loss D (BCE, softplus forms)", loss_variants, [(B,), (B,)]),
}


def compiled(cell: nn.Cell, level: str):
    params = cell.trainable_params()
    cell.set_train(True)

    def forward(*xs):
        return cell(*xs)

    def fwd_bwd(*xs):  # xs = (*inputs, dy)
        out, vjp_fn = ms.vjp(cell, *xs[:-1], weights=params)
        return out, vjp_fn(xs[-1])

    return ms.jit(forward, jit_level=level), ms.jit(fwd_bwd, jit_level=level)


def _flat(tree) -> list[np.ndarray]:
    if isinstance(tree, (tuple, list)):
        return [a for t in tree for a in _flat(t)]
    return [tree.asnumpy()]


def _first_line(message: str) -> str:
    """The informative line of a MindSpore error (they start with rules of dashes)."""
    lines = [x.strip() for x in message.splitlines() if x.strip().strip("-=")]
    for i, line in enumerate(lines):
        if "kernel" in line.lower() or "support" in line.lower():
            return " ".join(lines[i:i + 2])[:200]
    return (lines or ["?"])[0][:200]


def run_group(key: str, args: argparse.Namespace) -> dict:
    title, make, shapes = GROUPS[key]
    ms.set_seed(0)
    variants = make()
    xs = [Tensor(x) for x in arrays(shapes, 1)]
    ref_out = variants[next(iter(variants))](*xs)
    dy = Tensor(arrays([ref_out.shape], 2)[0]) if ref_out.ndim else Tensor(1.0, ms.float32)
    rows, steps, ref = {}, {}, None
    for name, cell in variants.items():
        print(f"{key}: {name}", file=sys.stderr, flush=True)
        try:
            fwd, fb = compiled(cell, args.jit_level)
            result = _flat(fb(*xs, dy))
            t = time.perf_counter()
            _flat(fb(*xs, dy))
            once = time.perf_counter() - t
        except (RuntimeError, TypeError, ValueError) as e:
            rows[name] = {"error": "fails: " + _first_line(str(e))}
            continue
        ref = ref if ref is not None else result
        diff = max(float(np.abs(a - b).max() / max(np.abs(b).max(), 1e-12))
                   for a, b in zip(result, ref))
        if once > args.too_slow:
            rows[name] = {"rel_diff": diff, "error": f"too slow to time: {once:.1f} s per "
                          "fwd+bwd call after compiling"}
            continue
        rows[name] = {"rel_diff": diff, "fwd": [], "fb": []}
        steps[name] = (fwd, fb)
    for _ in range(args.rounds):
        for name, (fwd, fb) in steps.items():
            for key2, fn, inputs in (("fwd", fwd, xs), ("fb", fb, [*xs, dy])):
                for _ in range(args.calls):
                    t = time.perf_counter()
                    out = fn(*inputs)
                    (out[0] if isinstance(out, tuple) else out).reshape(-1)[:1].asnumpy()
                    rows[name][key2].append(1000 * (time.perf_counter() - t))
    for row in rows.values():
        for k in ("fwd", "fb"):
            if k in row:
                row[k] = statistics.median(row[k])
    return {"group": key, "op": title, "variants": rows}


def table(results: list[dict]) -> str:
    lines = ["| op | variant | max rel. diff vs first | fwd ms | fwd+bwd ms | fwd+bwd vs first |",
             "| --- " * 6 + "|"]
    for g in results:
        first = next((r for r in g["variants"].values() if "fb" in r), None)
        for name, r in g["variants"].items():
            if "error" in r:
                diff = f"{r['rel_diff']:.1e}; " if "rel_diff" in r else ""
                lines.append(f"| {g['op']} | {name} | {diff}{r['error']} | - | - | - |")
                continue
            ratio = first["fb"] / r["fb"]
            lines.append(f"| {g['op']} | {name} | {r['rel_diff']:.1e} | {r['fwd']:.2f} | "
                         f"{r['fb']:.2f} | x{ratio:.2f} |")
    return "\n".join(lines)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--groups", nargs="+", choices=list(GROUPS), default=list(GROUPS))
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--calls", type=int, default=10)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--jit-level", default="O0", choices=("O0", "O1"))
    p.add_argument("--too-slow", type=float, default=2.0,
                   help="skip timing a variant whose fwd+bwd call takes longer (s)")
    p.add_argument("--out", help="write the result as JSON here")
    args = p.parse_args()
    runtime.setup("CPU", 0)
    ms.set_context(runtime_num_threads=args.threads)
    start = os.getloadavg()
    results = [run_group(g, args) for g in args.groups]
    meta = {"load_start": start, "load_end": os.getloadavg(), "threads": args.threads,
            "jit_level": args.jit_level, "rounds": args.rounds, "calls": args.calls,
            "finished": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    if args.out:
        Path(args.out).write_text(json.dumps({**meta, "groups": results}, indent=1))
    print(meta)
    print(table(results))


if __name__ == "__main__":
    main()
