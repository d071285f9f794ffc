"""The CycleGAN run (``task = "cyclegan"``): unpaired data, the G and D players of
:func:`build_cyclegan`, translation grids and test-set cycle L1.

Both generators share the config's [generator] section and both discriminators its
[discriminator] section; [cyclegan] holds the loss weights and the pool size.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from mindspore import Tensor

from ...blocks.losses import get_loss
from ...config.builders import optimizer_from_config, transforms_from_config
from ...config.imports import build_cell
from ...config.schema import OptimConfig
from ...config.strict import ConfigError
from ...data.registry import DataBundle, build_data
from ...data.unpaired import UnpairedData
from ...engine.loop import Loop
from ...engine.player import prefix_parameters
from ...engine.sampling import Sampler
from ..base import Run
from ..shapes import call_net
from .build import CycleGAN, build_cyclegan
from .config import CycleGANConfig

EVAL_LIMIT = 256  # test images per domain scored for the cycle L1


def translation_chunk(shape: tuple[int, ...]) -> int:
    """Images per compiled translation call: 64 small ones, down to 4 at 256x256."""
    return int(max(1, min(64, 2**18 // (shape[-1] * shape[-2]))))


def build_generators(config: CycleGANConfig):
    """G_AB and G_BA from [generator], named as the G player names them."""
    g = config.generator
    nets = {k: build_cell(g.model, g.args, f"generator {k}") for k in ("G_AB", "G_BA")}
    prefix_parameters(nets, "G")
    return nets["G_AB"], nets["G_BA"]


def check_shapes(G, D, shape: tuple[int, ...], g_name: str, d_name: str) -> None:
    """One image through G and D, with errors that name the model and the shapes."""
    x = (Tensor(np.zeros((1, *shape), np.float32)),)
    y = call_net(G, x, f"generator {g_name}: cannot run on images of shape {shape}")
    if tuple(y.shape[1:]) != tuple(shape):
        raise ConfigError(f"generator {g_name}: maps images {shape} to {tuple(y.shape[1:])}; "
                          "CycleGAN needs the same shape in both domains")
    call_net(D, x, f"discriminator {d_name}: cannot run on images of shape {shape}")


class CycleGANRun(Run):
    """A CycleGAN training run; batches are ``(a, b)`` from an unpaired dataset."""

    config: CycleGANConfig
    data_parallel_blocker = (
        "its history pool of generated images is host state fed from each worker's own "
        "fakes, so the workers would train on different pools"
    )

    def fit_optim(self, oc: OptimConfig) -> None:
        """A linear decay left at ``decay_start = 0`` starts halfway, as the paper's 100
        constant + 100 decaying epochs."""
        if oc.lr_schedule == "linear_decay" and oc.decay_start == 0:
            oc.decay_start = oc.decay_steps // 2

    def build(self) -> None:
        c = self.config
        self.data: DataBundle = build_data(c.data.dataset, c.data.args, c.data.batch_size,
                                           c.seed)
        if not isinstance(self.data.dataset, UnpairedData):
            raise ConfigError(f"task 'cyclegan' needs unpaired data (data.dataset = "
                              f"'unpaired_folder' or 'digit_styles'), got {c.data.dataset!r}")
        shape = self.data.sample_shape
        G_AB, G_BA = build_generators(c)
        D_A, D_B = (build_cell(c.discriminator.model, c.discriminator.args, f"discriminator {k}")
                    for k in ("D_A", "D_B"))
        check_shapes(G_AB, D_A, shape, c.generator.model, c.discriminator.model)
        cg = c.cyclegan
        try:
            self.cg: CycleGAN = build_cyclegan(
                G_AB, G_BA, D_A, D_B, loss=get_loss(c.gan.loss),
                g_optimizer=optimizer_from_config(c.optim.generator, "optim.generator"),
                d_optimizer=optimizer_from_config(c.optim.discriminator, "optim.discriminator"),
                image_shape=shape, cycle_weight=cg.cycle_weight,
                identity_weight=cg.identity_weight, pool_size=cg.pool_size,
                split_discriminators=cg.split_discriminators,
                g_transforms=transforms_from_config(c.optim.generator, c.seed),
                d_transforms=transforms_from_config(c.optim.discriminator, c.seed + 1),
                g_accumulate=c.optim.generator.accumulate,
                d_accumulate=c.optim.discriminator.accumulate)
        except ValueError as e:
            raise ConfigError(f"[cyclegan]: {e}") from None
        self.schedule, self.source = self.cg.schedule, self.data.source
        self.players = {"generator": [self.cg.generator],
                        "discriminator": list(self.cg.discriminators)}
        self.translate = {"AB": Sampler(G_AB, chunk=translation_chunk(shape)),
                          "BA": Sampler(G_BA, chunk=translation_chunk(shape))}
        data = self.data.dataset
        self.eval_a, self.eval_b = data.test_a[:EVAL_LIMIT], data.test_b[:EVAL_LIMIT]

    # -- checkpoint: the history pools are one more file, pool.ckpt ------------------------------

    def checkpoint_state(self) -> dict[str, list]:
        pools = [p for pool in self.cg.pools.values() for p in pool.parameters()]
        return {**super().checkpoint_state(), "pool": pools}

    def save(self, loop: Loop) -> Path:
        for pool in self.cg.pools.values():
            pool.sync_out()
        return super().save(loop)

    def restore(self, path: str | Path) -> int:
        iteration = super().restore(path)
        for pool in self.cg.pools.values():
            pool.sync_in()
        return iteration

    def extra_state(self) -> dict[str, Any]:
        return {"sample_shape": list(self.data.sample_shape)}

    # -- evaluation -----------------------------------------------------------------------------

    def cycle(self, a: np.ndarray, b: np.ndarray) -> dict[str, np.ndarray]:
        """Translations and reconstructions of both domains."""
        fake_b = self.translate["AB"](a)
        fake_a = self.translate["BA"](b)
        return {"a": a, "fake_b": fake_b, "rec_a": self.translate["BA"](fake_b),
                "b": b, "fake_a": fake_a, "rec_b": self.translate["AB"](fake_a)}

    def evaluate(self, loop: Loop) -> None:
        """Grid rows a, G_AB(a), G_BA(G_AB(a)), b, G_BA(b), G_AB(G_BA(b)); test cycle L1."""
        from ...viz.images import save_grid

        out = self.cycle(self.eval_a, self.eval_b)
        l1_a = float(np.abs(out["rec_a"] - out["a"]).mean())
        l1_b = float(np.abs(out["rec_b"] - out["b"]).mean())
        cols = max(1, min(self.config.train.grid // 6, len(self.eval_a), len(self.eval_b)))
        rows = [out[k][:cols] for k in ("a", "fake_b", "rec_a", "b", "fake_a", "rec_b")]
        scale = 2 if self.data.sample_shape[-1] < 64 else 1
        save_grid(self.dir / "samples" / f"step_{loop.iteration:06d}.png",
                  np.concatenate(rows), cols, scale=scale)
        self.writer.write({"iteration": loop.iteration, "kind": "eval",
                           "eval/cycle_l1_a": l1_a, "eval/cycle_l1_b": l1_b,
                           "eval/cycle_l1": (l1_a + l1_b) / 2})
        self.last_report = (f"test cycle L1 {(l1_a + l1_b) / 2:.4f} (A->B->A {l1_a:.4f}, "
                            f"B->A->B {l1_b:.4f})")

    def finish(self) -> None:
        """``samples/final.png`` (the last grid) and ``samples/progress.gif`` (all grids)."""
        from ...viz.images import finish_grids

        finish_grids(self.dir / "samples")
