"""What a phase's input builder sees: the data stream, the host RNG and the iteration."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any, Protocol

import numpy as np
from mindspore import Tensor


class BatchSource(Protocol):
    """An endless stream of batches whose position can be saved and restored exactly."""

    def next_batch(self) -> tuple[np.ndarray, ...]: ...

    def state_dict(self) -> dict[str, Any]: ...

    def load_state_dict(self, state: dict[str, Any]) -> None: ...


class StepContext:
    """Host-side inputs for the steps of one iteration.

    ``outputs`` holds the step outputs of the phases that already ran in this iteration (by
    phase name); ``shared`` caches a value for every phase of the iteration. Both start empty
    whenever :attr:`iteration` changes.

    All randomness used by steps (noise vectors, interpolation weights, augmentation draws) is
    drawn here from one numpy Generator and passed in as Tensors: MindSpore's in-graph random
    state cannot be saved, and a numpy Generator's can, which makes resumed runs exact.
    """

    def __init__(self, data: BatchSource, rng: np.random.Generator) -> None:
        self.data = data
        self.rng = rng
        self._shared: dict[Hashable, Any] = {}
        self.outputs: dict[str, Any] = {}
        self.iteration = 0

    @property
    def iteration(self) -> int:
        """The iteration being run (completed iterations, as counted by the loop)."""
        return self._iteration

    @iteration.setter
    def iteration(self, value: int) -> None:
        # Setting it (the loop's increment, a resume or a rollback) empties the shared cache,
        # even when a rollback lands on the number of the iteration the cache was filled in.
        self._iteration = value
        self._shared.clear()
        self.outputs = {}  # a new dict: the loop keeps the finished iteration's outputs

    def batch(self) -> tuple[Tensor, ...]:
        """The next batch from the data stream, as Tensors."""
        return tuple(Tensor(a) for a in self.data.next_batch())

    def normal(self, *shape: int) -> Tensor:
        """Standard normal float32 noise of ``shape`` from the run's RNG."""
        return Tensor(self.rng.standard_normal(shape, dtype=np.float32))

    def uniform(self, *shape: int) -> Tensor:
        """Uniform [0, 1) float32 noise of ``shape`` from the run's RNG."""
        return Tensor(self.rng.random(shape, dtype=np.float32))

    def integers(self, high: int, *shape: int) -> Tensor:
        """Uniform int32 in [0, high) of ``shape`` (e.g. class labels for a conditional G)."""
        return Tensor(self.rng.integers(0, high, size=shape, dtype=np.int32))

    def shared(self, key: Hashable, make: Callable[[StepContext], Any]) -> Any:
        """``make(self)``, computed once per iteration and shared by every phase that asks for
        ``key`` in that iteration.

        Phases that must see the same data (an actor and a critic trained on one rollout)
        call ``ctx.shared("rollout", StepContext.batch)`` instead of ``ctx.batch()``; the first
        caller pulls the batch, the others get the cached value. Any change of
        :attr:`iteration` (the next iteration, a resume, a rollback) empties the cache.
        """
        if key not in self._shared:
            self._shared[key] = make(self)
        return self._shared[key]
