"""Per-op table, MindSpore vs PyTorch, on the default preset's exact layer shapes.

    python scripts/bench_ops.py [--rounds 5] [--calls 10] [--out ops.json]
    python scripts/bench_ops.py --a mindspore:2 --b mindspore:1      # threads, same harness
    python scripts/bench_ops.py --a mindspore:2:O1 --b mindspore:2   # jit_level O1 vs O0
    python scripts/bench_ops.py --a mindspore:2:graph_kernel --b mindspore:2
    python scripts/bench_ops.py --table ops.json

Run it with an interpreter that has both mindspore and torch (torch is never a gantrain
dependency). Side A defaults to MindSpore, side B to PyTorch, both with 2 threads; either side can
be another MindSpore configuration, which makes the same harness measure levers.

``dcgan_digits`` is batch 64, z 64, width 64, 28x28x1: G = Dense 64->6272, BN,
ReLU, ConvTranspose 128->64 (7->14), BN, ReLU, ConvTranspose 64->1 (14->28), tanh; D = Conv
1->64 (28->14), LeakyReLU(0.2), Conv 64->128 (14->7), BN, LeakyReLU, Dense 6272->1; the losses
are the softplus forms of ``gantrain.blocks.losses``. The MindSpore side uses gantrain's own
LeakyReLU (``models.layers.make_activation``) and loss functions.

Each framework runs in its own subprocess (both would fight over OpenMP threads in one) with the
same thread count; the parent alternates them op by op, and the order flips every round
(A, B, then B, A). What is timed, per call, wall clock, median over ``rounds x calls`` calls:

* fwd: the op alone. MindSpore: one ``@ms.jit`` function returning the output (train mode, so
  BatchNorm uses batch statistics and updates its running averages). PyTorch: the module call
  with autograd recording, as in training.
* fwd+bwd: the output and the gradients wrt every input and every trainable weight for a fixed
  random output gradient. MindSpore: one ``@ms.jit`` function around ``ms.vjp``. PyTorch: the
  module call then ``backward(dy)`` (grads reset to None outside the timer).
* bwd: PyTorch times ``backward(dy)`` alone; MindSpore has no separate backward call inside one
  graph, so its bwd is median(fwd+bwd) - median(fwd).

Every MindSpore call is synchronised by reading a one-element slice of its first output to the
host; the "jit call" row times that for an empty graph, the fixed cost of one compiled call.
Both children build their weights and inputs from the same numpy seed and report 256 values of
each forward output: the parent checks that the two sides compute the same function.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve()
B, Z, W = 64, 64, 64  # dcgan_digits: batch, z_dim, width
# name -> (kind, input shapes, layer args), in the order of G's forward, D's forward, the losses
OPS: dict[str, tuple[str, list[tuple[int, ...]], dict]] = {
    "jit call (empty graph)": ("identity", [(1,)], {}),
    "G Dense 64->6272": ("dense", [(B, Z)], {"cin": Z, "cout": 2 * W * 49, "bias": False}),
    "G BatchNorm 128 @7x7": ("bn", [(B, 2 * W, 7, 7)], {"c": 2 * W}),
    "G ReLU 128x7x7": ("relu", [(B, 2 * W, 7, 7)], {}),
    "G ConvT 128->64 7->14": ("deconv", [(B, 2 * W, 7, 7)],
                              {"cin": 2 * W, "cout": W, "bias": False}),
    "G BatchNorm 64 @14x14": ("bn", [(B, W, 14, 14)], {"c": W}),
    "G ReLU 64x14x14": ("relu", [(B, W, 14, 14)], {}),
    "G ConvT 64->1 14->28": ("deconv", [(B, W, 14, 14)], {"cin": W, "cout": 1, "bias": True}),
    "G Tanh 1x28x28": ("tanh", [(B, 1, 28, 28)], {}),
    "D Conv 1->64 28->14": ("conv", [(B, 1, 28, 28)], {"cin": 1, "cout": W, "bias": True}),
    "D LeakyReLU 64x14x14": ("leaky", [(B, W, 14, 14)], {}),
    "D Conv 64->128 14->7": ("conv", [(B, W, 14, 14)], {"cin": W, "cout": 2 * W, "bias": False}),
    "D BatchNorm 128 @7x7": ("bn", [(B, 2 * W, 7, 7)], {"c": 2 * W}),
    "D LeakyReLU 128x7x7": ("leaky", [(B, 2 * W, 7, 7)], {}),
    "D Dense 6272->1": ("dense", [(B, 2 * W * 49)], {"cin": 2 * W * 49, "cout": 1, "bias": True}),
    "loss D: softplus(-real)+softplus(fake)": ("loss_d", [(B,), (B,)], {}),
    "loss G: softplus(-fake)": ("loss_g", [(B,)], {}),
}


def weights(kind: str, a: dict, seed: int) -> dict[str, np.ndarray]:
    """The layer's weights in the layout both frameworks share (conv (out, in, k, k), transposed
    conv (in, out, k, k), dense (out, in)); DCGAN's N(0, 0.02) init, biases small and non-zero."""
    rng = np.random.default_rng(seed)
    shapes = {"dense": (a.get("cout"), a.get("cin")), "conv": (a.get("cout"), a.get("cin"), 4, 4),
              "deconv": (a.get("cin"), a.get("cout"), 4, 4)}
    if kind not in shapes:
        return {}
    out = {"weight": (0.02 * rng.standard_normal(shapes[kind])).astype(np.float32)}
    if a["bias"]:
        out["bias"] = (0.1 * rng.standard_normal(a["cout"])).astype(np.float32)
    return out


