"""CIFAR-10 from the official python-pickle or binary batch files.

Two layouts are accepted, found under ``root`` or with ``root`` being the batch folder itself:

* ``cifar-10-batches-py/``: ``data_batch_1`` .. ``data_batch_5``, ``test_batch``; each a
  pickled dict with ``data`` (10000, 3072) uint8 and ``labels`` (list of ints).
* ``cifar-10-batches-bin/``: ``data_batch_1.bin`` .. ``data_batch_5.bin``, ``test_batch.bin``;
  each record is 1 label byte followed by 3072 pixel bytes (R, G, B planes of 32x32).

The pickles are read with an unpickler that only admits the numpy array types the batches
contain, so a tampered file cannot run code.
"""

from __future__ import annotations

import os
import pickle
from pathlib import Path

import numpy as np

from .dataset import ArrayDataset
from .errors import DatasetError

CIFAR10_CLASSES = (
    "airplane", "automobile", "bird", "cat", "deer",
    "dog", "frog", "horse", "ship", "truck",
)
PY_DIR = "cifar-10-batches-py"
BIN_DIR = "cifar-10-batches-bin"
PIXELS = 3 * 32 * 32
RECORD = 1 + PIXELS  # binary layout: label byte + pixels
SPLIT_BATCHES = {
    "train": tuple(f"data_batch_{i}" for i in range(1, 6)),
    "test": ("test_batch",),
}
CIFAR10_URL = "https://www.cs.toronto.edu/~kriz/cifar.html"


def cifar10(
    root: str | os.PathLike, split: str = "train", limit: int | None = None
) -> ArrayDataset:
    """CIFAR-10 as x (N, 3, 32, 32) float32 in [-1, 1] and labels 0..9 (``CIFAR10_CLASSES``).

    ``root`` may contain ``cifar-10-batches-py`` or ``cifar-10-batches-bin``, or be one of
    them; the python layout wins when both exist. ``limit`` keeps only the first N samples.
    """
    if split not in SPLIT_BATCHES:
        raise DatasetError(f"unknown split {split!r}, expected one of {sorted(SPLIT_BATCHES)}")
    if limit is not None and limit < 1:
        raise ValueError(f"cifar10: limit must be >= 1 or None, got {limit}")
    folder, binary = _find_layout(Path(root))
    names = [f"{b}.bin" if binary else b for b in SPLIT_BATCHES[split]]
    _require(folder, names)
    read = _read_binary_batch if binary else _read_pickle_batch
    images, labels = [], []
    for name in names:
        batch_images, batch_labels = read(folder / name)
        images.append(batch_images)
        labels.append(batch_labels)
        if limit is not None and sum(map(len, labels)) >= limit:
            break
    x = np.concatenate(images)[:limit].reshape(-1, 3, 32, 32)
    y = np.concatenate(labels)[:limit].astype(np.int32)
    x = x.astype(np.float32) / np.float32(127.5) - np.float32(1.0)
    return ArrayDataset(x=x, y=y, num_classes=10, name=f"cifar10-{split}")


def _find_layout(root: Path) -> tuple[Path, bool]:
    """The batch folder and whether it holds the binary (``.bin``) version."""
    for folder, binary in ((root / PY_DIR, False), (root / BIN_DIR, True)):
        if folder.is_dir():
            return folder, binary
    if (root / "data_batch_1").is_file() or (root / "test_batch").is_file():
        return root, False
    if (root / "data_batch_1.bin").is_file() or (root / "test_batch.bin").is_file():
        return root, True
    raise DatasetError(
        f"cifar10: no CIFAR-10 batches under {root}: expected {root / PY_DIR} "
        f"(python version) or {root / BIN_DIR} (binary version), or batch files in {root} "
        f"itself. Download cifar-10-python.tar.gz from {CIFAR10_URL} and extract it into "
        f"{root}, or call gantrain.data.download.download('cifar10', {str(root)!r})"
    )


