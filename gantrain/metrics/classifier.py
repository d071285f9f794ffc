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
from ..config.strict import ConfigError
from ..data.dataset import ArrayDataset
from ..data.loader import ArrayLoader
from ..engine import checkpoint
from ..engine.loop import Loop
from ..engine.optim import Adam
from ..engine.player import Player, prefix_parameters
from ..engine.schedule import Phase, Schedule

CLASSIFIER_MODEL = "gantrain.models.classifier:LeNet"
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
    ms.set_seed(seed)  # the weights' initialization; otherwise whatever ran before decides it
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


def classifier_data(name: str, root: str | None, n: int = 10000,
                    seed: int = 0) -> tuple[ArrayDataset, ArrayDataset]:
    """Train and test splits for the feature classifier. The embedded digits use seeds apart
    from the GAN presets' (seed 0), so the classifier never saw the GAN's training digits."""
    if name == "digits":
        from ..data.digits import embedded_digits

        return (embedded_digits(n=n, seed=1000 + seed),
                embedded_digits(n=max(n // 5, 100), seed=2000 + seed))
    labelled = ("mnist", "fashion_mnist", "cifar10")
    if name not in labelled:
        raise ConfigError(f"--data must be digits, {', '.join(labelled)}; got {name!r}")
    if root is None:
        raise ConfigError(f"--data {name} needs --root, the folder holding its files")
    from ..data.registry import build_data

    return tuple(build_data(name, {"root": root, "split": split}, 1, seed).dataset
                 for split in ("train", "test"))