def probe(out: np.ndarray) -> list[float]:
    """256 evenly spaced values of a forward output, for the same-function check."""
    flat = out.reshape(-1)
    return flat[np.linspace(0, flat.size - 1, min(256, flat.size)).astype(int)].tolist()


def arrays(shapes: list[tuple[int, ...]], seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype(np.float32) for s in shapes]


# --- MindSpore child ---------------------------------------------------------------------------

def ms_op(kind: str, a: dict, seed: int):
    """A Cell computing the op, with the preset's layer arguments and the shared weights."""
    import mindspore as ms
    from mindspore import nn, ops

    from gantrain.blocks import losses
    from gantrain.models.layers import make_activation

    def identity(x):
        return x * 1.0

    def loss_g(fake):
        return losses.nonsaturating_g(fake, fake)  # the real logits are unused by this loss

    class Fn(nn.Cell):
        def __init__(self, fn) -> None:
            super().__init__()
            self.fn = fn

        def construct(self, *xs):
            return self.fn(*xs)

    if kind == "dense":
        cell = nn.Dense(a["cin"], a["cout"], has_bias=a["bias"])
    elif kind == "conv":
        cell = nn.Conv2d(a["cin"], a["cout"], 4, stride=2, pad_mode="pad", padding=1,
                         has_bias=a["bias"])
    elif kind == "deconv":
        cell = nn.Conv2dTranspose(a["cin"], a["cout"], 4, stride=2, pad_mode="pad", padding=1,
                                  has_bias=a["bias"])
    elif kind == "bn":
        cell = nn.BatchNorm2d(a["c"])
    elif kind == "leaky":
        cell = make_activation("leaky_relu")  # what the DCGAN discriminator uses
    else:
        cell = Fn({"identity": identity, "relu": ops.relu, "tanh": ops.tanh,
                   "loss_d": losses.bce_d, "loss_g": loss_g}[kind])
    for name, value in weights(kind, a, seed).items():
        getattr(cell, name).set_data(ms.Tensor(value))
    cell.set_train(True)
    return cell


