"""Drawing samples from a generator through its own eval-mode compiled graph.

A compiled graph keeps the train/eval mode it was compiled in (docs/mindspore-notes.md,
item 10), so the sampler compiles its own graph with the generator in eval mode (BatchNorm uses
running statistics) and puts the generator's mode back afterwards.
"""

from __future__ import annotations

import numpy as np
from mindspore import Tensor, nn

from . import runtime


class Sampler:
    """``sampler(z, y)`` -> numpy samples; runs in fixed-size chunks so it compiles once."""

    def __init__(self, generator: nn.Cell, conditional: bool = False, chunk: int = 500) -> None:
        self.generator, self.conditional, self.chunk = generator, conditional, chunk
        self._fn = None

    def _compile(self):
        G = self.generator
        if self.conditional:

            @runtime.jit
            def sample(z, y):
                return G(z, y)

        else:

            @runtime.jit
            def sample(z, y):
                return G(z)

        return sample

    def __call__(self, z: np.ndarray, y: np.ndarray | None = None) -> np.ndarray:
        n = len(z)
        if y is None:
            y = np.zeros(n, np.int32)
        if self._fn is None:
            self._fn = self._compile()
        out = []
        was_training = self.generator.training
        self.generator.set_train(False)
        try:
            for start in range(0, n, self.chunk):
                zc, yc = _pad(z[start : start + self.chunk], self.chunk), _pad(
                    y[start : start + self.chunk], self.chunk
                )
                res = self._fn(Tensor(zc.astype(np.float32)), Tensor(yc.astype(np.int32)))
                out.append(res.asnumpy()[: min(self.chunk, n - start)])
        finally:
            self.generator.set_train(was_training)
        return np.concatenate(out, axis=0)


def _pad(a: np.ndarray, size: int) -> np.ndarray:
    if len(a) == size:
        return a
    pad = np.zeros((size - len(a),) + a.shape[1:], a.dtype)
    return np.concatenate([a, pad], axis=0)
