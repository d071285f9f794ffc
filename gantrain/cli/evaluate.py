"""``gantrain eval RUN`` (score a GAN run) and ``gantrain eval train-classifier`` (train the
feature extractor the image metrics use)."""

from __future__ import annotations

import argparse
from pathlib import Path


def run(args: argparse.Namespace) -> int:
    from ..config.strict import ConfigError
    from ..engine import checkpoint, runtime
    from ..recipes.gan.evaluate import evaluate_run
    from ..recipes.rundir import checkpoint_config

    ckpt = checkpoint.resolve(args.run)
    config = checkpoint_config(ckpt)
    if config.task != "gan":
        raise ConfigError(f"{ckpt} is a {config.task!r} run; `gantrain eval` scores the "
                          "generators of GAN runs")
    metrics = tuple(m.strip() for m in args.metrics.split(",") if m.strip())
    run_dir = Path(args.run)
    out = (run_dir if (run_dir / "checkpoints").is_dir() else ckpt) / "eval.json"
    runtime.setup(config.device, config.seed)
    report = evaluate_run(ckpt, config, out, args.classifier, args.n, metrics, args.ema,
                          args.seed)
    print(report.pop("table"))
    print(f"wrote {report['path']}")
    return 0


def _classifier_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="gantrain eval train-classifier",
                                description="train the LeNet feature extractor for metrics")
    p.add_argument("--data", default="digits",
                   help="digits | mnist | fashion_mnist | cifar10 (default: digits)")
    p.add_argument("--root", help="dataset folder (all but digits)")
    p.add_argument("--out", help="output folder (default: classifiers/<data>)")
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--n", type=int, default=10000, help="embedded digits to train on")
    p.add_argument("--seed", type=int, default=0)
    return p


def train_classifier(args: argparse.Namespace) -> int:
    from ..metrics.classifier import classifier_data, train_classifier

    options = _classifier_parser().parse_args(args.rest)
    train, test = classifier_data(options.data, options.root, options.n, options.seed)
    out = options.out or f"classifiers/{options.data}"
    result = train_classifier(train, test, out, epochs=options.epochs, seed=options.seed)
    print(f"test accuracy {100 * result.accuracy:.2f}% on {len(test)} {test.name} images; "
          f"saved to {result.path}")
    return 0
