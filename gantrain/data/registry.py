"""Datasets by config name: ``[data] dataset = "mixture"`` plus the reader's ``args``.

Each builder returns a :class:`DataBundle`: the batch stream and what the rest of the run
needs to know about it (sample shape, classes, and for mixtures the mixture itself).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..config.imports import check_kwargs
from ..config.strict import ConfigError
from ..engine.context import BatchSource
from .dataset import ArrayDataset
from .loader import ArrayLoader
from .mixtures import Mixture, MixtureSource, get_mixture
from .prepared import PreparedImages, resolve_prepared


@dataclass
class DataBundle:
    source: BatchSource
    sample_shape: tuple[int, ...]
    num_classes: int = 0
    mixture: Mixture | None = None
    dataset: Any = None  # the ArrayDataset (in memory) or PreparedImages (memory-mapped)


def _mixture(batch_size: int, seed: int, name: str = "grid") -> DataBundle:
    """``args = {name = "ring" | "grid"}``."""
    mixture = get_mixture(name)
    return DataBundle(MixtureSource(mixture, batch_size, seed), (2,), mixture=mixture)


def _arrays(dataset: ArrayDataset | PreparedImages, batch_size: int, seed: int) -> DataBundle:
    _say_where(dataset)
    return DataBundle(ArrayLoader(dataset, batch_size, seed), dataset.sample_shape,
                      dataset.num_classes, dataset=dataset)


def _digits(batch_size: int, seed: int, n: int = 10000, size: int = 28) -> DataBundle:
    """The embedded procedural digits: no download, labelled, deterministic from the seed."""
    from .digits import embedded_digits

    return _arrays(embedded_digits(n=n, size=size, seed=seed), batch_size, seed)


def _mnist(batch_size: int, seed: int, root: str, split: str = "train",
           limit: int | None = None) -> DataBundle:
    from .idx import mnist

    return _arrays(mnist(root, split=split, limit=limit), batch_size, seed)


def _fashion_mnist(batch_size: int, seed: int, root: str, split: str = "train",
                   limit: int | None = None) -> DataBundle:
    from .idx import fashion_mnist

    return _arrays(fashion_mnist(root, split=split, limit=limit), batch_size, seed)


def _cifar10(batch_size: int, seed: int, root: str, split: str = "train",
             limit: int | None = None) -> DataBundle:
    from .cifar import cifar10

    return _arrays(cifar10(root, split=split, limit=limit), batch_size, seed)


def _folder(batch_size: int, seed: int, root: str, size: int = 64, channels: int = 3,
            labelled: bool | None = None, skip_bad: bool = False, crop: Any = None,
            cache: bool = True, cache_dir: str | None = None,
            workers: int | None = None) -> DataBundle:
    """An image folder (or a StyleGAN-style ``.zip``). With ``cache`` (the default) the images
    are prepared once into a memory-mapped uint8 cache under ``cache_dir`` (default: see
    ``gantrain.data.prepared.cache_root``) by ``workers`` processes, and later runs reuse it;
    ``cache = false`` decodes a folder into memory on every run."""
    if not cache:
        if str(root).lower().endswith(".zip"):
            raise ConfigError("data.args.cache = false reads folders only; a .zip is always "
                              "prepared into the cache")
        from .folder import image_folder

        ds = image_folder(root, size=size, channels=channels, labelled=labelled,
                          skip_bad=skip_bad, crop=crop)
        return _arrays(ds, batch_size, seed)
    from .prepare import Target, prepare
    from .sources import open_source

    target = Target(_pair(size, "size"), channels, None if crop is None else _pair(crop, "crop"),
                    skip_bad)
    if channels not in (1, 3):
        raise ConfigError(f"data.args.channels must be 1 or 3, got {channels}")
    folder = prepare(open_source(root, labelled), target, cache_dir=cache_dir, workers=workers)
    return _arrays(PreparedImages(folder), batch_size, seed)


def _prepared(batch_size: int, seed: int, name: str, cache_dir: str | None = None
              ) -> DataBundle:
    """A dataset made by ``gantrain data prepare SRC --out NAME``: ``name`` under the cache
    root, or a path to the folder."""
    return _arrays(PreparedImages(resolve_prepared(name, cache_dir)), batch_size, seed)


def _python(batch_size: int, seed: int, factory: str, args: dict | None = None) -> DataBundle:
    """Your own pipeline: ``factory = "my_data.py:make"`` is called as ``make(batch_size,
    seed, **args)`` and returns a ``mindspore.dataset`` pipeline or any re-iterable of
    batches. Not exactly resumable (a resume restarts the stream, with a warning)."""
    from ..config.imports import load_object
    from .stream import IterableSource

    make = load_object(factory, "data.args.factory")
    check_kwargs(make, {"batch_size": batch_size, "seed": seed, **(args or {})},
                 f"data.args.args ({factory})")
    source = IterableSource(make(batch_size, seed, **(args or {})), name=factory)
    # the first batch stands in for "real samples" where a run shows or compares some
    reference = ArrayDataset(*source.peek(), name=factory)
    return DataBundle(source, source.sample_shape, dataset=reference)


def _pair(value: Any, key: str) -> tuple[int, int]:
    if isinstance(value, int) and value > 0:
        return value, value
    if isinstance(value, (list, tuple)) and len(value) == 2 and all(
            isinstance(v, int) and v > 0 for v in value):
        return int(value[0]), int(value[1])
    raise ConfigError(f"data.args.{key} must be a positive int or [height, width], got {value!r}")


def _say_where(dataset: ArrayDataset | PreparedImages) -> None:
    """One log line: where the samples live (memory or a mapped file) and how big they are."""
    if not isinstance(dataset, ArrayDataset):
        where = (f"memory-mapped from {dataset.folder} ({dataset.nbytes / 1e6:.0f} MB uint8, "
                 "converted per batch)")
    else:
        where = f"in memory ({dataset.x.nbytes / 1e6:.0f} MB float32)"
    print(f"data: {dataset.name or 'dataset'}, {len(dataset)} samples of "
          f"{tuple(dataset.sample_shape)}, {where}", file=sys.stderr)


def _array(batch_size: int, seed: int, path: str, key: str | None = None,
           labels_key: str | None = None, size: int | None = None) -> DataBundle:
    """A ``.npy``/``.npz`` image array; a uint8 ``.npy`` too big for memory as float32 is
    memory-mapped instead (automatically, see ``mapped_array``; the log says which)."""
    from .arrays import load_array
    from .mapped_array import MappedImages, worth_mapping

    if worth_mapping(path, key, labels_key, size):
        return _arrays(MappedImages(path), batch_size, seed)
    ds = load_array(path, key=key, labels_key=labels_key, size=size)
    return _arrays(ds, batch_size, seed)


def _stacked_mnist(batch_size: int, seed: int, source: str = "digits", root: str | None = None,
                   n: int = 25600, digits: int = 10000) -> DataBundle:
    """Stacked MNIST (Metz et al. 2017): three random digits as the RGB channels, 1000 modes.
    ``source`` is the embedded ``digits`` (``digits`` of them) or ``mnist`` files in ``root``."""
    from .stacked import stack_digits

    if source == "digits":
        from .digits import embedded_digits

        base = embedded_digits(n=digits, seed=seed)
    elif source == "mnist":
        from .idx import mnist

        if root is None:
            raise ConfigError("data.args.root: stacked_mnist with source = 'mnist' needs root")
        base = mnist(root, split="train")
    else:
        raise ConfigError(f"data.args.source must be 'digits' or 'mnist', got {source!r}")
    x, modes = stack_digits(base.x, base.y, n, seed)
    ds = ArrayDataset(x, modes.astype(np.int32), num_classes=1000, name=f"stacked_{source}")
    return _arrays(ds, batch_size, seed)


def _unpaired(data, batch_size: int, seed: int) -> DataBundle:
    from .unpaired import UnpairedSource

    return DataBundle(UnpairedSource(data, batch_size, seed), data.sample_shape, dataset=data)


def _unpaired_folder(batch_size: int, seed: int, root: str, size: int = 256,
                     channels: int = 3) -> DataBundle:
    """CycleGAN's ``trainA/ trainB/ testA/ testB/`` folders; batches are ``(a, b)``."""
    from .unpaired import unpaired_folder

    return _unpaired(unpaired_folder(root, size, channels), batch_size, seed)


