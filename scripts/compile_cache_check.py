"""Can MindSpore's compile cache serve gantrain's steps? (no gantrain code in the child)

    python scripts/compile_cache_check.py

Runs one child script four times in fresh processes with ``MS_COMPILER_CACHE_ENABLE=1`` and
one ``MS_COMPILER_CACHE_PATH``: cold (compiles, writes the cache), warm (same script, same
shapes: loads it), warm with a hidden width changed by an environment variable (same script
text, other shapes), and warm with the two Cells compiled in the other order. The child
compiles three graphs: a plain ``@ms.jit`` function over a net's forward (gantrain's player
steps are such functions), an ``nn.Cell`` whose ``construct`` is ``@ms.jit`` (forward), a
Cell training step (gradients + Adam, 3 steps), a closure training step called from a Cell
that holds the nets and optimizer it reads, and a closure forward called from a Cell that
holds one of the two nets it reads.
It prints one JSON line: each graph's output, the same forwards run eagerly, a hash of the
trained weights, and the first call's seconds.

Measured with mindspore 2.10.0 on CPU (docs/mindspore-notes.md, item 29):

* the plain ``@ms.jit`` function, loaded from the cache, reads unbound parameters: NaN or
  garbage instead of the eager value (MindSpore binds cached graphs' weights by name from a
  Cell's ``parameters_dict()``, and a function has none);
* the Cell graphs load and are exact: forward and the 3 trained steps bit-identical to the
  cold run, first call several times faster; so does a closure step (value_and_grad, Adam, a
  second net read without training) called from a Cell that holds every net and optimizer
  it reads, the shape gantrain's steps would need;
* but a Cell whose closure reads one net it does not hold loads that net's weights unbound:
  a wrong value, no error, no warning. gantrain cannot see which Parameters a user's loss
  function reads, so wrapping the steps in Cells alone would not make the cache safe;
* the cache is keyed by a hash of the entry script and the local (not installed) modules it
  imports, never by shapes or values: with the width changed and the script unchanged the
  stale graph is loaded (a segfault here, or wrong numbers);
* cached graphs are files numbered in compile order (``compile_cache_<n>.mindir``): the same
  graphs compiled in another order each load the other's file (NaN or garbage, no error).

Prints the three runs and exits 0 when these facts still hold, 1 otherwise (then re-check the
notes item: MindSpore changed).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = r"""
import hashlib, json, os, time
os.environ.setdefault("ONEDNN_MAX_CPU_ISA", "AVX2")
import numpy as np
import mindspore as ms
from mindspore import Tensor, nn, ops

ms.set_device("CPU")
ms.set_context(mode=ms.PYNATIVE_MODE)
ms.set_seed(0)
W = int(os.environ["WIDTH"])


def mlp(prefix):
    net = nn.SequentialCell(nn.Dense(8, W), nn.ReLU(), nn.Dense(W, 1))
    for p in net.get_parameters():
        p.name = prefix + "." + p.name
    return net


fn_net, cell_net, train_net = mlp("f"), mlp("c"), mlp("t")


@ms.jit
def forward(x):
    return fn_net(x).sum()


class Forward(nn.Cell):
    def __init__(self, net):
        super().__init__()
        self.net = net

    @ms.jit
    def construct(self, x):
        return self.net(x).sum()


class TrainStep(nn.Cell):
    def __init__(self, net):
        super().__init__()
        self.net = net
        self.opt = nn.Adam(net.trainable_params(), 1e-2)
        self.grad = ms.value_and_grad(self.loss, None, self.opt.parameters)

    def loss(self, x):
        return self.net(x).square().mean()

    @ms.jit
    def construct(self, x):
        loss, grads = self.grad(x)
        self.opt(grads)
        return loss


class Holder(nn.Cell):
    # a Cell around a closure step, the shape gantrain's player steps would take: it holds
    # `cells` so that their parameters are in its parameters_dict()

    def __init__(self, fn, cells):
        super().__init__()
        self.held = nn.CellList(cells)
        self.fn = fn

    @ms.jit
    def construct(self, x):
        return self.fn(x)


other, reader, outside = mlp("o"), mlp("r"), mlp("x")
opt = nn.Adam(reader.trainable_params(), 1e-2)


