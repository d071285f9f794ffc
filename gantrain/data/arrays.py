"""Images stored as numpy arrays (``.npy``, or one key of an ``.npz``) as a dataset.

Accepted layouts: (N, H, W) grayscale, (N, C, H, W) or (N, H, W, C) with C = 1 or 3; when
both dim 1 and dim 3 could be channels, NCHW wins. Accepted value ranges, detected from the
data: integers in [0, 255] (uint8 or wider), floats in [-1, 1] (with negatives present), in
[0, 1], or in [0, 255]. Everything comes out float32 NCHW in [-1, 1], optionally resized.
Files are opened with ``allow_pickle=False``: an array file never runs code.
"""

from __future__ import annotations

import os
import zipfile
import zlib
from pathlib import Path

import numpy as np
from PIL import Image

from .dataset import ArrayDataset
from .errors import DatasetError
from .folder import resize_crop

DEFAULT_KEYS = ("x", "images", "arr_0")  # tried in order when an .npz has several arrays
CHANNELS = (1, 3)
EXPECTED_LAYOUTS = "(N, H, W), (N, C, H, W) or (N, H, W, C) with C in {1, 3}"
# What np.load and NpzFile raise on truncated or damaged files.
_CORRUPT = (OSError, ValueError, EOFError, zipfile.BadZipFile, zlib.error)


def load_array(
    path: str | os.PathLike,
    key: str | None = None,
    labels_key: str | None = None,
    size: int | tuple[int, int] | None = None,
) -> ArrayDataset:
    """Load images (and optionally int labels) from an .npy/.npz file as float32 NCHW [-1, 1].

    ``key`` picks the image array in an .npz (default: the only array, else the first of
    ``DEFAULT_KEYS`` present); ``labels_key`` names a 1-D integer label array in the same
    .npz; ``size`` (int or (height, width)) resizes each image: shorter side + center crop.
    """
    path = Path(path)
    arrays = _open(path)
    try:
        image_key = _pick_key(path, arrays, key)
        images = _get(path, arrays, image_key, "key")
        labels = None if labels_key is None else _get(path, arrays, labels_key, "labels_key")
    finally:
        if isinstance(arrays, np.lib.npyio.NpzFile):
            arrays.close()
    where = str(path) if image_key is None else f"{path}[{image_key!r}]"
    x = _to_unit_range(_to_nchw(images, where), where)
    if size is not None:
        x = _resize(x, size)
    if labels is None:
        return ArrayDataset(x=x, name=path.stem)
    y = _check_labels(labels, len(x), f"{path}[{labels_key!r}]")
    return ArrayDataset(x=x, y=y, num_classes=int(y.max()) + 1, name=path.stem)


def _open(path: Path) -> np.ndarray | np.lib.npyio.NpzFile:
    """``np.load`` without pickles; failures become DatasetError naming the file."""
    if path.suffix not in (".npy", ".npz"):
        raise DatasetError(f"{path}: unsupported suffix {path.suffix!r}, expected .npy or .npz")
    if not path.is_file():
        raise DatasetError(f"{path}: no such file")
    try:
        return np.load(path, allow_pickle=False)
    except _CORRUPT as exc:
        raise DatasetError(f"{path}: not a readable {path.suffix} file: {exc}") from exc


def _pick_key(path: Path, arrays: object, key: str | None) -> str | None:
    """The .npz key holding the images: the given one, the only one, or a DEFAULT_KEYS hit."""
    if key is not None or isinstance(arrays, np.ndarray):
        return key
    names = list(arrays.files)
    if len(names) == 1:
        return names[0]
    for candidate in DEFAULT_KEYS:
        if candidate in names:
            return candidate
    raise DatasetError(f"{path}: holds arrays {names}; pass key= to say which one has the images")


def _get(path: Path, arrays: object, key: str | None, argument: str) -> np.ndarray:
    """One array out of the file, with misused/missing keys and corrupt members named."""
    if isinstance(arrays, np.ndarray):
        if key is not None:
            raise DatasetError(
                f"{path}: {argument}={key!r} given, but a .npy file holds one unnamed array"
            )
        return arrays
    if key not in arrays.files:
        raise DatasetError(f"{path}: no array {key!r}; it holds {list(arrays.files)}")
    try:
        return arrays[key]
    except _CORRUPT as exc:
        raise DatasetError(f"{path}: array {key!r} is corrupt: {exc}") from exc


def _to_nchw(images: np.ndarray, where: str) -> np.ndarray:
    """Reorder (N,H,W) / NHWC / NCHW to NCHW, or say which shape was found and expected."""
    shape = images.shape
    if images.ndim == 3:
        return images[:, None]
    if images.ndim == 4:
        if shape[1] in CHANNELS:
            return images
        if shape[3] in CHANNELS:
            return images.transpose(0, 3, 1, 2)
    raise DatasetError(f"{where}: images have shape {shape}, expected {EXPECTED_LAYOUTS}")


def _to_unit_range(images: np.ndarray, where: str) -> np.ndarray:
    """float32 in [-1, 1], picking the source range from the dtype and the values present."""
    if len(images) == 0:
        raise DatasetError(f"{where}: holds no images (shape {images.shape})")
    if not (np.issubdtype(images.dtype, np.integer) or np.issubdtype(images.dtype, np.floating)):
        raise DatasetError(f"{where}: dtype {images.dtype}, expected an integer or float type")
    low, high = images.min(), images.max()
    if not (np.isfinite(low) and np.isfinite(high)):
        raise DatasetError(f"{where}: contains NaN or infinite values")
    x = images.astype(np.float32)
    if np.issubdtype(images.dtype, np.integer) or high > 1:
        if low < 0 or high > 255:
            raise DatasetError(
                f"{where}: values span [{low}, {high}], expected [0, 255], [0, 1] or [-1, 1]"
            )
        return x / np.float32(127.5) - np.float32(1.0)
    if low < -1:
        raise DatasetError(
            f"{where}: values span [{low}, {high}], expected [0, 255], [0, 1] or [-1, 1]"
        )
    return x if low < 0 else x * np.float32(2.0) - np.float32(1.0)


def _resize(x: np.ndarray, size: int | tuple[int, int]) -> np.ndarray:
    """Resize every channel of every image with Pillow's float mode, clipped to [-1, 1]."""
    height, width = (size, size) if isinstance(size, int) else tuple(size)
    if x.shape[2:] == (height, width):
        return x
    out = np.empty((*x.shape[:2], height, width), dtype=np.float32)
    for n in range(x.shape[0]):
        for c in range(x.shape[1]):
            plane = Image.fromarray(np.ascontiguousarray(x[n, c]))  # float32 -> mode "F"
            out[n, c] = np.asarray(resize_crop(plane, (height, width)))
    return np.clip(out, -1.0, 1.0, out=out)


def _check_labels(labels: np.ndarray, count: int, where: str) -> np.ndarray:
    """Labels must be 1-D non-negative integers, one per image; returned as int32.

    ``num_classes`` is then taken as max label + 1.
    """
    if labels.shape != (count,):
        raise DatasetError(f"{where}: labels have shape {labels.shape}, expected ({count},)")
    if not np.issubdtype(labels.dtype, np.integer):
        raise DatasetError(f"{where}: labels are {labels.dtype}, expected an integer type")
    if labels.min() < 0:
        raise DatasetError(f"{where}: negative label {labels.min()}, expected 0..num_classes-1")
    return labels.astype(np.int32)
