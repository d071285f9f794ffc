"""Measure one runtime lever at a time on a preset's compiled steps (docs/performance.md).

    python scripts/bench_levers.py compare --variant NAME:ENV=V,...:ARG ... [--rounds 3]
    python scripts/bench_levers.py profile [--preset dcgan_digits] [--set KEY=VALUE ...]

``compare`` runs each variant in its own fresh process (environment variables such as
``ONEDNN_MAX_CPU_ISA`` only act before mindspore loads; thread counts and jit levels before the
first compile), interleaved round by round (A, B, A, B, ...), and prints the median D+G
iterations/s of gantrain's steps called back to back. A variant is
``name:ENV=V,ENV2=V2:--threads 1 --jit-level O1`` (both parts optional); ``--jit-level``
sets the config's ``jit_level``.

``profile`` times the pieces of each player's step as separate jitted functions: the loss alone,
with gradients, with the global norm, with the optimizer (plain, and under a tensor-conditioned
``if``, which changes how MindSpore runs the graph: docs/mindspore-notes.md, item 32), and the
whole step.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve()


def _child(argv: list[str]) -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--preset", default="dcgan_digits")
    p.add_argument("--set", dest="overrides", action="append", default=[])
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--threads", type=int)
    p.add_argument("--inter-op", type=int)
    p.add_argument("--jit-level")
    args = p.parse_args(argv)
    import gantrain  # noqa: F401

    # isort: split
    import mindspore as ms

    from gantrain.engine import runtime
    from gantrain.recipes.gan.run import GANRun
    from gantrain.recipes.registry import load_config

    runtime.setup("CPU", 0)
    if args.threads:
        ms.set_context(runtime_num_threads=args.threads)
    if args.inter_op is not None:
        ms.set_context(inter_op_parallel_num=args.inter_op)
    level = [f'jit_level="{args.jit_level}"'] if args.jit_level else []  # the config key
    config = load_config(args.preset, ["train.progress=false", *args.overrides, *level])
    run = GANRun(config, Path(tempfile.mkdtemp(prefix="gantrain-lever-")) / "run")
    run.loop.run(2)
    ctx, calls = run.loop.ctx, []
    for phase in run.schedule.phases:
        if phase.every == 1:
            calls += [(phase.target, phase.inputs(ctx))] * phase.repeats
    start = time.perf_counter()
    for _ in range(args.iters):
        for target, inputs in calls:
            out = target.step(*inputs)
    out[0].asnumpy()
    rate = args.iters / (time.perf_counter() - start)
    print(json.dumps({"it_s": rate, "threads": ms.get_context("runtime_num_threads")}))


def _parse_variant(spec: str) -> tuple[str, dict[str, str], list[str]]:
    name, _, rest = spec.partition(":")
    env_part, _, arg_part = rest.partition(":")
    env = dict(kv.split("=", 1) for kv in env_part.split(",") if kv)
    return name, env, shlex.split(arg_part)


def compare(args: argparse.Namespace) -> None:
    variants = [_parse_variant(v) for v in args.variant]
    rates: dict[str, list[float]] = {name: [] for name, _, _ in variants}
    common = ["--preset", args.preset, "--iters", str(args.iters)]
    for o in args.overrides:
        common += ["--set", o]
    for _ in range(args.rounds):
        for name, env, extra in variants:
            cmd = [sys.executable, str(HERE), "_child", *common, *extra]
            out = subprocess.run(cmd, env={**os.environ, **env}, capture_output=True, text=True)
            if out.returncode:
                print(f"{name}: failed\n{out.stderr[-1500:]}", flush=True)
                rates[name].append(float("nan"))
                continue
            rates[name].append(json.loads(out.stdout.strip().splitlines()[-1])["it_s"])
            print(f"  {name}: {rates[name][-1]:.3f} it/s", flush=True)
    base = statistics.median(rates[variants[0][0]])
    print(f"load average {os.getloadavg()}")
    for name, xs in rates.items():
        med = statistics.median(xs)
        print(f"{name}: median {med:.3f} it/s (min {min(xs):.3f}, max {max(xs):.3f}), "
              f"x{med / base:.2f} vs {variants[0][0]}")


def _timeit(fn, *inputs, n: int = 10) -> float:
    out = fn(*inputs)
    _sync(out)
    times = []
    for _ in range(n):
        t = time.perf_counter()
        _sync(fn(*inputs))
        times.append(time.perf_counter() - t)
    return 1000 * statistics.median(times)


def _sync(out) -> None:
    while isinstance(out, (tuple, list)):
        out = out[0]
    out.asnumpy()


def _pieces(player, inputs) -> dict:
    """Jitted functions of one player's step, from its loss alone to the whole step."""
    import mindspore as ms
    from mindspore import ops

    from gantrain.engine.transforms import global_norm

    loss_fn = player._objectives[""]
    grad_fn = ms.value_and_grad(loss_fn, None, player.optimizer.parameters, has_aux=True)
    opt = player.optimizer

    @ms.jit
    def forward(*i):
        return loss_fn(*i)[0]

    @ms.jit
    def grads(*i):
        (loss, _), g = grad_fn(*i)
        return ops.depend(loss, g)

    @ms.jit
    def grads_norm(*i):
        (loss, _), g = grad_fn(*i)
        return ops.depend(loss, g), global_norm(g)

    @ms.jit
    def grads_update(*i):
        (loss, _), g = grad_fn(*i)
        return ops.depend(loss, opt(g))

    @ms.jit
    def grads_update_branch(*i):
        (loss, _), g = grad_fn(*i)
        if ops.isfinite(loss):
            loss = ops.depend(loss, opt(g))
        return loss

    name = player.name
    return {
        f"{name} loss (forward only)": (forward, inputs),
        f"{name} loss + grads": (grads, inputs),
        f"{name} loss + grads + global norm": (grads_norm, inputs),
        f"{name} loss + grads + optimizer": (grads_update, inputs),
        f"{name} the same under `if isfinite(loss):`": (grads_update_branch, inputs),
        f"{name} step (norm, non-finite skip, optimizer, EMA)": (player.step, inputs),
    }


