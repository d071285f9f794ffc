"""Batched FID-Inception feature extraction: images -> pool3 features (N, 2048) and logits.

One compiled graph per input size runs preprocessing (scale, bilinear resize as two matrix
products, [-1, 1]) and the network on fixed-size batches (the last one zero-padded), so it
compiles once. A tqdm bar shows images/s.
"""

from __future__ import annotations

import mindspore as ms
import numpy as np
from mindspore import Tensor, ops
from tqdm import tqdm

from ...models.inception import FIDInceptionV3
from .preprocess import DEFAULT_RESIZE, SIZE, bilinear_matrix, check_resize, pil_bicubic, quantize


class InceptionExtractor:
    """``extractor(images) -> (pool3 (N, 2048), logits (N, 1008))`` as float64 arrays.

    ``images``: (N, C, H, W), C in {1, 3}, gantrain's [-1, 1] floats or uint8.
    ``resize``: see gantrain.metrics.inception.preprocess. ``batch``: images per call.
    """

    def __init__(self, net: FIDInceptionV3, resize: str = DEFAULT_RESIZE, batch: int = 50,
                 progress: bool = True) -> None:
        if batch < 1:
            raise ValueError(f"batch must be >= 1, got {batch}")
        self.net, self.resize = net, check_resize(resize)
        self.batch, self.progress = batch, progress
        net.set_train(False)

        @ms.jit
        def run(x, rows, cols):
            # x: (B, 3, H, W) in [0, 255]; rows (299, H), cols (W, 299): resize = rows @ x @ cols
            x = ops.matmul(ops.matmul(rows, x / 255.0), cols)
            return net(x * 2.0 - 1.0)

        self._run = run

    @property
    def fc_weight(self) -> np.ndarray:
        """(1008, 2048) logit weights: IS uses pool3 @ W^T without the bias (see score.py)."""
        return self.net.fc.weight.asnumpy().astype(np.float64)

    def _prepare(self, chunk: np.ndarray) -> np.ndarray:
        x = quantize(chunk)
        if self.resize == "pil-bicubic" and x.shape[2:] != (SIZE, SIZE):
            return pil_bicubic(x)
        return x.astype(np.float32)

    def progress_bar(self, total: int, desc: str) -> tqdm:
        """A bar in images (tqdm shows images/s) to pass to several calls."""
        return tqdm(total=total, desc=desc, unit="img", disable=not self.progress, leave=False)

    def __call__(self, images: np.ndarray, desc: str = "inception",
                 bar: tqdm | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Features of ``images``; progress goes to ``bar`` when given (left open)."""
        n = len(images)
        feats = np.empty((n, 2048))
        logits = np.empty((n, 1008))
        rows = cols = None
        own = bar is None
        bar = self.progress_bar(n, desc) if own else bar
        for start in range(0, n, self.batch):
            x = self._prepare(images[start:start + self.batch])
            if rows is None:  # identity when already 299 (and after pil-bicubic)
                rows = Tensor(bilinear_matrix(x.shape[2]))
                cols = Tensor(bilinear_matrix(x.shape[3]).T.copy())
            m = len(x)
            if m < self.batch:
                x = np.concatenate([x, np.zeros((self.batch - m, *x.shape[1:]), np.float32)])
            f, z = self._run(Tensor(x), rows, cols)
            feats[start:start + m] = f.asnumpy()[:m]
            logits[start:start + m] = z.asnumpy()[:m]
            bar.update(m)
        if own:
            bar.close()
        return feats, logits
