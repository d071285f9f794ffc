"""MNIST and Fashion-MNIST from their IDX files, raw or gzip-compressed.

The IDX format is a 4-byte magic number (two zero bytes, a dtype code, the number of
dimensions), one big-endian uint32 per dimension, then the array bytes. ``read_idx`` checks
every part of that header against the file size, so a truncated download fails loudly and
names the file instead of producing a silently short dataset.
"""

from __future__ import annotations

import gzip
import os
import zlib
from pathlib import Path

import numpy as np

from .dataset import ArrayDataset
from .errors import DatasetError

# IDX dtype code -> big-endian numpy dtype.
IDX_DTYPES = {
    0x08: np.dtype(">u1"),
    0x09: np.dtype(">i1"),
    0x0B: np.dtype(">i2"),
    0x0C: np.dtype(">i4"),
    0x0D: np.dtype(">f4"),
    0x0E: np.dtype(">f8"),
}
GZIP_MAGIC = b"\x1f\x8b"
SPLIT_PREFIX = {"train": "train", "test": "t10k"}
MNIST_URLS = (
    "https://ossci-datasets.s3.amazonaws.com/mnist/",
    "http://yann.lecun.com/exdb/mnist/",
)
FASHION_MNIST_URLS = ("http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/",)
FASHION_MNIST_CLASSES = (
    "T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
    "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot",
)


def read_idx(path: str | os.PathLike) -> np.ndarray:
    """Read one IDX file (``.gz`` or raw, detected from its bytes) into a native-endian array.

    Raises DatasetError naming the file if it is unreadable, not IDX, or its byte count
    does not match the dimensions in its header.
    """
    path = Path(path)
    data = _read_bytes(path)
    if len(data) < 4:
        raise DatasetError(f"{path}: only {len(data)} bytes, too short for an IDX header")
    zero, code, ndim = data[:2], data[2], data[3]
    if zero != b"\x00\x00" or code not in IDX_DTYPES:
        raise DatasetError(
            f"{path}: bad IDX magic number 0x{data[:4].hex()}, expected 0x0000 followed by a "
            f"dtype code in {{{', '.join(f'0x{c:02x}' for c in IDX_DTYPES)}}} and a rank"
        )
    if ndim == 0:
        raise DatasetError(f"{path}: IDX header declares 0 dimensions, expected at least 1")
    header = 4 + 4 * ndim
    if len(data) < header:
        raise DatasetError(
            f"{path}: truncated header, {len(data)} bytes but {ndim} dimensions need {header}"
        )
    shape = tuple(int(d) for d in np.frombuffer(data, dtype=">u4", count=ndim, offset=4))
    dtype = IDX_DTYPES[code]
    expected = header + int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if len(data) != expected:
        state = "truncated" if len(data) < expected else "has trailing bytes"
        raise DatasetError(
            f"{path}: {state}: {len(data)} bytes, but a {dtype.name} array of shape {shape} "
            f"needs {expected}"
        )
    array = np.frombuffer(data, dtype=dtype, offset=header).reshape(shape)
    return array.astype(dtype.newbyteorder("="))


def _read_bytes(path: Path) -> bytes:
    """The file's content, gunzipped if it starts with the gzip magic bytes."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise DatasetError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    if not data.startswith(GZIP_MAGIC):
        return data
    try:
        return gzip.decompress(data)
    except (OSError, EOFError, zlib.error) as exc:
        raise DatasetError(f"{path}: corrupt or truncated gzip stream: {exc}") from exc


def mnist(root: str | os.PathLike, split: str = "train", limit: int | None = None) -> ArrayDataset:
    """MNIST digits from ``root``: x (N, 1, 28, 28) in [-1, 1], labels 0..9.

    ``root`` holds ``train-images-idx3-ubyte[.gz]``, ``train-labels-idx1-ubyte[.gz]`` and the
    ``t10k-`` pair for ``split="test"``. ``limit`` keeps only the first N samples.
    """
    return _load_pair(Path(root), split, limit, "mnist", MNIST_URLS)


def fashion_mnist(
    root: str | os.PathLike, split: str = "train", limit: int | None = None
) -> ArrayDataset:
    """Fashion-MNIST from ``root``: same file names and layout as :func:`mnist`.

    Class names are in ``FASHION_MNIST_CLASSES``.
    """
    return _load_pair(Path(root), split, limit, "fashion_mnist", FASHION_MNIST_URLS)


def idx_file_names(split: str) -> tuple[str, str]:
    """The standard (images, labels) IDX file names of a split, without ``.gz``."""
    if split not in SPLIT_PREFIX:
        raise DatasetError(f"unknown split {split!r}, expected one of {sorted(SPLIT_PREFIX)}")
    prefix = SPLIT_PREFIX[split]
    return f"{prefix}-images-idx3-ubyte", f"{prefix}-labels-idx1-ubyte"


def _load_pair(
    root: Path, split: str, limit: int | None, name: str, urls: tuple[str, ...]
) -> ArrayDataset:
    """Read and cross-check one split's image and label files."""
    if limit is not None and limit < 1:
        raise ValueError(f"{name}: limit must be >= 1 or None, got {limit}")
    image_path, label_path = _locate(root, idx_file_names(split), name, urls)
    images = read_idx(image_path)
    labels = read_idx(label_path)
    _check_pair(images, labels, image_path, label_path)
    if limit is not None:
        images, labels = images[:limit], labels[:limit]
    x = images.astype(np.float32)[:, None] / np.float32(127.5) - np.float32(1.0)
    return ArrayDataset(x=x, y=labels.astype(np.int32), num_classes=10, name=f"{name}-{split}")


def _locate(root: Path, bases: tuple[str, ...], name: str, urls: tuple[str, ...]) -> list[Path]:
    """The existing raw or ``.gz`` file for each base name.

    If any is missing, raise one DatasetError listing every missing file, the paths that were
    tried, and where to download it.
    """
    found, missing = [], []
    for base in bases:
        options = [root / base, root / f"{base}.gz"]
        path = next((p for p in options if p.is_file()), None)
        found.append(path)
        if path is None:
            missing.append(f"  {base}: expected {options[0]} or {options[1]}")
    if missing:
        raise DatasetError(
            f"{name}: {len(missing)} of {len(bases)} files missing in {root}:\n"
            + "\n".join(missing)
            + f"\nDownload the .gz files from {' or '.join(urls)} into {root}, "
            f"or call gantrain.data.download.download({name!r}, {str(root)!r})"
        )
    return found


def _check_pair(images: np.ndarray, labels: np.ndarray, image_path: Path, label_path: Path) -> None:
    """Images must be (N, 28, 28) uint8 and labels (N,) uint8 in 0..9."""
    if images.dtype != np.uint8 or images.ndim != 3:
        raise DatasetError(
            f"{image_path}: holds {images.dtype} of shape {images.shape}, "
            "expected uint8 images of shape (N, H, W)"
        )
    if labels.dtype != np.uint8 or labels.ndim != 1:
        raise DatasetError(
            f"{label_path}: holds {labels.dtype} of shape {labels.shape}, "
            "expected uint8 labels of shape (N,)"
        )
    if len(images) == 0:
        raise DatasetError(f"{image_path}: holds no images")
    if len(images) != len(labels):
        raise DatasetError(
            f"{image_path} has {len(images)} images but {label_path} has {len(labels)} labels"
        )
    if labels.size and labels.max() > 9:
        raise DatasetError(f"{label_path}: label {labels.max()} out of range, expected 0..9")
