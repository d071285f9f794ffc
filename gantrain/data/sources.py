"""Where prepared images come from: an image folder or a ZIP archive, listed once, decoded
one item at a time.

A source is a list of item names in a stable order, their labels (or none), a fingerprint of
the listing (names, sizes, modification times or CRCs) that changes whenever an item is
added, removed or rewritten, and ``decode(i)``: item ``i`` as uint8 pixels. Sources are
picklable, so worker processes receive one and open their own file handles.

ZIP archives follow the layout of StyleGAN's ``dataset_tool.py`` (Karras et al. 2020): image
members anywhere in the archive, and optionally a ``dataset.json`` holding
``{"labels": [["00000/img00000000.png", 6], ...]}`` (or ``"labels": null``).
"""

from __future__ import annotations

import hashlib
import json
import os
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Protocol

import numpy as np

from .errors import DatasetError
from .folder import IMAGE_SUFFIXES, find_images, load_image

LABELS_FILE = "dataset.json"


class ImageSource(Protocol):
    """What a prepared-dataset build needs from a source."""

    kind: str
    root: Path
    names: list[str]
    labels: np.ndarray | None
    classes: list[str]

    def fingerprint(self) -> str: ...

    def decode(self, i: int, size: tuple[int, int], channels: int,
               crop: tuple[int, int] | None) -> np.ndarray: ...


class FolderSource:
    """Every image under ``root`` (recursive, sorted), labelled by class subfolder if any."""

    kind = "folder"

    def __init__(self, root: str | os.PathLike, labelled: bool | None = None) -> None:
        self.root = Path(root).expanduser().resolve()
        if not self.root.is_dir():
            find_images(self.root)  # raises the folder reader's message: missing, not a folder
        digest = hashlib.sha256()
        self.names = []
        for name, size, mtime in _scan(str(self.root), ""):
            self.names.append(name)
            digest.update(f"{name}\0{size}\0{mtime}\n".encode())
        if not self.names:
            find_images(self.root)  # raises: no images
        self._fingerprint = digest.hexdigest()
        self.classes, self.labels = _labels(self.root, self.names, labelled)

    def fingerprint(self) -> str:
        """Hash of every item's relative name, byte size and modification time (ns), as
        listed when the source was opened."""
        return self._fingerprint

    def decode(self, i: int, size: tuple[int, int], channels: int,
               crop: tuple[int, int] | None) -> np.ndarray:
        return load_image(self.root / self.names[i], size, channels, crop)


def _scan(folder: str, prefix: str) -> Iterator[tuple[str, int, int]]:
    """``(relative name, size, mtime_ns)`` of the images under ``folder`` in the order of
    ``find_images`` (a folder's files by name, then its subfolders by name; hidden entries and
    symlinked folders skipped, as ``os.walk`` does), with plain strings and ``os.scandir``:
    ``pathlib`` per file costs seconds on a 200k-image folder."""
    with os.scandir(folder) as it:
        entries = sorted((e for e in it if not e.name.startswith(".")), key=lambda e: e.name)
    for entry in entries:
        if not entry.is_dir() and entry.name.lower().endswith(IMAGE_SUFFIXES):
            stat = entry.stat()
            yield prefix + entry.name, stat.st_size, stat.st_mtime_ns
    for entry in entries:
        if entry.is_dir() and not entry.is_symlink():
            yield from _scan(entry.path, prefix + entry.name + "/")


def _labels(root: Path, names: list[str], labelled: bool | None
            ) -> tuple[list[str], np.ndarray | None]:
    """Class names and labels from first-level subfolders: the rule of the folder reader."""
    tops = [name.split("/", 1)[0] if "/" in name else None for name in names]
    loose = [n for n, top in zip(names, tops) if top is None]
    if labelled is None:
        labelled = not loose and len(set(tops)) > 1
    if not labelled:
        return [], None
    if loose:
        raise DatasetError(
            f"image folder {root}: labelled=True needs every image inside a class subfolder, "
            f"but {len(loose)} sit directly in {root} (first: {loose[0]})")
    classes = sorted(set(tops))
    number = {c: i for i, c in enumerate(classes)}
    return classes, np.array([number[t] for t in tops], dtype=np.int32)