def _require(folder: Path, names: list[str]) -> None:
    """Fail with the full list of missing batch files, not just the first."""
    missing = [name for name in names if not (folder / name).is_file()]
    if missing:
        raise DatasetError(
            f"cifar10: missing {', '.join(missing)} in {folder} (expected {', '.join(names)}); "
            f"re-extract the archive from {CIFAR10_URL}"
        )


def _read_binary_batch(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """Records of 1 label byte + 3072 pixel bytes -> (N, 3072) uint8 pixels, (N,) labels."""
    try:
        data = np.fromfile(path, dtype=np.uint8)
    except OSError as exc:
        raise DatasetError(f"{path}: cannot read: {exc}") from exc
    if data.size == 0 or data.size % RECORD:
        raise DatasetError(
            f"{path}: {data.size} bytes is not a positive multiple of the {RECORD}-byte "
            "record (1 label byte + 3072 pixel bytes); the file is truncated or corrupt"
        )
    records = data.reshape(-1, RECORD)
    labels = records[:, 0]
    _check_labels(path, labels)
    return records[:, 1:], labels


def _read_pickle_batch(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """A pickled batch dict -> (N, 3072) uint8 pixels, (N,) labels, shape-checked."""
    try:
        with path.open("rb") as f:
            batch = _NumpyOnlyUnpickler(f, encoding="bytes").load()
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, AttributeError,
            ImportError, IndexError, KeyError) as exc:
        raise DatasetError(f"{path}: not a readable CIFAR-10 pickle batch: {exc}") from exc
    except OSError as exc:
        raise DatasetError(f"{path}: cannot read: {exc}") from exc
    if not isinstance(batch, dict):
        raise DatasetError(f"{path}: holds a {type(batch).__name__}, expected a dict batch")
    batch = {k.decode() if isinstance(k, bytes) else k: v for k, v in batch.items()}
    for key in ("data", "labels"):
        if key not in batch:
            raise DatasetError(f"{path}: batch has no {key!r} entry (keys: {sorted(batch)})")
    data = np.asarray(batch["data"])
    labels = np.asarray(batch["labels"])
    if data.dtype != np.uint8 or data.ndim != 2 or data.shape[1] != PIXELS:
        raise DatasetError(
            f"{path}: 'data' is {data.dtype} of shape {data.shape}, "
            f"expected uint8 of shape (N, {PIXELS})"
        )
    if labels.shape != (len(data),):
        raise DatasetError(
            f"{path}: 'labels' has shape {labels.shape}, expected ({len(data)},) to match 'data'"
        )
    _check_labels(path, labels)
    return data, labels


def _check_labels(path: Path, labels: np.ndarray) -> None:
    """CIFAR-10 labels are integers 0..9."""
    if not np.issubdtype(labels.dtype, np.integer):
        raise DatasetError(f"{path}: labels are {labels.dtype}, expected integers 0..9")
    if labels.size and (labels.min() < 0 or labels.max() > 9):
        raise DatasetError(
            f"{path}: labels span {labels.min()}..{labels.max()}, expected 0..9; corrupt file?"
        )


class _NumpyOnlyUnpickler(pickle.Unpickler):
    """An unpickler that can rebuild numpy arrays and nothing else that executes code."""

    ALLOWED = {
        ("numpy.core.multiarray", "_reconstruct"),
        ("numpy._core.multiarray", "_reconstruct"),
        ("numpy", "ndarray"),
        ("numpy", "dtype"),
        ("numpy.core.numeric", "_frombuffer"),  # arrays pickled with protocol 5
        ("numpy._core.numeric", "_frombuffer"),
        ("_codecs", "encode"),  # how Python 2 byte strings come back in protocol 2
    }

    def find_class(self, module: str, name: str) -> type:
        if (module, name) in self.ALLOWED:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"forbidden global {module}.{name} in a CIFAR-10 batch")
