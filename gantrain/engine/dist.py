"""Data parallelism on MindSpore's own collective engine: who this process is in the job, and
the three collectives a data-parallel run needs (gradient mean, buffer mean, barrier).

A job is started by ``msrun`` (or the dynamic-cluster environment it wraps), which exports
``MS_ROLE``, ``MS_WORKER_NUM`` and the scheduler's address to every process. :func:`init` must
run before anything else touches a file: msrun also starts a scheduler process that runs the
program up to ``init()``, which never returns there (docs/mindspore-notes.md, "Data parallel").

Everything is inside jitted graphs: on CPU, ``ops.AllReduce`` and ``nn.DistributedGradReducer``
work under ``@ms.jit`` while ``mint.distributed.all_reduce`` does not (it runs only in PyNative).
In one process nothing here adds an operator to any graph.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

ROLE_VARIABLE = "MS_ROLE"  # set by msrun for its scheduler (MS_SCHED) and workers (MS_WORKER)


@dataclass(frozen=True)
class World:
    """This process's place in the job: ``rank`` of ``size`` data-parallel workers."""

    rank: int = 0
    size: int = 1

    @property
    def is_main(self) -> bool:
        """The rank that writes the run folder (rank 0)."""
        return self.rank == 0

    def shard(self, n: int) -> slice:
        """This rank's contiguous share of ``n`` items (``n`` divisible by ``size``)."""
        if n % self.size:
            raise ValueError(f"{n} items cannot be split evenly over {self.size} workers")
        per = n // self.size
        return slice(self.rank * per, (self.rank + 1) * per)


_world = World()


def in_cluster() -> bool:
    """True in a process started by msrun (or a hand-made dynamic-cluster environment)."""
    return os.environ.get(ROLE_VARIABLE) in ("MS_WORKER", "MS_SCHED")


def init() -> World:
    """Join the job (``mindspore.communication.init()``) and record rank and size.

    Call before building any network or writing any file. Idempotent."""
    global _world
    if _world.size > 1:
        return _world
    from mindspore.communication import get_group_size, get_rank
    from mindspore.communication import init as ms_init

    ms_init()
    _world = World(get_rank(), get_group_size())
    return _world


def world() -> World:
    """The current process's :class:`World` (rank 0 of 1 unless :func:`init` ran)."""
    return _world


def reduce_gradients(grad_fn: Callable[..., Any], params: Sequence[Any]) -> Callable[..., Any]:
    """Wrap ``grad_fn`` (``ms.value_and_grad(..., has_aux=True)``) so that it returns the mean
    loss and the mean gradients over all ranks; returns ``grad_fn`` itself in one process.

    Called inside a jitted step, so the mean is part of the compiled graph, and everything
    after it (clipping, noise, the non-finite check, accumulation, the update) sees the same
    global values on every rank. ``mean=True`` matters: without it the reducer sums, which Adam
    nearly hides and SGD does not.
    """
    size = _world.size
    if size == 1:
        return grad_fn
    from mindspore import nn, ops

    reducer = nn.DistributedGradReducer(params, mean=True, degree=size)
    allreduce = ops.AllReduce()
    scale = 1.0 / size

    def reduced(*inputs):
        (loss, aux), grads = grad_fn(*inputs)
        return (allreduce(loss) * scale, aux), reducer(grads)

    return reduced


def averager(params: Sequence[Any]) -> Callable[[], None]:
    """A function that replaces each Parameter in ``params`` by its mean over all ranks, in
    place (a jitted graph, compiled on first call); does nothing in one process."""
    params = list(params)
    if _world.size == 1 or not params:
        return lambda: None
    import mindspore as ms
    from mindspore import ops

    allreduce, scale = ops.AllReduce(), 1.0 / _world.size

    @ms.jit
    def average():
        token = ops.zeros((), ms.float32)
        for p in params:
            token = ops.depend(token, ops.assign(p, allreduce(p) * scale))
        return token

    def run() -> None:
        average()

    return run


def barrier() -> None:
    """Wait until every rank got here; no-op in one process."""
    any_rank(False)


_any_fn: Callable[[Any], Any] | None = None


def any_rank(flag: bool) -> bool:
    """True on every rank when ``flag`` is True on at least one (a one-number all-reduce); the
    flag itself in one process. Doubles as a barrier."""
    global _any_fn
    if _world.size == 1:
        return flag
    import mindspore as ms
    from mindspore import Tensor, ops

    if _any_fn is None:
        allreduce = ops.AllReduce()

        @ms.jit
        def total(x):
            return allreduce(x)

        _any_fn = total
    return float(_any_fn(Tensor(float(flag), ms.float32)).asnumpy()) > 0
