#!/usr/bin/env python
"""Does fine-tuning D before rejection sampling help? Azadi et al. 2019 fine-tune D on the
final generator before DRS. This trains a finished 2D GAN run's D for STEPS more steps against
its frozen EMA generator (nonsaturating loss, Adam(LR, 0.5, 0.999), fresh mixture batches of
1,024), then scores 2,500 DRS samples at several percentiles (``None``: exact rejection,
gamma = 0); STEPS = 0 scores the D as trained. Prints one JSON line with, per percentile,
(modes, high quality %, % of candidates kept).

    python scripts/drs_finetune_check.py runs/<2d run> STEPS LR [SEED]

An experiment kept for the record (docs/quality.md), not a gantrain feature.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

import gantrain  # noqa: F401  (sets MindSpore's environment before it loads)
from gantrain.blocks import latents
from gantrain.blocks.rejection import rejection_sample
from gantrain.config.imports import build_cell
from gantrain.data.mixtures import MIXTURES
from gantrain.engine import checkpoint, runtime
from gantrain.metrics.mixture import mixture_report
from gantrain.recipes.gan.sample import critic_score, load_generator
from gantrain.recipes.gan.wrappers import packed
from gantrain.recipes.rundir import checkpoint_config
from gantrain.recipes.sampling import load_player_nets

BATCH = 1024


def fine_tune(D, m: int, real, fake, steps: int, lr: float) -> list[float]:
    """``steps`` nonsaturating updates of the Cell ``D`` (packing ``m``) on ``real()`` against
    ``fake()`` batches."""
    import mindspore as ms
    from mindspore import Tensor, nn, ops

    view = packed(D, m)
    opt = nn.Adam(D.trainable_params(), learning_rate=lr, beta1=0.5, beta2=0.999)

    def loss_fn(x, g):
        return ops.softplus(-view(x)).mean() + ops.softplus(view(g)).mean()

    grad_fn = ms.value_and_grad(loss_fn, None, opt.parameters)

    @ms.jit
    def step(x, g):
        loss, grads = grad_fn(x, g)
        opt(grads)
        return loss

    return [float(step(Tensor(real()), Tensor(fake())).asnumpy()) for _ in range(steps)]


def main() -> None:
    run_dir, steps, lr = Path(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
    seed = int(sys.argv[4]) if len(sys.argv) > 4 else 0
    runtime.setup("CPU", 0)
    ckpt = checkpoint.resolve(run_dir)
    config = checkpoint_config(ckpt)
    mixture = MIXTURES[config.data.args["name"]]()
    G = load_generator(ckpt, config, ema=True)
    D = build_cell(config.discriminator.model, config.discriminator.args, "discriminator")
    load_player_nets(ckpt, "D", {"D": D})
    rng = np.random.default_rng(seed)

    def generate(k: int) -> np.ndarray:
        z = latents.draw(rng, k, config.gan.z_dim, None, None)
        return np.asarray(G(z, latents.labels(rng, k, 0, None)), np.float32)

    losses = fine_tune(D, config.gan.pack, lambda: mixture.sample(rng, BATCH).astype(np.float32),
                       lambda: generate(BATCH), steps, lr)
    score = critic_score(D, config.gan.pack, rng)
    row = {"run": run_dir.name, "steps": steps, "lr": lr,
           "loss_first_last": [float(np.mean(losses[:10])), float(np.mean(losses[-10:]))]
           if losses else None}
    for p in (None, 50.0, 80.0, 95.0):
        samples, kept = rejection_sample(generate, score, 2500, np.random.default_rng(seed),
                                         percentile=p)
        r = mixture_report(samples, mixture)
        row[f"drs{p}"] = (r.modes, round(100 * r.high_quality, 1), round(100 * kept, 1))
    print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
