"""Does ``inter_op_parallel_num`` change the numbers MindSpore computes? (no gantrain code)

    python scripts/interop_determinism.py [--steps 20]

Runs one pure, side-effect-free jitted function (the gradients of a 2-128-128-1 MLP's
softplus loss over 20 fixed random batches) in fresh processes under four settings
(``runtime_num_threads`` 1 or 2 x ``inter_op_parallel_num`` default or 1) and prints a hash of
the gradients of each. The function has no Parameter writes, so nothing can be mis-ordered: a
difference between settings is the kernels' own arithmetic.

Measured with mindspore 2.10.0 on the 2-core CPU machine (docs/mindspore-notes.md, item 28):
with 1 thread both settings agree; with 2 threads, ``inter_op_parallel_num = 1`` gives other
gradients (to the last bits) than the default, which matches 1 thread. The process exits 1
while that holds, 0 once all four agree (then the faster setting could be reconsidered).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = r"""
import hashlib, os, sys
os.environ.setdefault("ONEDNN_MAX_CPU_ISA", "AVX2")
import numpy as np
import mindspore as ms
from mindspore import Tensor, nn, ops
threads, interop, steps = (int(v) for v in sys.argv[1:4])
ms.set_context(runtime_num_threads=threads)
if interop:
    ms.set_context(inter_op_parallel_num=interop)
rng = np.random.default_rng(0)
net = nn.SequentialCell(nn.Dense(2, 128), nn.ReLU(), nn.Dense(128, 128), nn.ReLU(),
                        nn.Dense(128, 1))
for p in net.trainable_params():
    p.set_data(Tensor(rng.standard_normal(p.shape).astype(np.float32) * 0.1))
params = net.trainable_params()


def loss_fn(a):
    loss = ops.softplus(-net(a)).mean()
    return loss, loss


grad_fn = ms.value_and_grad(loss_fn, None, params, has_aux=True)


@ms.jit
def grads(a):
    return grad_fn(a)[1]


h = hashlib.sha256()
for _ in range(steps):
    for g in grads(Tensor(rng.standard_normal((512, 2)).astype(np.float32))):
        h.update(g.asnumpy().tobytes())
print(h.hexdigest()[:16])
"""


def gradient_hash(threads: int, interop: int, steps: int) -> str:
    # a file, not ``python -c``: MindSpore's graph compiler reads the jitted function's source
    with tempfile.TemporaryDirectory(prefix="gantrain-interop-") as tmp:
        child = Path(tmp) / "child.py"
        child.write_text(CHILD)
        out = subprocess.run([sys.executable, str(child), str(threads), str(interop),
                              str(steps)], capture_output=True, text=True, cwd=tmp)
    if out.returncode != 0:
        raise RuntimeError(f"the child process failed:\n{out.stderr[-2000:]}")
    return out.stdout.strip().splitlines()[-1]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--steps", type=int, default=20)
    args = p.parse_args(argv)
    hashes = {}
    for threads in (1, 2):
        for interop in (0, 1):
            hashes[threads, interop] = gradient_hash(threads, interop, args.steps)
            label = "default" if interop == 0 else str(interop)
            print(f"runtime_num_threads={threads} inter_op_parallel_num={label}: "
                  f"{hashes[threads, interop]}")
    same = len(set(hashes.values())) == 1
    print("all settings agree" if same else
          "the settings disagree: inter_op_parallel_num changes the kernels' arithmetic")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
