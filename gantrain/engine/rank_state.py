"""The only state that differs between data-parallel ranks: BatchNorm running statistics.

Weights, optimizer moments, EMA weights and spectral-norm vectors are updated from the mean
gradient (or from the weights) and stay identical on every rank by construction. BatchNorm's
running mean and variance are updated in the forward pass from each rank's own slice of the
batch, so they drift apart (SyncBatchNorm would avoid that, but it is Ascend-only). They never
reach a gradient (training mode normalises with the batch statistics), so averaging them over
the ranks whenever they are about to be used or stored (sampling, evaluation, checkpoints) is
enough; an EMA that also averages those buffers gets its copies averaged too.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from mindspore import Parameter, nn

from . import dist
from .ema import EMA
from .player import Player


def batchnorm_buffers(players: Sequence[Player]) -> list[Parameter]:
    """The running statistics of every BatchNorm layer in the players' nets, and the EMA copies
    of them, without duplicates."""
    found: dict[int, Parameter] = {}
    for player in players:
        for net in player.nets.values():
            for _, cell in net.cells_and_names():
                if isinstance(cell, nn.layer.normalization._BatchNorm):
                    for p in (cell.moving_mean, cell.moving_variance):
                        found.setdefault(id(p), p)
    for player in players:
        for post in player.post_update:
            if isinstance(post, EMA):
                for avg, p in zip(post.averages, post.params):
                    if id(p) in found:
                        found.setdefault(id(avg), avg)
    return list(found.values())


def synchronizer(players: Sequence[Player]) -> Callable[[], None]:
    """``sync()`` averages the per-rank buffers of ``players`` over all ranks (a no-op in one
    process or without BatchNorm). Every rank must call it at the same point."""
    return dist.averager(batchnorm_buffers(players))
