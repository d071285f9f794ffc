"""Composable gradient transforms, compiled into a player's jitted step.

Each transform is a small ``nn.Cell`` in the spirit of optax: ``init(params, prefix)`` creates any
state it needs as ``ms.Parameter``s (so the compiled step sees updates made with ``ops.assign``,
and checkpoints can store them), and calling it maps ``(grads, loss) -> grads`` inside the graph.
:class:`Chain` applies several in order.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from mindspore import Parameter, Tensor, nn, ops
from mindspore import dtype as mstype


class GradientTransform(nn.Cell):
    """Base class: a pure map of the gradient tuple unless a subclass keeps state."""

    def init(self, params: Sequence[Parameter], prefix: str) -> None:
        """Create state for ``params``; ``prefix`` makes state names unique per player."""

    def state(self) -> list[Parameter]:
        """State that a checkpoint must store to resume exactly."""
        return []

    def construct(self, grads, loss):
        return grads


def global_norm(grads) -> Tensor:
    """sqrt of the sum of squares of every element of every gradient."""
    total = ops.zeros((), mstype.float32)
    for g in grads:
        total = total + ops.reduce_sum(ops.square(ops.cast(g, mstype.float32)))
    return ops.sqrt(total)


class ClipByGlobalNorm(GradientTransform):
    """Rescale all gradients together so their global L2 norm is at most ``max_norm``
    (Pascanu et al. 2013)."""

    def __init__(self, max_norm: float) -> None:
        super().__init__()
        if max_norm <= 0:
            raise ValueError(f"ClipByGlobalNorm: max_norm must be > 0, got {max_norm}")
        self.max_norm = float(max_norm)

    def construct(self, grads, loss):
        norm = global_norm(grads)
        factor = self.max_norm / ops.maximum(norm, self.max_norm)
        return tuple(g * ops.cast(factor, g.dtype) for g in grads)


class ClipByValue(GradientTransform):
    """Clamp every gradient element to ``[-limit, limit]``."""

    def __init__(self, limit: float) -> None:
        super().__init__()
        if limit <= 0:
            raise ValueError(f"ClipByValue: limit must be > 0, got {limit}")
        self.limit = float(limit)

    def construct(self, grads, loss):
        return tuple(ops.clamp(g, -self.limit, self.limit) for g in grads)


class Scale(GradientTransform):
    """Multiply every gradient by a constant ``factor``."""

    def __init__(self, factor: float) -> None:
        super().__init__()
        self.factor = float(factor)

    def construct(self, grads, loss):
        return tuple(g * self.factor for g in grads)


def _hash_uniform(index: Tensor, counter: Tensor) -> Tensor:
    """Counter-based uniform (0, 1) noise: a PCG-style integer hash of (element index, counter).

    MindSpore's in-graph random ops keep state that cannot be saved and restored, which would break
    exact resume; a hash of a counter stored in a Parameter is reproducible by construction.
    Values stay below 2**31 between rounds, so no int64 product overflows.
    """
    x = (index * 747796405 + counter * 289133645 + 12345) % 2147483648
    for _ in range(3):
        x = (x * 1103515245 + 12345) % 2147483648
        x = ops.bitwise_xor(x, x // 8192)  # x ^ (x >> 13); x >= 0
    return (ops.cast(x % 16777216, mstype.float32) + 0.5) / 16777216.0


class GaussianNoise(GradientTransform):
    """Add N(0, sigma_t^2) noise with sigma_t^2 = eta / (1 + t)^gamma, t = number of calls
    (Neelakantan et al. 2015, "Adding Gradient Noise Improves Learning for Very Deep Networks").
    """

    def __init__(self, eta: float = 0.01, gamma: float = 0.55, seed: int = 0) -> None:
        super().__init__()
        if eta < 0:
            raise ValueError(f"GaussianNoise: eta must be >= 0, got {eta}")
        self.eta, self.gamma, self.seed = float(eta), float(gamma), int(seed)
        self.offsets: tuple[int, ...] = ()

    def init(self, params: Sequence[Parameter], prefix: str) -> None:
        sizes = [int(np.prod(p.shape)) for p in params]
        self.offsets = tuple(int(o) for o in np.cumsum([0, *sizes[:-1]]))
        self.t = Parameter(Tensor(0, mstype.int64), name=f"{prefix}.noise_t", requires_grad=False)

    def state(self) -> list[Parameter]:
        return [self.t]

    def construct(self, grads, loss):
        t = self.t
        sigma = ops.sqrt(self.eta / ops.pow(1.0 + ops.cast(t, mstype.float32), self.gamma))
        counter = t + self.seed * 1000003
        out = ()
        for g, offset in zip(grads, self.offsets):
            n = g.size
            idx = ops.arange(0, n, dtype=mstype.int64) * 2 + offset * 2
            u1 = _hash_uniform(idx, counter)
            u2 = _hash_uniform(idx + 1, counter)
            normal = ops.sqrt(-2.0 * ops.log(u1)) * ops.cos(2.0 * math.pi * u2)
            out = out + (g + ops.cast(ops.reshape(normal, g.shape) * sigma, g.dtype),)
        ops.assign_add(self.t, Tensor(1, mstype.int64))
        return out


class Chain(GradientTransform):
    """Apply transforms in order: ``Chain(ClipByGlobalNorm(1.0), GaussianNoise())``."""

    def __init__(self, *transforms: GradientTransform) -> None:
        super().__init__()
        for t in transforms:
            if not isinstance(t, GradientTransform):
                raise TypeError(f"Chain takes GradientTransform objects, got {type(t).__name__}")
        self.transforms = nn.CellList(list(transforms))

    def init(self, params: Sequence[Parameter], prefix: str) -> None:
        for i, t in enumerate(self.transforms):
            t.init(params, f"{prefix}.t{i}")

    def state(self) -> list[Parameter]:
        return [p for t in self.transforms for p in t.state()]

    def construct(self, grads, loss):
        for t in self.transforms:
            grads = t(grads, loss)
        return grads
