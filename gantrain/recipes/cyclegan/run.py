"""The CycleGAN run (``task = "cyclegan"``): unpaired data, the G and D players of
:func:`gantrain.cyclegan.build_cyclegan`, translation grids, test-set cycle L1 and
``gantrain sample`` as translation of a folder of images.

Both generators share the config's [generator] section and both discriminators its
[discriminator] section; [cyclegan] holds the loss weights and the pool size.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ...blocks.losses import get_loss
from ...config.builders import optimizer_from_config
from ...config.imports import build_cell
from ...config.schema import Config, ConfigError
from ...data.registry import DataBundle, build_data
from ...data.unpaired import UnpairedData
from ...engine import checkpoint, runtime
from ...engine.loop import Loop
from ...engine.player import prefix_parameters
from ...engine.sampling import Sampler
from ..base import BaseRun, resolve_schedules
from .build import CycleGAN, build_cyclegan

EVAL_LIMIT = 256  # test images per domain scored for the cycle L1


def _chunk(shape: tuple[int, ...]) -> int:
    """Images per compiled translation call: 64 small ones, down to 4 at 256x256."""
    return int(max(1, min(64, 2**18 // (shape[-1] * shape[-2]))))


def build_generators(config: Config):
    """G_AB and G_BA from [generator], named as the G player names them."""
    g = config.generator
    nets = {k: build_cell(g.model, g.args, f"generator {k}") for k in ("G_AB", "G_BA")}
    prefix_parameters(nets, "G")
    return nets["G_AB"], nets["G_BA"]


def _check_shapes(G, D, shape: tuple[int, ...], g_name: str, d_name: str) -> None:
    """One image through G and D, with errors that name the model and the shapes."""
    from mindspore import Tensor

    x = Tensor(np.zeros((1, *shape), np.float32))
    try:
        y = G(x)
    except Exception as e:  # mindspore raises ValueError/RuntimeError/TypeError on shapes
        raise ConfigError(f"generator {g_name}: cannot run on images of shape {shape}: "
                          f"{type(e).__name__}: {str(e).splitlines()[0]}") from None
    if tuple(y.shape[1:]) != tuple(shape):
        raise ConfigError(f"generator {g_name}: maps images {shape} to {tuple(y.shape[1:])}; "
                          "CycleGAN needs the same shape in both domains")
    try:
        D(x)
    except Exception as e:
        raise ConfigError(f"discriminator {d_name}: cannot run on images of shape {shape}: "
                          f"{type(e).__name__}: {str(e).splitlines()[0]}") from None


class CycleGANRun(BaseRun):
    """A CycleGAN training run; batches are ``(a, b)`` from an unpaired dataset."""

    def resolve(self, config: Config) -> Config:
        """Each optimizer updates once per iteration; a linear decay left at ``decay_start = 0``
        starts halfway, as the paper's 100 constant + 100 decaying epochs."""
        config = resolve_schedules(config, {"generator": 1, "discriminator": 1})
        for name in ("generator", "discriminator"):
            oc = getattr(config.optim, name)
            if oc.lr_schedule == "linear_decay" and oc.decay_start == 0:
                oc.decay_start = oc.decay_steps // 2
        return config

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
        _check_shapes(G_AB, D_A, shape, c.generator.model, c.discriminator.model)
        cg = c.cyclegan
        try:
            self.cg: CycleGAN = build_cyclegan(
                G_AB, G_BA, D_A, D_B, loss=get_loss(c.gan.loss),
                g_optimizer=optimizer_from_config(c.optim.generator, "optim.generator"),
                d_optimizer=optimizer_from_config(c.optim.discriminator, "optim.discriminator"),
                image_shape=shape, cycle_weight=cg.cycle_weight,
                identity_weight=cg.identity_weight, pool_size=cg.pool_size,
                split_discriminators=cg.split_discriminators)
        except ValueError as e:
            raise ConfigError(f"[cyclegan]: {e}") from None
        self.schedule, self.source = self.cg.schedule, self.data.source
        self.player_list = [self.cg.generator, *self.cg.discriminators]
        self.translate = {"AB": Sampler(G_AB, chunk=_chunk(shape)),
                          "BA": Sampler(G_BA, chunk=_chunk(shape))}
        data = self.data.dataset
        self.eval_a, self.eval_b = data.test_a[:EVAL_LIMIT], data.test_b[:EVAL_LIMIT]

    # -- checkpoint: the history pools are one more file, pool.ckpt ------------------------------

    def players(self) -> dict[str, list]:
        pools = [p for pool in self.cg.pools.values() for p in pool.parameters()]
        return {**super().players(), "pool": pools}

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

    # -- gantrain sample ------------------------------------------------------------------------

    @classmethod
    def sample_command(cls, ckpt: Path, config: Config, args: Any) -> str:
        """Translate ``--input`` (a folder of images) or the run's test images in
        ``--direction`` AB or BA; write side-by-side grids (input | translated)."""
        from ...data.folder import find_images, load_image
        from ...viz.images import save_grid, save_images

        for flag, value in (("--class", args.label), ("--truncation", args.truncation),
                            ("--interpolate", args.interpolate)):
            if value is not None:
                raise ConfigError(f"{flag} is for GAN runs; {ckpt} is a cyclegan run, which "
                                  "translates images (use --input FOLDER and --direction AB|BA)")
        direction = getattr(args, "direction", None) or "AB"
        runtime.setup(config.device, config.seed)
        nets = dict(zip(("AB", "BA"), build_generators(config)))
        checkpoint.load_parameters([p for g in nets.values() for p in g.get_parameters()],
                                   ckpt / "G.ckpt", strict=False)
        shape = tuple(checkpoint.read_state(ckpt)["extra"]["sample_shape"])
        folder = getattr(args, "input", None)
        if folder:
            if not Path(folder).is_dir():
                raise ConfigError(f"--input {folder}: no such folder (expected a folder of "
                                  "images to translate)")
            files = find_images(folder)[: args.n]
            x = np.stack([load_image(f, shape[1:], shape[0]).reshape(shape[1], shape[2], -1)
                          for f in files]).transpose(0, 3, 1, 2)
            x = x.astype(np.float32) / np.float32(127.5) - np.float32(1.0)
            source = f"{len(files)} images from {folder}"
        else:
            c = config
            data = build_data(c.data.dataset, c.data.args, c.data.batch_size, c.seed).dataset
            x = (data.test_a if direction == "AB" else data.test_b)[: args.n]
            source = f"{len(x)} test images of domain {direction[0]}"
        y = Sampler(nets[direction], chunk=_chunk(shape))(x)
        pairs = np.stack([x, y], axis=1).reshape(-1, *shape)  # input, translated, input, ...
        written = [str(save_grid(args.grid or f"translated_{direction}.png", pairs,
                                 2 * min(len(x), 8), scale=2 if shape[-1] < 64 else 1))]
        if args.out:
            Path(args.out).parent.mkdir(parents=True, exist_ok=True)
            np.save(args.out, y)
            written.append(args.out)
        if args.out_dir:
            save_images(args.out_dir, y, prefix=f"translated_{direction}")
            written.append(f"{args.out_dir}/")
        return (f"translated {source} ({direction[0]} -> {direction[1]}); wrote "
                f"{', '.join(written)}")
