"""What the GAN recipe's steps receive: named batches drawn on the host.

:class:`Draws` makes a :class:`DBatch` for each discriminator step (also for the lazy D
objective) and a :class:`GBatch` for each generator step, from the data stream and the run's
numpy Generator. The order and shapes of the draws are fixed, because a seeded run replays bit
for bit and a checkpoint of an older run must resume exactly: each D batch draws the real
batch, z, the fake labels, the WGAN-GP interpolation weights, then the DiffAugment parameters of
the real and of the fake batch; each G batch draws a real batch and its augmentation only for
a loss that reads real data (relativistic), then z, the fake labels and the fake augmentation.
Some draws are made even where nothing reads them (see the comments): skipping them would
shift every later draw.

A step gets exactly the fields its loss reads (:func:`phase_inputs`), as one
``ms.mutable`` dict of Tensors; the losses read ``batch["real"]``, ``batch.get("y_real")``.
Why not the NamedTuple itself, measured on MindSpore 2.10 (CPU, a Dense step with Adam, fresh
Tensors each call):

* a NamedTuple as a jit argument (directly, through ``*inputs`` and inside
  ``ms.value_and_grad(..., has_aux=True)``) works and ``b.real`` reads in graph mode, but it is
  compiled as a constant: ~580 ms per call (380-800) against ~1.7 ms for positional Tensors,
  and one aux value came out 1 ulp off the positional result (it was constant-folded);
* ``ms.mutable(named_tuple)`` compiles once but arrives as a plain tuple (``b.real`` raises
  "'Tuple' object has no attribute 'real'"); making each field ``ms.mutable`` still
  recompiles (~475 ms per call);
* building the NamedTuple inside the graph from positional Tensors breaks Cells called on its
  fields ("'int' object has no attribute '__len__'", "Type Join Failed"), and a ``jit_class``
  cannot be built in the graph from Tensors; a plain dict argument recompiles (~625 ms);
* ``ms.mutable(dict)`` compiles once, costs the same per call as positional Tensors (1.30 vs
  1.27 ms median over 500 calls with seven Tensors), gives bit-identical results, and in the
  graph ``"eps" in batch`` and ``batch.get("y_real")`` resolve at compile time.

Tuples of Tensors as jit inputs recompile on every call (docs/mindspore-notes.md, item 12).
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import NamedTuple

import mindspore as ms
import numpy as np
from mindspore import Tensor, ops
from mindspore import dtype as mstype

from ...blocks.augment import AugmentPolicy
from ...engine.context import StepContext


class DBatch(NamedTuple):
    """One discriminator step: a real batch, noise and labels for a fake batch, the WGAN-GP
    interpolation weights and the DiffAugment parameters of both batches."""

    real: Tensor
    y_real: Tensor | None  # int32 labels; None for an unconditional GAN
    z: Tensor
    y_fake: Tensor  # int32 labels (all 0 for an unconditional GAN)
    eps: Tensor  # U[0, 1) of shape (B, 1, ...), per sample
    aug_real: Tensor | None  # (P, B) from AugmentPolicy.draw; None without augmentation
    aug_fake: Tensor | None


class GBatch(NamedTuple):
    """One generator step: noise and labels for a fake batch, and a real batch only for a
    loss that compares fakes with real data (relativistic)."""

    z: Tensor
    y_fake: Tensor
    aug_fake: Tensor | None = None
    real: Tensor | None = None
    y_real: Tensor | None = None
    aug_real: Tensor | None = None


@dataclass(frozen=True)
class Draws:
    """The host side of a GAN's steps: pulls real batches and draws noise, labels,
    interpolation weights and augmentation parameters in the fixed order."""

    batch_size: int
    z_dim: int
    num_classes: int = 0
    augment: AugmentPolicy | None = None

    def real(self, ctx: StepContext) -> tuple[Tensor, Tensor | None]:
        """The next real batch and, for a conditional GAN, its int32 labels."""
        batch = ctx.batch()
        if not self.num_classes:
            return batch[0], None
        if len(batch) < 2:
            raise ValueError("a conditional GAN (num_classes > 0) needs a labelled dataset")
        return batch[0], ops.cast(batch[1], mstype.int32)

    def noise(self, ctx: StepContext) -> tuple[Tensor, Tensor]:
        """z and the labels of a fake batch."""
        z = ctx.normal(self.batch_size, self.z_dim)
        # drawn (all zeros) for an unconditional GAN too, which keeps the RNG stream of older runs
        y = ctx.integers(max(self.num_classes, 1), self.batch_size)
        return z, y

    def augmentation(self, ctx: StepContext) -> Tensor | None:
        if self.augment is None:
            return None
        return self.augment.draw(ctx.rng, self.batch_size)

    def d_batch(self, ctx: StepContext) -> DBatch:
        real, y_real = self.real(ctx)
        z, y_fake = self.noise(ctx)
        # drawn even when no penalty reads it (only WGAN-GP does): keeps the RNG stream
        eps_shape = (real.shape[0],) + (1,) * (real.ndim - 1)
        eps = Tensor(ctx.rng.random(eps_shape, dtype=np.float32))
        aug_real = self.augmentation(ctx)
        aug_fake = self.augmentation(ctx)
        return DBatch(real, y_real, z, y_fake, eps, aug_real, aug_fake)

    def g_batch(self, ctx: StepContext, with_real: bool = False) -> GBatch:
        real = y_real = aug_real = None
        if with_real:
            real, y_real = self.real(ctx)
            aug_real = self.augmentation(ctx)
        z, y_fake = self.noise(ctx)
        aug_fake = self.augmentation(ctx)
        return GBatch(z, y_fake, aug_fake, real, y_real, aug_real)

    def noise_batch(self, ctx: StepContext) -> GBatch:
        """Noise and labels only, for a generator penalty's own phase."""
        return GBatch(*self.noise(ctx))


def step_input(batch: tuple, reads: Collection[str],
               shard: slice | None = None) -> tuple[dict[str, Tensor]]:
    """The fields of ``batch`` (a NamedTuple) that a loss ``reads``, as the single argument of
    its jitted step: an ``ms.mutable`` dict (see the module docstring).

    ``shard`` is this rank's part of the global batch in a data-parallel run: every rank draws
    the same global batch from the same RNG and keeps only its slice of each field (the batch
    axis is 0, and 1 for the ``(P, B)`` augmentation parameters), so the RNG and loader state
    stay those of one process."""
    unknown = set(reads) - set(batch._fields)
    if unknown:
        raise ValueError(f"the loss reads {sorted(unknown)}, which a {type(batch).__name__} "
                         f"does not have (fields: {batch._fields})")
    fields = {}
    for name in batch._fields:
        if name in reads:
            value = getattr(batch, name)
            if value is None:
                raise ValueError(f"the loss reads {name!r}, which this "
                                 f"{type(batch).__name__} does not have")
            if shard is not None:
                value = value[:, shard] if name.startswith("aug_") else value[shard]
            fields[name] = value
    return (ms.mutable(fields),)


def phase_inputs(draw: Callable[[StepContext], tuple], reads: Collection[str],
                 shard: slice | None = None) -> Callable[[StepContext], tuple]:
    """A :class:`~gantrain.engine.schedule.Phase` input builder: ``draw`` a batch, pass on
    what the loss ``reads`` (this rank's ``shard`` of it in a data-parallel run)."""

    def inputs(ctx: StepContext) -> tuple[dict[str, Tensor]]:
        return step_input(draw(ctx), reads, shard)

    return inputs
