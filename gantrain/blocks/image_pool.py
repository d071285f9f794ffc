"""The history of generated images CycleGAN's discriminators learn from (Zhu et al. 2017,
Sec. 4, after Shrivastava et al. 2017): D sees a mix of the newest fakes and older ones, which
damps the oscillation between G and D.

The pool lives on the host in numpy and draws from the run's RNG (``ctx.rng``), whose state the
loop checkpoints; its contents are saved through :meth:`ImagePool.parameters` as one more file
in the checkpoint, so a resumed run continues exactly.
"""

from __future__ import annotations

import numpy as np
from mindspore import Parameter, Tensor
from mindspore import dtype as mstype


class ImagePool:
    """Up to ``size`` past images of shape ``shape``; ``size = 0`` passes images straight on.

    ``query(images, rng)`` follows the paper's code image by image: while the pool is not full
    each image is stored and returned; after that, with probability 1/2 a random stored image
    is returned and replaced by the new one, otherwise the new image is returned.
    """

    def __init__(self, size: int, shape: tuple[int, ...], name: str = "pool") -> None:
        if isinstance(size, bool) or not isinstance(size, int) or size < 0:
            raise ValueError(f"pool size must be an int >= 0, got {size!r}")
        self.size, self.shape, self.name = size, tuple(shape), name
        self.images = np.zeros((size, *self.shape), np.float32)
        self.count = 0
        self._params: list[Parameter] | None = None

    def query(self, images: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """The images D should judge in place of ``images`` (same shape, a new array)."""
        images = np.asarray(images, np.float32)
        if images.shape[1:] != self.shape:
            raise ValueError(f"{self.name}: images of shape {images.shape[1:]}, pool holds "
                             f"{self.shape}")
        if self.size == 0:
            return images.copy()
        out = np.empty_like(images)
        for i, image in enumerate(images):
            if self.count < self.size:
                self.images[self.count] = image
                self.count += 1
                out[i] = image
            elif rng.random() > 0.5:
                j = int(rng.integers(0, self.size))
                out[i] = self.images[j]
                self.images[j] = image
            else:
                out[i] = image
        return out

    # -- checkpointing ---------------------------------------------------------------------------

    def parameters(self) -> list[Parameter]:
        """Parameters mirroring the pool (refreshed by :meth:`sync_out`), saved as a checkpoint
        file and loaded in place on restore (then read back by :meth:`sync_in`)."""
        if self._params is None:
            shape = (max(self.size, 1), *self.shape)  # a 0-sized Parameter cannot be saved
            self._params = [
                Parameter(Tensor(np.zeros(shape, np.float32)), f"{self.name}.images",
                          requires_grad=False),
                Parameter(Tensor(0, mstype.int64), f"{self.name}.count", requires_grad=False),
            ]
        return self._params

    def sync_out(self) -> None:
        """Copy the host pool into its Parameters (before saving)."""
        images, count = self.parameters()
        if self.size:
            images.set_data(Tensor(self.images))
        count.set_data(Tensor(self.count, mstype.int64))

    def sync_in(self) -> None:
        """Read the pool back from its Parameters (after loading a checkpoint)."""
        images, count = self.parameters()
        if self.size:
            self.images = images.asnumpy().astype(np.float32).copy()
        self.count = int(count.asnumpy())