def ms_runner(kind: str, shapes: list, a: dict, seed: int, jit_level: str = "O0"):
    """(forward output sum, fwd timer, fwd+bwd timer) for one op, compiled and warmed up."""
    import mindspore as ms

    cell = ms_op(kind, a, seed)
    params = cell.trainable_params()
    xs = [ms.Tensor(x) for x in arrays(shapes, seed + 1)]

    def forward(*inputs):
        return cell(*inputs)

    def fwd_bwd_w(*inputs):  # inputs = (*xs, dy)
        out, vjp_fn = ms.vjp(cell, *inputs[:-1], weights=params)
        return out, vjp_fn(inputs[-1])

    def fwd_bwd(*inputs):
        out, vjp_fn = ms.vjp(cell, *inputs[:-1])
        return out, vjp_fn(inputs[-1])

    fwd = ms.jit(forward, jit_level=jit_level)
    fb = ms.jit(fwd_bwd_w if params else fwd_bwd, jit_level=jit_level)
    out = fwd(*xs).asnumpy()
    dy = ms.Tensor(arrays([out.shape], seed + 2)[0]) if out.ndim else ms.Tensor(1.0, ms.float32)

    def sync(t) -> None:  # ms.runtime.synchronize() refuses the CPU device in 2.10
        t.reshape(-1)[:1].asnumpy()

    def time_fwd() -> float:
        t = time.perf_counter()
        sync(fwd(*xs))
        return time.perf_counter() - t

    def time_fb() -> tuple[float, None]:
        t = time.perf_counter()
        sync(fb(*xs, dy)[0])
        return time.perf_counter() - t, None

    time_fb()
    return probe(out), time_fwd, time_fb


# --- PyTorch child -----------------------------------------------------------------------------

def torch_runner(kind: str, shapes: list, a: dict, seed: int):
    import torch
    import torch.nn.functional as F  # noqa: N812

    w = weights(kind, a, seed)
    if kind == "dense":
        mod = torch.nn.Linear(a["cin"], a["cout"], bias=a["bias"])
    elif kind == "conv":
        mod = torch.nn.Conv2d(a["cin"], a["cout"], 4, stride=2, padding=1, bias=a["bias"])
    elif kind == "deconv":
        mod = torch.nn.ConvTranspose2d(a["cin"], a["cout"], 4, stride=2, padding=1, bias=a["bias"])
    elif kind == "bn":
        mod = torch.nn.BatchNorm2d(a["c"])
    else:
        mod = {"identity": lambda x: x * 1.0, "relu": torch.relu, "tanh": torch.tanh,
               "leaky": torch.nn.LeakyReLU(0.2),
               "loss_d": lambda r, f: F.softplus(-r).mean() + F.softplus(f).mean(),
               "loss_g": lambda f: F.softplus(-f).mean()}[kind]
    params = []
    if isinstance(mod, torch.nn.Module):
        with torch.no_grad():
            for name, value in w.items():
                getattr(mod, name).copy_(torch.from_numpy(value))
        mod.train()
        params = list(mod.parameters())
    xs = [torch.from_numpy(x).requires_grad_() for x in arrays(shapes, seed + 1)]
    out = mod(*xs).detach().numpy()
    dy = torch.from_numpy(arrays([out.shape], seed + 2)[0]) if out.ndim else torch.tensor(1.0)

    def reset() -> None:
        for t in (*xs, *params):
            t.grad = None

    def time_fwd() -> float:
        t = time.perf_counter()
        mod(*xs)
        return time.perf_counter() - t

    def time_fb() -> tuple[float, float]:
        reset()
        t = time.perf_counter()
        y = mod(*xs)
        t1 = time.perf_counter()
        y.backward(dy)
        t2 = time.perf_counter()
        return t2 - t, t2 - t1

    time_fb()
    return probe(out), time_fwd, time_fb


