"""``gantrain eval RUN`` (score a GAN or ALI run), ``gantrain eval train-classifier`` (train the
LeNet feature extractor), ``gantrain eval stats`` (cache real Inception statistics) and
``gantrain eval convert-weights`` (pytorch-fid's .pth -> MindSpore .ckpt)."""

from __future__ import annotations

import argparse
from pathlib import Path


def run(args: argparse.Namespace) -> int:
    from ..config.strict import ConfigError
    from ..engine import checkpoint, runtime
    from ..recipes.evaluation import EvalOptions
    from ..recipes.registry import RECIPES, get_recipe
    from ..recipes.rundir import checkpoint_config

    ckpt = checkpoint.resolve(args.run)
    config = checkpoint_config(ckpt)
    recipe = get_recipe(config.task, str(ckpt))
    if recipe.evaluate is None:
        scored = ", ".join(r.task for r in RECIPES.values() if r.evaluate is not None)
        raise ConfigError(f"{ckpt} is a {config.task!r} run; `gantrain eval` scores runs of "
                          f"the tasks {scored}")
    metrics = tuple(m.strip() for m in args.metrics.split(",") if m.strip())
    run_dir = Path(args.run)
    out = (run_dir if (run_dir / "checkpoints").is_dir() else ckpt) / "eval.json"
    runtime.setup(config.device, config.seed, config.jit_level)
    if args.features == "inception":
        if config.task != "gan":
            raise ConfigError(f"--features inception scores GAN runs; {ckpt} is a "
                              f"{config.task!r} run (use the classifier features)")
        methods = ("drs", "dot", "mh", "truncation")
        if any(getattr(args, m) is not None for m in methods):
            raise ConfigError("--drs, --dot, --mh and --truncation score with the classifier "
                              "features; --features inception scores the plain generator only")
        report = _run_inception(args, ckpt, config, out, metrics)
    else:
        options = EvalOptions(args.classifier, args.n, metrics, args.ema, args.seed, args.drs,
                              args.dot, args.mh, args.truncation)
        report = recipe.evaluate(ckpt, config, out, options)
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


def _run_inception(args: argparse.Namespace, ckpt: Path, config, out: Path,
                   metrics: tuple[str, ...]) -> dict:
    from ..config.strict import ConfigError
    from ..metrics.inception.report import METRICS
    from ..recipes.gan.inception_eval import evaluate_run_inception

    if not args.weights:
        raise ConfigError("--features inception needs --weights: pytorch-fid's "
                          "pt_inception-2015-12-05-6726825d.pth or a .ckpt converted from it")
    if args.metrics == "fd,kid,prdc,classes":  # the classifier default: use Inception's
        metrics = METRICS
    return evaluate_run_inception(ckpt, config, out, args.weights, args.n, args.ref,
                                  args.resize, args.batch, metrics, args.ema, args.seed)


def _stats_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="gantrain eval stats",
                                description="cache real-data Inception statistics (.npz)")
    p.add_argument("data", help="dataset folder (MNIST IDX, CIFAR-10 or images), or digits")
    p.add_argument("--features", choices=("inception",), default="inception")
    p.add_argument("--weights", required=True, help="pytorch-fid's .pth or a converted .ckpt")
    p.add_argument("--out", required=True, help="the .npz to write")
    p.add_argument("--data", dest="reader", choices=("mnist", "fashion_mnist", "cifar10",
                                                     "folder"),
                   help="reader (default: guessed from the folder's files)")
    p.add_argument("--split", default="train", help="mnist/cifar10 split (default: train)")
    p.add_argument("--n", type=int, help="random subset of this many images (default: all)")
    p.add_argument("--size", type=int, default=64, help="folder: image size (default: 64)")
    p.add_argument("--keep", type=int, default=10000,
                   help="feature rows stored for KID/PRDC (default: 10000; 0: FID only)")
    p.add_argument("--resize", default="bilinear", help="bilinear (default) or pil-bicubic")
    p.add_argument("--batch", type=int, default=50)
    p.add_argument("--device", default="CPU", help="CPU (default), GPU or Ascend")
    p.add_argument("--seed", type=int, default=0)
    return p


def stats(args: argparse.Namespace) -> int:
    from ..engine import runtime
    from ..recipes.gan.inception_eval import dataset_stats

    o = _stats_parser().parse_args(args.rest)
    runtime.setup(o.device, o.seed)
    s = dataset_stats(o.data, o.weights, o.out, o.reader, o.split, o.n, o.size, o.keep,
                      o.resize, o.batch, o.seed)
    kept = 0 if s.features is None else len(s.features)
    print(f"{s.count} images of {s.dataset}: statistics (and {kept} feature rows) written to "
          f"{o.out}")
    return 0


def convert_weights(args: argparse.Namespace) -> int:
    from ..metrics.inception.weights import REFERENCE_FILE, check_reference
    from ..metrics.inception.weights import convert_weights as convert

    p = argparse.ArgumentParser(prog="gantrain eval convert-weights",
                                description=f"pytorch-fid's {REFERENCE_FILE} -> a MindSpore "
                                "checkpoint (needs torch for this step only)")
    p.add_argument("src", help="the .pth state dict")
    p.add_argument("dst", help="the .ckpt to write")
    o = p.parse_args(args.rest)
    info = convert(o.src, o.dst)
    check_reference(info)
    print(f"wrote {info.path} (source sha256 {info.source_sha256}"
          f"{', the reference weights' if info.reference else ''})")
    return 0