class ZipSource:
    """The images inside a ZIP archive (sorted by member name), labels from ``dataset.json``."""

    kind = "zip"

    def __init__(self, path: str | os.PathLike) -> None:
        self.root = Path(path).expanduser().resolve()
        self._zip: zipfile.ZipFile | None = None
        try:
            with zipfile.ZipFile(self.root) as archive:
                infos = {i.filename: i for i in archive.infolist() if not i.is_dir()}
                meta = archive.read(LABELS_FILE) if LABELS_FILE in infos else None
        except FileNotFoundError:
            raise DatasetError(f"ZIP archive {self.root} does not exist") from None
        except (OSError, zipfile.BadZipFile) as exc:
            raise DatasetError(f"{self.root}: not a readable ZIP archive: {exc}") from exc
        self.names = sorted(n for n in infos if n.lower().endswith(IMAGE_SUFFIXES)
                            and not Path(n).name.startswith("."))
        if not self.names:
            raise DatasetError(f"ZIP archive {self.root} contains no images "
                               f"({', '.join(IMAGE_SUFFIXES)})")
        self._crcs = [(n, infos[n].CRC, infos[n].file_size) for n in self.names]
        self.labels = None if meta is None else self._read_labels(meta)
        self.classes = [] if self.labels is None else [
            str(c) for c in range(int(self.labels.max()) + 1)]

    def _read_labels(self, meta: bytes) -> np.ndarray | None:
        where = f"{self.root}[{LABELS_FILE}]"
        try:
            labels = json.loads(meta).get("labels")
        except (ValueError, AttributeError) as exc:
            raise DatasetError(f"{where}: not a JSON object with 'labels': {exc}") from None
        if labels is None:
            return None
        table = dict(labels)
        missing = [n for n in self.names if n not in table]
        if missing:
            raise DatasetError(f"{where}: no label for {len(missing)} image(s), first "
                               f"{missing[0]!r}")
        values = [table[n] for n in self.names]
        if not all(isinstance(v, int) and v >= 0 for v in values):
            bad = next(v for v in values if not (isinstance(v, int) and v >= 0))
            raise DatasetError(f"{where}: labels must be non-negative class integers, got "
                               f"{bad!r}")
        return np.asarray(values, dtype=np.int32)

    def fingerprint(self) -> str:
        """Hash of every image member's name, CRC-32 and size."""
        digest = hashlib.sha256()
        for name, crc, size in self._crcs:
            digest.update(f"{name}\0{crc}\0{size}\n".encode())
        return digest.hexdigest()

    def decode(self, i: int, size: tuple[int, int], channels: int,
               crop: tuple[int, int] | None) -> np.ndarray:
        if self._zip is None:  # opened lazily, once per process
            self._zip = zipfile.ZipFile(self.root)
        name = self.names[i]
        try:
            member = self._zip.open(name)
        except (OSError, zipfile.BadZipFile) as exc:  # e.g. a bad CRC
            raise DatasetError(f"{self.root}[{name}]: unreadable member: {exc}") from exc
        with member:
            return load_image(member, size, channels, crop, name=f"{self.root}[{name}]")

    def __getstate__(self) -> dict:
        return {**self.__dict__, "_zip": None}  # an open archive does not cross processes


def open_source(root: str | os.PathLike, labelled: bool | None = None
                ) -> FolderSource | ZipSource:
    """A ZIP source for a ``.zip`` file, else an image folder source."""
    path = Path(root).expanduser()
    if path.suffix.lower() == ".zip":
        if labelled is not None:
            raise DatasetError(f"{path}: labelled= applies to folders; a ZIP archive's labels "
                               f"come from its {LABELS_FILE}")
        return ZipSource(path)
    return FolderSource(path, labelled)