def child(spec: str) -> None:
    """Serve timing requests on stdin: one JSON line {"op": name, "calls": n} per block."""
    framework, threads, options = parse_side(spec)
    if framework == "mindspore":
        import gantrain  # noqa: F401  (sets ONEDNN_MAX_CPU_ISA before mindspore loads)

        # isort: split
        import mindspore as ms

        from gantrain.engine import runtime

        runtime.setup("CPU", 0)
        ms.set_context(runtime_num_threads=threads)
        if "graph_kernel" in options:
            ms.set_context(enable_graph_kernel=True)
        level = "O1" if "O1" in options else "O0"

        def make(*a):
            return ms_runner(*a, jit_level=level)
    else:
        import torch

        torch.set_num_threads(threads)
        make = torch_runner
    runners = {name: make(kind, shapes, a, 10 * i)
               for i, (name, (kind, shapes, a)) in enumerate(OPS.items())}
    print("@@" + json.dumps({n: r[0] for n, r in runners.items()}), flush=True)
    for line in sys.stdin:
        req = json.loads(line)
        _, time_fwd, time_fb = runners[req["op"]]
        fwd = [time_fwd() for _ in range(req["calls"])]
        fb, bwd = zip(*(time_fb() for _ in range(req["calls"])))
        print("@@" + json.dumps({"fwd": fwd, "fb": fb, "bwd": [x for x in bwd if x is not None]}),
              flush=True)


# --- parent ------------------------------------------------------------------------------------

def parse_side(spec: str) -> tuple[str, int, set[str]]:
    """``framework:threads:opt+opt`` -> (framework, threads, options); see ``--help``."""
    parts = spec.split(":")
    if parts[0] not in ("mindspore", "torch") or len(parts) > 3:
        raise SystemExit(f"bad side {spec!r}: expected mindspore|torch[:threads[:options]]")
    threads = int(parts[1]) if len(parts) > 1 and parts[1] else 2
    options = set(parts[2].split("+")) if len(parts) > 2 else set()
    unknown = options - {"O1", "graph_kernel"}
    if unknown or (options and parts[0] == "torch"):
        raise SystemExit(f"bad options in {spec!r}: mindspore takes O1 and/or graph_kernel")
    return parts[0], threads, options


def _read(proc: subprocess.Popen) -> dict:
    for line in proc.stdout:
        if line.startswith("@@"):
            return json.loads(line[2:])
    proc.err.seek(0)
    raise RuntimeError(f"child exited early:\n{proc.err.read()[-3000:]}")


def measure(args: argparse.Namespace) -> dict:
    sides = [args.a, args.b]
    for side in sides:
        parse_side(side)
    procs = []
    # The checkout first on the path: the torch interpreter need not have gantrain installed.
    path = os.pathsep.join(filter(None, [str(HERE.parents[1]), os.environ.get("PYTHONPATH")]))
    for side in sides:
        err = tempfile.TemporaryFile("w+")  # a file, not a pipe: a full pipe would block
        procs.append(subprocess.Popen([sys.executable, str(HERE), "--child", side],
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err,
                                      text=True, env={**os.environ, "PYTHONPATH": path}))
        procs[-1].err = err
    probes = [_read(p) for p in procs]
    times = [{op: {"fwd": [], "fb": [], "bwd": []} for op in OPS} for _ in procs]
    load = [os.getloadavg()]
    for r in range(args.rounds):
        for op in OPS:
            for i in ((0, 1) if r % 2 == 0 else (1, 0)):
                procs[i].stdin.write(json.dumps({"op": op, "calls": args.calls}) + "\n")
                procs[i].stdin.flush()
                for key, xs in _read(procs[i]).items():
                    times[i][op][key] += xs
                time.sleep(0.05)  # let the other side's spinning threads go to sleep
        print(f"round {r + 1}/{args.rounds} done, load {os.getloadavg()[0]:.2f}", flush=True)
    load.append(os.getloadavg())
    for p in procs:
        p.stdin.close()
        p.wait()
    return summarize(sides, times, probes, load, args)


def _medians(t: dict) -> dict[str, float]:
    fwd, fb = (1000 * statistics.median(t[k]) for k in ("fwd", "fb"))
    bwd = 1000 * statistics.median(t["bwd"]) if t["bwd"] else fb - fwd
    return {"fwd": fwd, "bwd": bwd, "fb": fb}