def _digit_styles(batch_size: int, seed: int, n: int = 10000, size: int = 28,
                  test: int = 256) -> DataBundle:
    """Embedded digits, plain (A) and thick, slanted, inverted (B); batches are ``(a, b)``."""
    from .unpaired import digit_styles

    return _unpaired(digit_styles(n, size, test, seed), batch_size, seed)


BUILDERS: dict[str, Callable[..., DataBundle]] = {
    "unpaired_folder": _unpaired_folder,
    "digit_styles": _digit_styles,
    "stacked_mnist": _stacked_mnist,
    "mixture": _mixture,
    "digits": _digits,
    "mnist": _mnist,
    "fashion_mnist": _fashion_mnist,
    "cifar10": _cifar10,
    "folder": _folder,
    "array": _array,
    "prepared": _prepared,
    "python": _python,
}


def build_data(dataset: str, args: dict[str, Any], batch_size: int, seed: int) -> DataBundle:
    """Build the dataset named in the config; unknown names and arguments are ConfigErrors."""
    if dataset not in BUILDERS:
        raise ConfigError(f"data.dataset: unknown dataset {dataset!r}; choose one of "
                          f"{', '.join(sorted(BUILDERS))}")
    builder = BUILDERS[dataset]
    where = f"data.args ({dataset})"
    check_kwargs(builder, {"batch_size": batch_size, "seed": seed, **args}, where)
    return builder(batch_size, seed, **args)
