"""Image folders (PNG, JPEG, BMP, WebP) as a dataset, optionally labelled by subfolder.

Files are found recursively (each folder's files sorted by name, then its subfolders in
name order; hidden entries skipped), so the sample order is stable across runs. Every
image is resized so its shorter side matches the target, center-cropped to the target
size and converted to grayscale or RGB, then stacked into one float32 NCHW array in [-1, 1].

Labels: when every image sits inside first-level subfolders (``root/cat/*.png``,
``root/dog/**/*.jpg``) and there are at least two of them, each subfolder is a class,
numbered in sorted name order. Images directly in ``root``, or a single subfolder (say
``celeba/img_align_celeba/``), mean an unlabelled folder. ``labelled=True/False`` forces
either reading. Alpha is composited onto black, matching the -1 background of the others.
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import numpy as np
from PIL import Image

from .dataset import ArrayDataset
from .errors import DatasetError

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".webp")
MODES = {1: "L", 3: "RGB"}
SIXTEEN_BIT_MODES = ("I", "I;16", "I;16B", "I;16L", "I;16N")


@dataclass(frozen=True)
class FolderImages:
    """What :func:`read_image_folder` found: the dataset plus the bookkeeping behind it.

    ``classes[i]`` names label ``i`` (empty when unlabelled); ``files`` are the images loaded,
    in dataset order; ``skipped`` lists ``(file, reason)`` for unreadable files passed over
    with ``skip_bad=True``.
    """

    dataset: ArrayDataset
    classes: list[str] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)
    skipped: list[tuple[Path, str]] = field(default_factory=list)


def image_folder(
    root: str | os.PathLike,
    size: int | tuple[int, int],
    channels: int = 3,
    labelled: bool | None = None,
    skip_bad: bool = False,
    crop: int | tuple[int, int] | None = None,
) -> ArrayDataset:
    """Load an image folder as x (N, channels, H, W) in [-1, 1], labels from subfolders if any.

    Same arguments as :func:`read_image_folder`; skipped files are reported with a warning.
    Use ``read_image_folder`` to get the class names and the skipped files themselves.
    """
    result = read_image_folder(root, size, channels, labelled, skip_bad, crop)
    if result.skipped:
        first, reason = result.skipped[0]
        warnings.warn(
            f"image folder {root}: skipped {len(result.skipped)} unreadable file(s), "
            f"first {first}: {reason}",
            stacklevel=2,
        )
    return result.dataset


def read_image_folder(
    root: str | os.PathLike,
    size: int | tuple[int, int],
    channels: int = 3,
    labelled: bool | None = None,
    skip_bad: bool = False,
    crop: int | tuple[int, int] | None = None,
) -> FolderImages:
    """Load every image under ``root`` and report classes, files and skipped files.

    ``size`` is an int (square) or ``(height, width)``; ``channels`` is 1 (grayscale) or 3
    (RGB); ``labelled=None`` decides from the layout (see the module doc). A corrupt file
    raises DatasetError naming it, unless ``skip_bad`` is set, when it is skipped and listed.
    """
    root = Path(root)
    height, width = _target_size(size)
    if channels not in MODES:
        raise DatasetError(f"image folder {root}: channels must be 1 or 3, got {channels}")
    files = find_images(root)
    classes, labels = _labels_for(root, files, labelled)
    pixels = np.empty((len(files), height, width, channels), dtype=np.uint8)
    kept: list[int] = []
    skipped: list[tuple[Path, str]] = []
    for i, path in enumerate(files):
        try:
            image = load_image(path, (height, width), channels, crop)
        except DatasetError as exc:
            if not skip_bad:
                raise
            cause = exc.__cause__ or exc
            skipped.append((path, f"{type(cause).__name__}: {cause}"))
            continue
        pixels[len(kept)] = image.reshape(height, width, channels)
        kept.append(i)
    if not kept:
        raise DatasetError(f"image folder {root}: all {len(files)} images are unreadable")
    x = pixels[: len(kept)].transpose(0, 3, 1, 2).astype(np.float32)
    x = x / np.float32(127.5) - np.float32(1.0)
    y = None if labels is None else labels[kept]
    dataset = ArrayDataset(x=x, y=y, num_classes=len(classes), name=root.name)
    loaded = [files[i] for i in kept]
    return FolderImages(dataset=dataset, classes=classes, files=loaded, skipped=skipped)


def find_images(root: str | os.PathLike) -> list[Path]:
    """All image files under ``root``, recursively, sorted; hidden files and folders ignored."""
    root = Path(root)
    if not root.exists():
        raise DatasetError(f"image folder {root} does not exist")
    if not root.is_dir():
        raise DatasetError(f"image folder {root} is not a directory")
    found = []
    for folder, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for name in sorted(filenames):
            if not name.startswith(".") and name.lower().endswith(IMAGE_SUFFIXES):
                found.append(Path(folder) / name)
    if not found:
        raise DatasetError(
            f"image folder {root} contains no images (looked recursively for "
            f"{', '.join(IMAGE_SUFFIXES)})"
        )
    return found


def load_image(
    path: str | os.PathLike | IO[bytes],
    size: int | tuple[int, int],
    channels: int = 3,
    crop: int | tuple[int, int] | None = None,
    name: str | None = None,
) -> np.ndarray:
    """One image as uint8 (H, W) for 1 channel or (H, W, 3): converted, cropped, resized.

    ``path`` is a file name or an open binary file (a ZIP member); ``name`` is what errors
    call it. ``crop`` (int or (height, width), source pixels) first takes that box from the
    image centre, clamped to the image; then the shorter side is fitted and the centre kept.
    Any decoding failure becomes a DatasetError naming the file, with the cause chained.
    """
    where = name if name is not None else str(path)
    height, width = _target_size(size)
    try:
        with Image.open(path) as image:
            if crop is None:  # JPEG: decode at a reduced scale (a crop needs the full image)
                image.draft(MODES[channels], (width, height))
            image = to_mode(image, MODES[channels])
    except Exception as exc:  # decoders raise many types; any failure means a bad file
        raise DatasetError(f"{where}: unreadable image: {type(exc).__name__}: {exc}") from exc
    if crop is not None:
        image = center_crop(image, crop)
    return np.asarray(resize_crop(image, (height, width)))


def center_crop(image: Image.Image, crop: int | tuple[int, int]) -> Image.Image:
    """The centred ``crop`` box (height, width) of ``image``, clamped to the image size."""
    box_h, box_w = _target_size(crop)
    box_h, box_w = min(box_h, image.height), min(box_w, image.width)
    left, top = (image.width - box_w) // 2, (image.height - box_h) // 2
    return image.crop((left, top, left + box_w, top + box_h))


def to_mode(image: Image.Image, mode: str) -> Image.Image:
    """Convert to "L" or "RGB", loading the pixels.

    Alpha is composited onto black; 16-bit grayscale is scaled to 8 bits rather than clipped.
    """
    if image.mode in SIXTEEN_BIT_MODES:
        wide = np.asarray(image, dtype=np.uint32)
        image = Image.fromarray((wide >> 8).clip(0, 255).astype(np.uint8), "L")
    elif image.mode in ("RGBA", "LA", "PA") or "transparency" in image.info:
        rgba = image.convert("RGBA")
        image = Image.alpha_composite(Image.new("RGBA", rgba.size, (0, 0, 0, 255)), rgba)
    return image.convert(mode)


def resize_crop(image: Image.Image, size: int | tuple[int, int]) -> Image.Image:
    """Scale so the image covers ``size`` (shorter side fits), then take the centre.

    Done as one bicubic resample of the centred source box, so there is no second pass.
    """
    height, width = _target_size(size)
    scale = max(width / image.width, height / image.height)
    box_w, box_h = width / scale, height / scale
    left, top = (image.width - box_w) / 2, (image.height - box_h) / 2
    box = (left, top, left + box_w, top + box_h)
    return image.resize((width, height), Image.Resampling.BICUBIC, box=box)


def _target_size(size: int | tuple[int, int]) -> tuple[int, int]:
    """``size`` as (height, width), validated."""
    height, width = (size, size) if isinstance(size, int) else tuple(size)
    if height < 1 or width < 1:
        raise DatasetError(f"image size must be positive, got {size}")
    return int(height), int(width)


def _labels_for(
    root: Path, files: list[Path], labelled: bool | None
) -> tuple[list[str], np.ndarray | None]:
    """Class names and per-file int32 labels from first-level subfolders, or ([], None)."""
    tops = [path.relative_to(root).parts for path in files]
    loose = [files[i] for i, parts in enumerate(tops) if len(parts) == 1]
    if labelled is None:
        labelled = not loose and len({parts[0] for parts in tops}) > 1
    if not labelled:
        return [], None
    if loose:
        raise DatasetError(
            f"image folder {root}: labelled=True needs every image inside a class subfolder, "
            f"but {len(loose)} sit directly in {root} (first: {loose[0].name})"
        )
    classes = sorted({parts[0] for parts in tops})
    number = {name: i for i, name in enumerate(classes)}
    return classes, np.array([number[parts[0]] for parts in tops], dtype=np.int32)