def profile(args: argparse.Namespace) -> None:
    """Median ms of each piece, the rows interleaved over ``--rounds`` (run it on an idle
    machine). The optimizer rows update the weights, which does not change the cost."""
    import gantrain  # noqa: F401

    # isort: split
    import mindspore as ms
    import numpy as np

    from gantrain.engine import runtime
    from gantrain.recipes.gan.run import GANRun
    from gantrain.recipes.registry import load_config

    runtime.setup("CPU", 0)
    config = load_config(args.preset, ["train.progress=false", *args.overrides])
    run = GANRun(config, Path(tempfile.mkdtemp(prefix="gantrain-prof-")) / "run")
    run.loop.run(1)
    ctx = run.loop.ctx
    phases = {p.name: p for p in run.schedule.phases}
    one = ms.Tensor(np.ones((), np.float32))

    @ms.jit
    def empty(x):
        return x + 1

    rows = {"empty jitted call": (empty, (one,))}
    rows.update(_pieces(run.gan.discriminator, phases["D"].inputs(ctx)))
    rows.update(_pieces(run.gan.generator, phases["G"].inputs(ctx)))
    times: dict[str, list[float]] = {k: [] for k in rows}
    for _ in range(args.rounds):
        for key, (fn, inputs) in rows.items():
            times[key].append(_timeit(fn, *inputs, n=args.calls))
    print(f"{args.preset}, batch {config.data.batch_size}, load {os.getloadavg()}, "
          f"MS_DEV_HOST_BLOCKING_RUN={os.environ.get('MS_DEV_HOST_BLOCKING_RUN', '')!r}")
    print("| piece | ms (median of rounds) | min-max |\n| --- | --- | --- |")
    for key, xs in times.items():
        print(f"| {key} | {statistics.median(xs):.2f} | {min(xs):.2f}-{max(xs):.2f} |")


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "_child":
        _child(sys.argv[2:])
        return
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    for name in ("compare", "profile"):
        s = sub.add_parser(name)
        s.add_argument("--preset", default="dcgan_digits")
        s.add_argument("--set", dest="overrides", action="append", default=[])
    c = sub.choices["compare"]
    c.add_argument("--variant", action="append", required=True)
    c.add_argument("--rounds", type=int, default=3)
    c.add_argument("--iters", type=int, default=20)
    f = sub.choices["profile"]
    f.add_argument("--rounds", type=int, default=3)
    f.add_argument("--calls", type=int, default=50, help="timed calls per piece and round")
    args = p.parse_args()
    compare(args) if args.command == "compare" else profile(args)


if __name__ == "__main__":
    main()
