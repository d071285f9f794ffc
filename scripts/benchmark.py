"""Training-speed benchmark: gantrain's loop against a hand-written MindSpore loop.

    python scripts/benchmark.py [--presets dcgan_digits] [--iters 100] [--rounds 3]
                                [--set KEY=VALUE ...] [--out benchmark.json] [--quick]

For each preset, interleaved round by round (A, B, A, B, ...) so that the ratio survives a noisy
machine:

* ``gantrain``: the preset's full training loop (data loader, hooks, logging, progress bar off);
* ``handwritten``: the same nets, batch and optimizers in the seed style (one
  ``value_and_grad`` + ``@ms.jit`` step per net, numpy batches, no framework); presets whose
  recipe it does not reproduce (penalties, DiffAugment, packing, conditioning) get no baseline;
* ``steps only``: gantrain's compiled steps called back to back on fixed inputs, which gives the
  share of wall time spent outside the jitted steps (data, noise, hooks, Python).

Reports median iterations/s with min/max, the ratio gantrain / hand-written, time to the first
iteration (build + compile) and peak RSS, and writes them as JSON.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import tempfile
import time
from pathlib import Path

import gantrain  # noqa: F401  (sets MindSpore's environment before it loads)

# isort: split
import mindspore as ms
import numpy as np
from mindspore import Tensor, ops

from gantrain import runtime
from gantrain.config import Config, load_config
from gantrain.imports import build_cell
from gantrain.losses import get_loss
from gantrain.run import Run


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


class Handwritten:
    """The seed-style loop, written out by hand for the plain GAN recipe."""

    def __init__(self, config: Config, data: np.ndarray) -> None:
        c = config
        self.G = build_cell(c.generator.model, c.generator.args, "generator")
        self.D = build_cell(c.discriminator.model, c.discriminator.args, "discriminator")
        self.G.update_parameters_name("hwG.")
        self.D.update_parameters_name("hwD.")
        self.data, self.batch, self.z_dim = data, c.data.batch_size, c.gan.z_dim
        self.n_critic = c.gan.n_critic
        self.rng = np.random.default_rng(0)
        loss = get_loss(c.gan.loss)
        G, D = self.G, self.D

        def adam(net, oc):
            b1, b2 = oc.betas
            if b1 == 0.0:
                return ms.mint.optim.Adam(net.trainable_params(), lr=oc.lr, betas=(b1, b2))
            return ms.nn.Adam(net.trainable_params(), learning_rate=oc.lr, beta1=b1, beta2=b2)

        opt_d, opt_g = adam(D, c.optim.discriminator), adam(G, c.optim.generator)

        def d_forward(real, z):
            fake = ops.stop_gradient(G(z))
            return loss.d(ops.reshape(D(real), (-1,)), ops.reshape(D(fake), (-1,)))

        def g_forward(z):
            d_fake = ops.reshape(D(G(z)), (-1,))
            return loss.g(d_fake, d_fake)

        d_grad = ms.value_and_grad(d_forward, None, opt_d.parameters)
        g_grad = ms.value_and_grad(g_forward, None, opt_g.parameters)

        @ms.jit
        def d_step(real, z):
            value, grads = d_grad(real, z)
            return ops.depend(value, opt_d(grads))

        @ms.jit
        def g_step(z):
            value, grads = g_grad(z)
            return ops.depend(value, opt_g(grads))

        self.d_step, self.g_step = d_step, g_step
        self.ema = None
        if c.gan.ema_decay is not None:
            params = opt_g.parameters
            shadow = params.clone(prefix="hw_ema", init="same")
            decay = c.gan.ema_decay

            @ms.jit
            def ema_step():
                for s, p in zip(shadow, params):
                    ops.assign(s, s * decay + p * (1.0 - decay))
                return True

            self.ema = ema_step
        G.set_train(True)
        D.set_train(True)

    def iteration(self) -> None:
        for _ in range(self.n_critic):
            idx = np.sort(self.rng.choice(len(self.data), self.batch, replace=False))
            z = self.rng.standard_normal((self.batch, self.z_dim), dtype=np.float32)
            self.d_step(Tensor(self.data[idx]), Tensor(z))
        z = self.rng.standard_normal((self.batch, self.z_dim), dtype=np.float32)
        self.g_step(Tensor(z))
        if self.ema is not None:
            self.ema()

    def run(self, iters: int) -> float:
        start = time.perf_counter()
        for _ in range(iters):
            self.iteration()
        loss = self.g_step(Tensor(np.zeros((self.batch, self.z_dim), np.float32)))
        loss.asnumpy()  # wait for the device
        return time.perf_counter() - start


def baseline_supported(c: Config) -> str:
    if c.gan.penalty != "none" or c.gan.augment or c.gan.pack > 1 or c.gan.num_classes:
        return "penalty/augment/pack/conditioning: no hand-written baseline"
    if c.optim.generator.accumulate > 1 or c.optim.discriminator.accumulate > 1:
        return "gradient accumulation: no hand-written baseline"
    return ""


def time_gantrain(run: Run, iters: int) -> float:
    start = time.perf_counter()
    run.loop.run(run.loop.iteration + iters)
    list(run.loop.outputs.values())[-1][0].asnumpy()
    return time.perf_counter() - start


def time_steps_only(run: Run, iters: int) -> float:
    """gantrain's compiled steps back to back on inputs built once, in schedule order."""
    ctx = run.loop.ctx
    calls = []
    for phase in run.gan.schedule.phases:
        if phase.every == 1:
            calls += [(phase.target, phase.inputs(ctx))] * phase.repeats
    start = time.perf_counter()
    for _ in range(iters):
        for target, inputs in calls:
            out = target.step(*inputs)
    out[0].asnumpy()
    return time.perf_counter() - start


