"""Evaluating generators with a feature extractor gantrain can train itself.

Inception weights cannot be downloaded on every machine, so the metrics (gantrain.metrics) take
features from any extractor; :func:`train_classifier` trains a small CNN on the dataset at hand
with the same players and loop that train GANs, and :class:`FeatureExtractor` turns a trained
classifier into (features, class probabilities) for arrays of images.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import mindspore as ms
import numpy as np
from mindspore import Tensor, nn, ops
from mindspore import dtype as mstype

from ..config.imports import build_cell
from ..config.schema import ConfigError
from ..data.dataset import ArrayDataset
from ..data.loader import ArrayLoader
from ..engine import checkpoint
from ..engine.loop import Loop
from ..engine.optim import Adam
from ..engine.player import Player, prefix_parameters
from ..engine.schedule import Phase, Schedule

CLASSIFIER_MODEL = "models.classifier:LeNet"
META, WEIGHTS = "classifier.json", "classifier.ckpt"


class FeatureExtractor:
    """``extractor(images) -> (features (N, F), probabilities (N, C))`` through one eval-mode
    compiled graph, in fixed-size chunks so it compiles once."""

    def __init__(self, net: nn.Cell, channels: int, chunk: int = 500) -> None:
        self.net, self.channels, self.chunk = net, channels, chunk
        net.set_train(False)

        @ms.jit
        def run(x):
            f = net.features(x)
            return f, ops.softmax(net.head(f), axis=-1)

        self._run = run

    def __call__(self, images: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        feats, probs = [], []
        for start in range(0, len(images), self.chunk):
            part = images[start : start + self.chunk].astype(np.float32)
            n = len(part)
            if n < self.chunk:
                part = np.concatenate([part, np.zeros((self.chunk - n, *part.shape[1:]),
                                                      np.float32)])
            f, p = self._run(Tensor(part))
            feats.append(f.asnumpy()[:n])
            probs.append(p.asnumpy()[:n])
        return np.concatenate(feats), np.concatenate(probs)


@dataclass
class ClassifierResult:
    accuracy: float
    path: Path


def _classifier_args(data: ArrayDataset, width: int) -> dict[str, Any]:
    c, h, w = data.sample_shape
    if h != w:
        raise ConfigError(f"the classifier needs square images, got {h}x{w}")
    return {"channels": c, "size": h, "num_classes": data.num_classes, "width": width}


def train_classifier(train: ArrayDataset, test: ArrayDataset, out: str | Path,
                     epochs: int = 3, batch_size: int = 128, lr: float = 1e-3, width: int = 32,
                     seed: int = 0, progress: bool = True) -> ClassifierResult:
    """Train a LeNet on ``train``, report accuracy on ``test``, save it under ``out``."""
    if not train.num_classes or train.y is None or test.y is None:
        raise ConfigError(f"training a classifier needs labelled data; {train.name!r} has none")
    args = _classifier_args(train, width)
    net = build_cell(CLASSIFIER_MODEL, args, "classifier")

    def loss_fn(x, y):
        logits = net(x)
        loss = ops.cross_entropy(logits, y)
        acc = ops.cast(ops.argmax(logits, dim=1) == y, mstype.float32).mean()
        return loss, {"accuracy": acc}

    player = Player("C", net, loss_fn, Adam(lr))

    def inputs(ctx):
        x, y = ctx.batch()
        return x, ops.cast(y, mstype.int32)

    loader = ArrayLoader(train, batch_size, seed)
    steps = epochs * (len(train) // batch_size)
    Loop(Schedule([Phase(player, inputs)]), loader, seed, progress=progress).run(steps)
    extractor = FeatureExtractor(net, args["channels"])
    _, probs = extractor(test.x)
    accuracy = float((probs.argmax(1) == test.y).mean())
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    checkpoint.save_parameters(net.get_parameters(), out / WEIGHTS)
    meta = {"model": CLASSIFIER_MODEL, "args": args, "test_accuracy": accuracy,
            "train": train.name, "test": test.name, "train_size": len(train),
            "test_size": len(test), "epochs": epochs}
    (out / META).write_text(json.dumps(meta, indent=1))
    return ClassifierResult(accuracy, out)


def load_classifier(path: str | Path) -> tuple[FeatureExtractor, dict[str, Any]]:
    """A trained classifier folder (``classifier.json`` + ``classifier.ckpt``)."""
    path = Path(path)
    if not (path / META).is_file():
        raise ConfigError(
            f"no classifier at {str(path)!r} (expected {META} and {WEIGHTS}); train one with "
            "`gantrain eval train-classifier --data digits --out classifiers/digits`"
        )
    meta = json.loads((path / META).read_text())
    net = build_cell(meta["model"], meta["args"], "classifier")
    prefix_parameters({"C": net}, "C")
    checkpoint.load_parameters(list(net.get_parameters()), path / WEIGHTS, strict=False)
    return FeatureExtractor(net, meta["args"]["channels"]), meta


METRICS = ("fd", "kid", "prdc", "classes", "stacked")


def quality_report(real_feats: np.ndarray, fake_feats: np.ndarray, fake_probs: np.ndarray,
                   metrics: tuple[str, ...], data_class_freq: np.ndarray | None) -> dict:
    """Every requested metric of ``fake`` against ``real`` features."""
    from .classes import class_report
    from .frechet import frechet_distance
    from .kid import kernel_inception_distance
    from .prdc import prdc

    out: dict[str, Any] = {}
    if "fd" in metrics:
        out["fd"] = frechet_distance(real_feats, fake_feats)
    if "kid" in metrics:
        mean, std = kernel_inception_distance(real_feats, fake_feats)
        out["kid"], out["kid_std"] = mean, std
    if "prdc" in metrics:
        out.update(prdc(real_feats, fake_feats))
    if "classes" in metrics:
        out["classes"] = class_report(fake_probs, data_class_freq)
    return out


def stacked_report(images: np.ndarray, extractor: FeatureExtractor) -> dict[str, Any]:
    """Stacked MNIST modes: each channel of (N, 3, H, W) images classified as a digit."""
    from .stacked import stacked_mnist_report

    digits = [extractor(images[:, c : c + 1])[1].argmax(1) for c in range(3)]
    report = stacked_mnist_report(np.stack(digits, axis=1))
    report.pop("histogram", None)
    return report


def evaluate_samples(fake: np.ndarray, real: ArrayDataset, extractor: FeatureExtractor,
                     metrics: tuple[str, ...] = METRICS[:4], seed: int = 0) -> dict[str, Any]:
    """Metrics of generated images against real ones, beside the real-vs-real baseline.

    The baseline compares two disjoint halves of the real data, each as large as the smaller
    of ``len(fake)`` and half the dataset, so a reader can tell what a perfect generator scores.
    ``stacked`` classifies each channel of 3-channel Stacked MNIST images with a digit
    classifier and counts the 1000 modes.
    """
    unknown = [m for m in metrics if m not in METRICS]
    if unknown:
        raise ConfigError(f"unknown metrics {unknown}; choose from {', '.join(METRICS)}")
    needed = 1 if "stacked" in metrics else fake.shape[1]
    if extractor.channels != needed or ("stacked" in metrics and fake.shape[1] != 3):
        raise ConfigError(
            f"the classifier takes {extractor.channels}-channel images; these metrics need "
            f"{needed} for {fake.shape[1]}-channel samples (the stacked metric needs 3-channel "
            "samples and a digit classifier)")
    report: dict[str, Any] = {"samples": len(fake), "generated": {}, "real_vs_real": {}}
    if "stacked" in metrics:
        report["generated"]["stacked"] = stacked_report(fake, extractor)
        report["real_vs_real"]["stacked"] = stacked_report(real.x[: len(fake)], extractor)
    feature_metrics = tuple(m for m in metrics if m != "stacked")
    if not feature_metrics:
        return report
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(real))
    half = min(len(fake), len(real) // 2)
    a, b = order[:half], order[half : 2 * half]
    real_a, _ = extractor(real.x[a])
    real_b, probs_b = extractor(real.x[b])
    fake_feats, fake_probs = extractor(fake)
    freq = None
    if real.y is not None and real.num_classes:
        freq = np.bincount(real.y, minlength=real.num_classes) / len(real.y)
    report["real_samples"] = int(half)
    report["generated"].update(
        quality_report(real_a, fake_feats, fake_probs, feature_metrics, freq))
    report["real_vs_real"].update(
        quality_report(real_a, real_b, probs_b, feature_metrics, freq))
    return report


def classifier_data(name: str, root: str | None, n: int = 10000,
                    seed: int = 0) -> tuple[ArrayDataset, ArrayDataset]:
    """Train and test splits for the feature classifier. The embedded digits use seeds apart
    from the GAN presets' (seed 0), so the classifier never saw the GAN's training digits."""
    if name == "digits":
        from ..data.digits import embedded_digits

        return (embedded_digits(n=n, seed=1000 + seed),
                embedded_digits(n=max(n // 5, 100), seed=2000 + seed))
    readers = {"mnist": "mnist", "fashion_mnist": "fashion_mnist", "cifar10": "cifar10"}
    if name not in readers:
        raise ConfigError(f"--data must be digits, {', '.join(readers)}; got {name!r}")
    if root is None:
        raise ConfigError(f"--data {name} needs --root, the folder holding its files")
    if name == "cifar10":
        from ..data.cifar import cifar10 as reader
    else:
        from ..data import idx

        reader = getattr(idx, name)
    return reader(root, split="train"), reader(root, split="test")


def _format(report: dict[str, Any]) -> str:
    gen, base = report["generated"], report["real_vs_real"]
    lines = [f"{'metric':<20}{'generated':>12}{'real vs real':>14}"]
    for key in ("fd", "kid", "precision", "recall", "density", "coverage"):
        if key in gen:
            lines.append(f"{key:<20}{gen[key]:>12.4f}{base[key]:>14.4f}")
    if "stacked" in gen:
        for key in ("modes", "kl"):
            lines.append(f"{'stacked ' + key:<20}{gen['stacked'][key]:>12.3f}"
                         f"{base['stacked'][key]:>14.3f}")
    if "classes" in gen:
        g, b = gen["classes"], base["classes"]
        for key in ("classes_covered", "kl", "inception_score"):
            if key in g:
                lines.append(f"{key:<20}{g[key]:>12.4f}{b[key]:>14.4f}")
    return "\n".join(lines)


def _plain(obj: Any) -> Any:
    """numpy values in reports -> JSON."""
    return obj.tolist() if isinstance(obj, (np.ndarray, np.generic)) else str(obj)


def evaluate_run(path: str | Path, classifier: str | Path | None, n: int = 10000,
                 metrics: tuple[str, ...] = METRICS[:4], ema: bool = True,
                 seed: int = 0) -> dict[str, Any]:
    """Score a run's generator; writes ``eval.json`` next to the checkpoints and returns the
    report (with a printable ``table``)."""
    from ..blocks import latents
    from ..data.registry import build_data
    from ..recipes.gan.run import load_sampler
    from .mixture import mixture_report

    if n < 2:
        raise ConfigError(f"--n must be >= 2, got {n}")
    sampler, config = load_sampler(path, ema=ema)
    rng = np.random.default_rng(seed)
    z = latents.normal(rng, n, config.gan.z_dim)
    fake = sampler(z, latents.labels(rng, n, config.gan.num_classes))
    data = build_data(config.data.dataset, config.data.args, config.data.batch_size, config.seed)
    if data.mixture is not None:
        report: dict[str, Any] = {"samples": n, "mixture": mixture_report(fake, data.mixture)
                                  .as_dict()}
        table = str(mixture_report(fake, data.mixture))
    else:
        if classifier is None:
            raise ConfigError("image metrics need --classifier (train one with `gantrain eval "
                              "train-classifier --data digits --out classifiers/digits`)")
        extractor, meta = load_classifier(classifier)
        report = evaluate_samples(fake, data.dataset, extractor, metrics, seed)
        report["classifier"] = {"path": str(classifier), "test_accuracy": meta["test_accuracy"]}
        table = _format(report)
    ckpt = checkpoint.resolve(path)
    report.update({"checkpoint": str(ckpt), "ema": ema})
    out = Path(path) / "eval.json" if (Path(path) / "checkpoints").is_dir() else ckpt / "eval.json"
    out.write_text(json.dumps(report, indent=1, default=_plain))
    report["path"], report["table"] = str(out), table
    return report