def closure_loss(x):  # like a D step: reads another player's net without training it
    return reader(x).square().mean() + ops.stop_gradient(other(x)).mean()


closure_grad = ms.value_and_grad(closure_loss, None, opt.parameters)


def closure_step(x):
    loss, grads = closure_grad(x)
    return ops.depend(loss, opt(grads))


def unheld_forward(x):  # reads a net its Holder does not hold
    return other(x).sum() + outside(x).sum()


x = Tensor(np.random.default_rng(0).standard_normal((16, 8)).astype(np.float32))
step = TrainStep(train_net)
out, seconds = {}, {}
calls = [("function", forward), ("cell", Forward(cell_net)), ("train", step),
         ("held", Holder(closure_step, [reader, other, opt])),
         ("unheld", Holder(unheld_forward, [other]))]
if os.environ.get("SWAP"):  # the same graphs, the two Cells compiled in the other order
    calls[1], calls[2] = calls[2], calls[1]
for name, call in calls:
    t = time.perf_counter()
    out[name] = float(call(x).asnumpy())
    seconds[name] = round(time.perf_counter() - t, 3)
for _ in range(2):
    out["train"] = float(step(x).asnumpy())
weights = b"".join(p.asnumpy().tobytes() for p in train_net.get_parameters())
print(json.dumps({
    "out": out, "first_call_s": seconds,
    "eager": {"function": float(fn_net(x).sum().asnumpy()),
              "cell": float(cell_net(x).sum().asnumpy()),
              "unheld": float((other(x).sum() + outside(x).sum()).asnumpy())},
    "trained_weights": hashlib.sha256(weights).hexdigest()[:16],
}))
"""


def run_child(folder: Path, cache: Path, width: int, swap: bool = False) -> dict:
    """One fresh process with the cache on; its JSON line, or the exit code it died with."""
    env = {**os.environ, "MS_COMPILER_CACHE_ENABLE": "1", "MS_COMPILER_CACHE_PATH": str(cache),
           "WIDTH": str(width), "GLOG_v": "3", "SWAP": "1" if swap else ""}
    done = subprocess.run([sys.executable, str(folder / "child.py")], cwd=folder, env=env,
                          capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        return {"returncode": done.returncode, "stderr": done.stderr[-400:]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def check() -> tuple[bool, list[dict]]:
    """Run cold, warm, warm with other shapes, and warm with the Cells compiled in the other
    order; whether item 29's facts hold, and the runs."""
    with tempfile.TemporaryDirectory(prefix="gantrain-compile-cache-") as tmp:
        folder = Path(tmp)
        (folder / "child.py").write_text(CHILD)
        cache = folder / "cache"
        cold = run_child(folder, cache, 32)
        warm = run_child(folder, cache, 32)
        other = run_child(folder, cache, 16)
        swapped = run_child(folder, cache, 32, swap=True)
    runs = [cold, warm, other, swapped]
    holds = (
        "out" in cold and "out" in warm
        and cold["out"]["function"] == cold["eager"]["function"]
        and warm["out"]["function"] != warm["eager"]["function"]  # unbound weights: wrong
        and warm["out"]["cell"] == cold["out"]["cell"] == warm["eager"]["cell"]
        and warm["out"]["train"] == cold["out"]["train"]
        and warm["trained_weights"] == cold["trained_weights"]
        and warm["out"]["held"] == cold["out"]["held"]  # a closure in a Cell holding its nets
        and cold["out"]["unheld"] == cold["eager"]["unheld"]
        and warm["out"]["unheld"] != warm["eager"]["unheld"]  # one net not held: wrong, no error
        and ("returncode" in other or other["out"]["cell"] != other["eager"]["cell"])
        and ("returncode" in swapped or swapped["out"]["cell"] != swapped["eager"]["cell"])
    )
    return holds, runs


def main() -> None:
    holds, runs = check()
    for label, run in zip(("cold", "warm", "warm, other width", "warm, other order"), runs):
        print(label, json.dumps(run))
    print("facts hold" if holds else "facts changed: re-check docs/mindspore-notes.md item 29")
    sys.exit(0 if holds else 1)


if __name__ == "__main__":
    main()
