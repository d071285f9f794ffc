"""The prepared-dataset format, and reading it through a memory map.

A prepared dataset is one folder::

    <name>/
        header.json   source, its fingerprint, cache key, size, channels, crop, count,
                      classes, skipped files, format and gantrain versions
        images.u8     count x height x width x channels uint8 pixels, row-major (NHWC)
        labels.npy    int32 labels, one per image (only for labelled sources)

``header.json`` is written last and the folder is renamed into place only when complete (see
:mod:`gantrain.data.prepare`), so a folder with a readable header of the current format is a
whole dataset. Reading maps ``images.u8`` and converts only the gathered rows to float32 in
[-1, 1], so resident anonymous memory stays the size of a batch whatever the dataset's size;
the mapped pages are file-backed page cache that the kernel can drop.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from .errors import DatasetError

FORMAT_VERSION = 1
HEADER, IMAGES, LABELS = "header.json", "images.u8", "labels.npy"
CACHE_ENV = "GANTRAIN_DATA_CACHE"


def cache_root(cache_dir: str | os.PathLike | None = None) -> Path:
    """Where prepared datasets live: ``cache_dir`` if given, else ``$GANTRAIN_DATA_CACHE``,
    else ``$XDG_CACHE_HOME/gantrain/data`` (``~/.cache/gantrain/data``)."""
    if cache_dir is not None:
        return Path(cache_dir).expanduser()
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base).expanduser() / "gantrain" / "data"


def resolve_prepared(name: str | os.PathLike, cache_dir: str | os.PathLike | None = None
                     ) -> Path:
    """A prepared folder by name under the cache root, or by path."""
    path = Path(name).expanduser()
    if path.is_dir():
        return path
    folder = cache_root(cache_dir) / str(name)
    if not folder.is_dir():
        raise DatasetError(f"no prepared dataset {str(name)!r} (looked in {folder}); make it "
                           f"with: gantrain data prepare SOURCE --size N --out {name}")
    return folder


def to_unit_float(pixels: np.ndarray) -> np.ndarray:
    """uint8 NHWC -> float32 NCHW in [-1, 1]; the same arithmetic as the in-memory readers."""
    x = pixels.transpose(0, 3, 1, 2).astype(np.float32)
    return x / np.float32(127.5) - np.float32(1.0)


def read_header(folder: str | os.PathLike) -> dict[str, Any]:
    """The header of a prepared dataset, checked for format version and file size."""
    folder = Path(folder)
    try:
        header = json.loads((folder / HEADER).read_text())
    except FileNotFoundError:
        raise DatasetError(f"{folder} is not a prepared dataset (no {HEADER}; an interrupted "
                           "build leaves none)") from None
    except (OSError, ValueError) as exc:
        raise DatasetError(f"{folder / HEADER}: unreadable: {exc}") from None
    version = header.get("format_version")
    if version != FORMAT_VERSION:
        raise DatasetError(
            f"{folder}: prepared with format version {version} (gantrain "
            f"{header.get('gantrain_version', '?')}); this gantrain reads version "
            f"{FORMAT_VERSION}. Prepare it again: gantrain data prepare "
            f"{header.get('source', '<source>')} --size {header.get('size', ['?'])[0]} "
            f"--out {folder.name}")
    expected = header["count"] * int(np.prod(header["size"])) * header["channels"]
    actual = (folder / IMAGES).stat().st_size if (folder / IMAGES).exists() else -1
    if actual != expected:
        raise DatasetError(f"{folder / IMAGES}: {actual} bytes, the header promises "
                           f"{expected}; prepare the dataset again")
    return header


class PreparedImages:
    """A prepared dataset read through a memory map.

    ``gather(indices)`` returns float32 NCHW images in [-1, 1] for those rows only; ``x`` is a
    view that does the same for ``x[i]``, ``x[a:b]`` or ``x[index_array]``, so code written
    for an in-memory ``ArrayDataset`` reads a few real samples without loading them all.
    ``y`` (int32 labels or None) is small and held in memory.
    """

    def __init__(self, folder: str | os.PathLike) -> None:
        self.folder = Path(folder)
        self.header = read_header(self.folder)
        h, w = self.header["size"]
        c = self.header["channels"]
        self.pixels = np.memmap(self.folder / IMAGES, np.uint8, "r",
                                shape=(self.header["count"], h, w, c))
        labels = self.folder / LABELS
        self.y = np.load(labels, allow_pickle=False) if labels.exists() else None
        self.classes: list[str] = list(self.header.get("classes", []))
        self.num_classes = len(self.classes) if self.y is not None else 0
        self.name = self.header.get("name", self.folder.name)
        self.x = _ImageView(self)

    def __len__(self) -> int:
        return len(self.pixels)

    @property
    def sample_shape(self) -> tuple[int, ...]:
        h, w = self.header["size"]
        return (self.header["channels"], h, w)

    @property
    def nbytes(self) -> int:
        return self.pixels.size

    def gather(self, indices: np.ndarray) -> np.ndarray:
        """Rows ``indices`` as float32 (len, C, H, W) in [-1, 1]; ascending indices read the
        file in order."""
        return to_unit_float(self.pixels[np.asarray(indices, dtype=np.int64)])


class _ImageView:
    """``dataset.x`` for a memory-mapped dataset: indexing gathers and converts rows."""

    def __init__(self, data: PreparedImages) -> None:
        self._data = data
        self.dtype = np.dtype(np.float32)

    @property
    def shape(self) -> tuple[int, ...]:
        return (len(self._data), *self._data.sample_shape)

    def __len__(self) -> int:
        return len(self._data)

    def __getitem__(self, key: Any) -> np.ndarray:
        if isinstance(key, (int, np.integer)):
            return self._data.gather(np.array([key]))[0]
        return self._data.gather(np.arange(len(self._data))[key])
