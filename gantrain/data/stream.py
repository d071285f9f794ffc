"""A user's own batch pipeline as a batch source: a ``mindspore.dataset`` pipeline or any
Python iterable of batches.

Each batch is a numpy array (the images) or a tuple/list/dict of arrays (images first, then
labels); MindSpore Tensors are converted to numpy. When the iterable ends, it is iterated
again from the start (a new epoch), so training never runs dry; an iterable that can be
iterated only once (a generator) raises a clear error at its end instead.

Not exactly resumable: the pipeline's own position and random state are outside gantrain, so
a resumed run restarts the stream from its beginning (with a warning) and sees different
batches than an uninterrupted run would. Use a prepared dataset for exact resume.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

from .errors import DatasetError


class IterableSource:
    """Batches from ``iterable`` (or a ``mindspore.dataset.Dataset``), cycled every epoch."""

    exact_resume = False

    def __init__(self, iterable: Iterable[Any], name: str = "iterable") -> None:
        self.iterable, self.name = iterable, name
        self.epoch, self.batches = 0, 0
        self._iter: Iterator[Any] | None = None
        self._first: tuple[np.ndarray, ...] | None = self._pull()  # handed out first
        self._peeked = self._first
        self.sample_shape = tuple(self._first[0].shape[1:])
        self.labelled = len(self._first) > 1

    def peek(self) -> tuple[np.ndarray, ...]:
        """The first batch, without consuming it."""
        return self._peeked

    def _new_iterator(self) -> Iterator[Any]:
        if hasattr(self.iterable, "create_tuple_iterator"):  # a mindspore.dataset pipeline
            return self.iterable.create_tuple_iterator(output_numpy=True, num_epochs=1)
        return iter(self.iterable)

    def _pull(self) -> tuple[np.ndarray, ...]:
        if self._iter is None:
            self._iter = self._new_iterator()
        try:
            batch = next(self._iter)
        except StopIteration:
            self._iter, self.epoch = self._new_iterator(), self.epoch + 1
            try:
                batch = next(self._iter)
            except StopIteration:
                raise DatasetError(
                    f"batch source {self.name!r} gave no batches"
                    + (" after its first pass (a generator can be iterated only once; pass "
                       "a list, a re-iterable object or a mindspore.dataset pipeline)"
                       if self.batches else "")) from None
        return _as_arrays(batch, self.name)

    def next_batch(self) -> tuple[np.ndarray, ...]:
        if self._first is not None:
            batch, self._first = self._first, None
        else:
            batch = self._pull()
        self.batches += 1
        return batch

    def state_dict(self) -> dict[str, Any]:
        return {"epoch": self.epoch, "batches": self.batches, "exact": False}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        warnings.warn(
            f"batch source {self.name!r} (a user pipeline) is not exactly resumable: it "
            f"restarts from its first batch instead of batch {state.get('batches')}, so the "
            "resumed run sees different data than an uninterrupted one", stacklevel=2)
        self.epoch, self.batches = int(state.get("epoch", 0)), int(state.get("batches", 0))


def _as_arrays(batch: Any, name: str) -> tuple[np.ndarray, ...]:
    """A batch as a tuple of numpy arrays: images float32, labels int32."""
    if isinstance(batch, dict):
        batch = tuple(batch.values())
    elif not isinstance(batch, (tuple, list)):
        batch = (batch,)
    arrays = tuple(np.asarray(b.asnumpy() if hasattr(b, "asnumpy") else b) for b in batch)
    if not arrays or arrays[0].ndim < 2:
        shapes = [a.shape for a in arrays]
        raise DatasetError(f"batch source {name!r}: a batch must start with an array of "
                           f"shape (batch, ...), got {shapes}")
    x = arrays[0].astype(np.float32, copy=False)
    rest = tuple(a.astype(np.int32, copy=False) for a in arrays[1:2])
    return (x, *rest)