def summarize(sides: list, times: list, probes: list, load: list,
              args: argparse.Namespace) -> dict:
    import mindspore

    rows = []
    for op in OPS:
        a, b = (np.array(p[op]) for p in probes)
        ma, mb = (_medians(t[op]) for t in times)
        rows.append({"op": op, "shapes": OPS[op][1], **{f"a_{k}": v for k, v in ma.items()},
                     **{f"b_{k}": v for k, v in mb.items()},
                     "same_function": bool(np.allclose(a, b, rtol=1e-3, atol=1e-4)),
                     "max_abs_diff": float(np.abs(a - b).max())})
    env = {"mindspore": mindspore.__version__}
    if any(s.startswith("torch") for s in sides):
        import torch

        env["torch"] = torch.__version__
    return {"a": sides[0], "b": sides[1], "rows": rows, "rounds": args.rounds,
            "calls": args.calls, "load_start_end": load, **env,
            "onednn_isa": "AVX2 (mindspore children, via gantrain)",
            "finished": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}


def table(result: dict) -> str:
    """Markdown: per op A and B fwd, bwd, fwd+bwd, fwd+bwd net of each side's own empty-call
    cost (the first row), and the ratios A/B; then the largest net gaps."""
    def r(a: float, b: float) -> str:
        return f"{a / b:.1f}" if b > 0 and a > 0 else "-"

    def ms(x: float) -> str:
        return f"{x:.2f}" if x > 0 else "~0"

    rows = result["rows"]
    call_a, call_b = rows[0]["a_fb"], rows[0]["b_fb"]
    lines = ["| op (batch 64) | A fwd | B fwd | A/B | A bwd | B bwd | A/B | A fwd+bwd "
             "| B fwd+bwd | A/B | A net | B net | A/B net |", "| --- " * 13 + "|"]
    for row in rows:
        cells = [row["op"] + ("" if row["same_function"] else " (OUTPUTS DIFFER)")]
        for k in ("fwd", "bwd", "fb"):
            cells += [ms(row[f"a_{k}"]), ms(row[f"b_{k}"]), r(row[f"a_{k}"], row[f"b_{k}"])]
        na, nb = row["a_fb"] - call_a, row["b_fb"] - call_b
        cells += [ms(na), ms(nb), r(na, nb)] if row is not rows[0] else ["", "", ""]
        lines.append("| " + " | ".join(cells) + " |")
    worst = sorted(rows[1:], key=lambda x: (x["a_fb"] - call_a) - (x["b_fb"] - call_b),
                   reverse=True)
    lines += ["", f"A = {result['a']}, B = {result['b']}; ms per call; net = fwd+bwd minus the "
              "side's own empty jit call (first row).", "",
              "Largest net gaps (A minus B, fwd+bwd, per call): " + ", ".join(
                  f"{x['op']} (+{(x['a_fb'] - call_a) - (x['b_fb'] - call_b):.2f} ms)"
                  for x in worst[:5])]
    return "\n".join(lines)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--calls", type=int, default=10, help="timed calls per op, block and round")
    p.add_argument("--a", default="mindspore:2", help="side A: mindspore|torch[:threads"
                   "[:options]], options O1 (jit_level) and/or graph_kernel joined by +")
    p.add_argument("--b", default="torch:2", help="side B, same form (default torch:2)")
    p.add_argument("--out", help="write the result as JSON here")
    p.add_argument("--table", metavar="JSON", help="print the table of a saved result and exit")
    p.add_argument("--child", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        child(args.child)
        return
    if args.table:
        print(table(json.loads(Path(args.table).read_text())))
        return
    result = measure(args)
    if args.out:
        Path(args.out).write_text(json.dumps(result, indent=1))
    print(f"{result['finished']}, load (1, 5, 15 min) start {result['load_start_end'][0]}, "
          f"end {result['load_start_end'][1]}; times in ms per call, median of "
          f"{args.rounds} x {args.calls} calls")
    print(table(result))


if __name__ == "__main__":
    main()
