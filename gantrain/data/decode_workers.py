"""The decoding side of a prepared-dataset build: worker processes that each take a chunk of
item numbers, decode those images into one buffer, write it at its offset of the pixel file
with ``pwrite`` (a full disk is then an ``OSError``, where a write through a memory map would
be a SIGBUS) and sync it before reporting the chunk done.

Workers are forked where the platform allows it: a spawned worker would re-import the
caller's main module, which fails for code read from stdin or a notebook and re-runs
unguarded scripts. The children touch only Pillow, numpy and their own file descriptor,
never MindSpore. A worker that dies (out of memory, killed) surfaces as ``BrokenProcessPool``
instead of a hang.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .errors import DatasetError
from .sources import ImageSource

CHUNK = 256  # images per task: small enough to lose little on a kill, large enough to batch


@dataclass(frozen=True)
class Target:
    """What every image becomes: (height, width), channels, optional centre crop, and
    whether unreadable files are skipped (else the build stops at the first)."""

    size: tuple[int, int]
    channels: int = 3
    crop: tuple[int, int] | None = None
    skip_bad: bool = False

    @property
    def row_bytes(self) -> int:
        return self.size[0] * self.size[1] * self.channels


def chunk_count(count: int) -> int:
    return (count + CHUNK - 1) // CHUNK


def chunk_len(chunk: int, count: int) -> int:
    return min(CHUNK, count - chunk * CHUNK)


@contextmanager
def decoded_chunks(source: ImageSource, target: Target, images: Path, todo: list[int], workers: int
                   ) -> Iterator[Iterable[tuple[int, list]]]:
    """Decode and write the chunks ``todo``; yields the ``(chunk, skipped)`` results as each
    lands. Leaving the block (normally, on Ctrl-C or on an error) stops the workers."""
    if workers <= 1 or len(todo) <= 1:
        _init_worker(source, target, images)
        try:
            yield map(_do_chunk, todo)
        finally:
            _close_worker()
        return
    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    pool = ProcessPoolExecutor(min(workers, len(todo)), multiprocessing.get_context(method),
                               _init_worker, (source, target, images))
    try:
        futures = [pool.submit(_do_chunk, chunk) for chunk in todo]
        yield (future.result() for future in as_completed(futures))
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


_WORKER: dict[str, Any] = {}


def _init_worker(source: ImageSource, target: Target, images: Path) -> None:
    _WORKER.update(source=source, target=target, fd=os.open(images, os.O_WRONLY))


def _close_worker() -> None:
    os.close(_WORKER.pop("fd"))


def _do_chunk(chunk: int) -> tuple[int, list]:
    """Decode one chunk into a buffer, write it at its offset and sync it."""
    source, target, fd = _WORKER["source"], _WORKER["target"], _WORKER["fd"]
    start = chunk * CHUNK
    stop = min(start + CHUNK, len(source.names))
    h, w = target.size
    rows = np.zeros((stop - start, h, w, target.channels), np.uint8)
    skipped = []
    for i in range(start, stop):
        try:
            rows[i - start] = source.decode(i, target.size, target.channels,
                                            target.crop).reshape(h, w, target.channels)
        except DatasetError as exc:
            if not target.skip_bad:
                raise
            skipped.append((i, str(exc)))
    write_rows(fd, rows.tobytes(), start * target.row_bytes)
    return chunk, skipped


def write_rows(fd: int, data: bytes, offset: int) -> None:
    """Write ``data`` at ``offset`` of the pixel file and sync it to disk."""
    view = memoryview(data)
    while view:
        written = os.pwrite(fd, view, offset)
        view, offset = view[written:], offset + written
    os.fdatasync(fd)
