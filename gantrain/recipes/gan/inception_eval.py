"""``gantrain eval RUN --features inception`` and ``gantrain eval stats``: paper-comparable FID,
IS, KID and PRDC of a GAN run on the FID Inception network, against real statistics that are
computed once and cached (gantrain.metrics.inception)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from ...blocks import latents
from ...config.strict import ConfigError
from ...data.registry import build_data
from ...engine import checkpoint
from ...metrics.inception import preprocess
from ...metrics.inception.extractor import InceptionExtractor
from ...metrics.inception.report import METRICS, check_metrics, format_inception, inception_report
from ...metrics.inception.stats import RealStats, load_stats, make_stats, save_stats
from ...metrics.inception.weights import check_reference, load_inception
from ...metrics.report import plain
from .config import GANConfig
from .sample import load_generator


def _extractor(weights: str | Path, resize: str, batch: int):
    net, info = load_inception(weights)
    check_reference(info)
    return InceptionExtractor(net, resize, batch), info


def _guess_reader(root: Path) -> str:
    """mnist (IDX files), cifar10 (its batch files) or an image folder."""
    names = {p.name for p in root.rglob("*") if p.is_file()} if root.is_dir() else set()
    if any(n.startswith("train-images-idx3-ubyte") for n in names):
        return "mnist"
    if any(n.startswith("data_batch_1") for n in names):
        return "cifar10"
    return "folder"


def _real_images(data: str, reader: str | None, split: str, size: int) -> tuple[Any, str]:
    """(ArrayDataset, dataset key) for ``eval stats DATA``: ``digits`` or a dataset folder."""
    if data == "digits":
        return build_data("digits", {}, 1, 0).dataset, "digits"
    root = Path(data)
    if not root.exists():
        raise ConfigError(f"dataset folder {data!r} does not exist")
    reader = reader or _guess_reader(root)
    if reader == "folder":
        args: dict[str, Any] = {"root": data, "size": size}
        key = f"folder:{root.name}:{size}px"
    elif reader in ("mnist", "fashion_mnist", "cifar10"):
        args, key = {"root": data, "split": split}, f"{reader}:{split}"
    else:
        raise ConfigError(f"--data must be mnist, fashion_mnist, cifar10 or folder, got "
                          f"{reader!r}")
    return build_data(reader, args, 1, 0).dataset, key


def dataset_stats(data: str, weights: str | Path, out: str | Path, reader: str | None = None,
                  split: str = "train", n: int | None = None, size: int = 64, keep: int = 10000,
                  resize: str = preprocess.DEFAULT_RESIZE, batch: int = 50,
                  seed: int = 0) -> RealStats:
    """Inception statistics of a real dataset (all of it, or ``n`` random images), saved."""
    dataset, key = _real_images(data, reader, split, size)
    x = dataset.x
    if n is not None:
        if n < 2:
            raise ConfigError(f"--n must be >= 2, got {n}")
        x = x[np.sort(np.random.default_rng(seed).permutation(len(x))[:n])]
        key += f":{len(x)}of{len(dataset)}"
    extractor, info = _extractor(weights, resize, batch)
    feats, _ = extractor(x, desc=f"real {key}")
    stats = make_stats(feats, info.source_sha256, key, preprocess.describe(resize), keep, seed)
    save_stats(stats, out)
    return stats


def _generated_features(ckpt: Path, config: GANConfig, extractor: InceptionExtractor, n: int,
                        ema: bool, seed: int, chunk: int = 1000) -> np.ndarray:
    """pool3 features of ``n`` samples, generated ``chunk`` at a time so that only features,
    not 50k full-size images, are held in memory."""
    generate = load_generator(ckpt, config, ema)
    rng = np.random.default_rng(seed)
    z = latents.normal(rng, n, config.gan.z_dim)
    y = latents.labels(rng, n, config.gan.num_classes)
    feats = []
    with extractor.progress_bar(n, "generated") as bar:
        for start in range(0, n, chunk):
            fake = generate(z[start:start + chunk],
                            None if y is None else y[start:start + chunk])
            if fake.ndim != 4:
                raise ConfigError(f"Inception metrics need image samples, this generator "
                                  f"makes shape {fake.shape[1:]}")
            feats.append(extractor(fake, bar=bar)[0])
    return np.concatenate(feats)


def evaluate_run_inception(ckpt: Path, config: GANConfig, out: Path, weights: str | Path,
                           n: int = 10000, ref: str | Path | None = None,
                           resize: str = preprocess.DEFAULT_RESIZE, batch: int = 50,
                           metrics: tuple[str, ...] = METRICS, ema: bool = True,
                           seed: int = 0) -> dict[str, Any]:
    """Score checkpoint ``ckpt``'s generator on Inception features; writes eval.json to ``out``.

    Real statistics come from ``ref`` (refused if made with other weights or preprocessing) or,
    without it, from up to ``n`` images of the run's own dataset (not cached).
    """
    check_metrics(metrics)
    if n < 10:
        raise ConfigError(f"--n must be >= 10 (IS uses 10 splits), got {n}")
    extractor, info = _extractor(weights, resize, batch)
    prep = preprocess.describe(resize)
    if ref is not None:
        real = load_stats(ref, info.source_sha256, prep)
    else:
        data = build_data(config.data.dataset, config.data.args, config.data.batch_size,
                          config.seed)
        if data.dataset is None or data.dataset.x.ndim != 4:
            raise ConfigError("Inception metrics need an image dataset; this run's "
                              f"{config.data.dataset!r} is not one")
        x = data.dataset.x
        x = x[np.sort(np.random.default_rng(seed).permutation(len(x))[:n])]
        real = make_stats(extractor(x, desc="real")[0], info.source_sha256,
                          config.data.dataset, prep, keep=len(x))
    pool3 = _generated_features(ckpt, config, extractor, n, ema, seed)
    report: dict[str, Any] = {
        "features": "inception", "samples": n, "weights": info.as_dict(),
        "preprocessing": prep,
        "real": {"dataset": real.dataset, "count": real.count, "ref": str(ref) if ref else None},
        "generated": inception_report(pool3, extractor.fc_weight, real, metrics, seed),
        "checkpoint": str(checkpoint.resolve(ckpt)), "ema": ema}
    Path(out).write_text(json.dumps(report, indent=1, default=plain))
    report["path"], report["table"] = str(out), format_inception(report)
    return report