def bench(preset: str, overrides: list[str], iters: int, rounds: int) -> dict:
    config = load_config(preset, ["train.progress=false", *overrides])
    folder = Path(tempfile.mkdtemp(prefix="gantrain-bench-"))
    t0 = time.perf_counter()
    run = Run(config, folder / "run")
    run.loop.run(1)
    first_iteration = time.perf_counter() - t0
    reason = baseline_supported(config)
    hand = None
    if not reason:
        runtime.setup(config.device, config.seed)
        hand = Handwritten(config, run.data.dataset.x if run.data.dataset is not None else None)
        hand.run(1)
    a, b, s = [], [], []
    for _ in range(rounds):
        a.append(iters / time_gantrain(run, iters))
        if hand is not None:
            b.append(iters / hand.run(iters))
        s.append(iters / time_steps_only(run, iters))

    def stats(xs):
        return {"median": round(statistics.median(xs), 3), "min": round(min(xs), 3),
                "max": round(max(xs), 3)} if xs else None

    row = {
        "preset": preset, "iters_per_round": iters, "rounds": rounds,
        "gantrain_it_s": stats(a), "handwritten_it_s": stats(b), "steps_only_it_s": stats(s),
        "ratio_gantrain_handwritten": round(statistics.median(a) / statistics.median(b), 3)
        if b else None,
        "outside_steps_share": round(1 - statistics.median(a) / statistics.median(s), 3),
        "first_iteration_s": round(first_iteration, 2), "peak_rss_mb": round(peak_rss_mb()),
        "baseline_note": reason,
    }
    return row


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--presets", nargs="+", default=["dcgan_digits"])
    p.add_argument("--iters", type=int, default=100, help="iterations per round")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--set", dest="overrides", action="append", default=[])
    p.add_argument("--out", default="benchmark.json")
    p.add_argument("--quick", action="store_true", help="tiny smoke run (a test uses it)")
    args = p.parse_args()
    if args.quick:
        args.iters, args.rounds = 3, 1
        args.overrides = ["data.args.n=128", "data.batch_size=16", "generator.args.width=8",
                          "discriminator.args.width=8", *args.overrides]
    rows = []
    for preset in args.presets:
        row = bench(preset, args.overrides, args.iters, args.rounds)
        rows.append(row)
        ratio = row["ratio_gantrain_handwritten"]
        print(f"{preset}: gantrain {row['gantrain_it_s']['median']} it/s "
              f"(min {row['gantrain_it_s']['min']}, max {row['gantrain_it_s']['max']}), "
              f"hand-written {row['handwritten_it_s'] and row['handwritten_it_s']['median']} it/s, "
              f"ratio {ratio}, outside steps {100 * row['outside_steps_share']:.1f}%, "
              f"first iteration {row['first_iteration_s']} s, peak RSS {row['peak_rss_mb']} MB",
              flush=True)
    Path(args.out).write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
