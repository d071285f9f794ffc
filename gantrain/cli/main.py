"""``gantrain`` command line: train, sample. Heavy imports happen inside the commands so that
``gantrain --help`` answers at once."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

DEFAULT_PRESET = "dcgan_digits"


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="gantrain", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="command", required=True)

    t = sub.add_parser("train", help="train from a config file or preset")
    t.add_argument("config", nargs="?", default=DEFAULT_PRESET,
                   help=f"TOML file or preset name (default: {DEFAULT_PRESET})")
    t.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                   help="override a config value, e.g. --set train.steps=500 (repeatable)")
    t.add_argument("--name", help="run folder name under --runs-dir (default: <config>-<time>)")
    t.add_argument("--runs-dir", default="runs", help="parent folder of runs (default: runs)")
    t.add_argument("--resume", metavar="RUN_DIR", help="continue the run in RUN_DIR")
    t.add_argument("--overwrite", action="store_true", help="replace an existing run folder")

    s = sub.add_parser("sample", help="draw samples from a trained run or checkpoint")
    s.add_argument("run", help="run folder or checkpoint folder")
    s.add_argument("--n", type=int, default=64, help="number of samples (default: 64)")
    s.add_argument("--out", help="write the raw samples as a .npy file")
    s.add_argument("--grid", help="write image samples as one grid PNG (default: samples.png "
                   "when no other output is given)")
    s.add_argument("--out-dir", help="write image samples as individual PNGs into this folder")
    s.add_argument("--seed", type=int, default=0, help="noise seed (default: 0)")
    s.add_argument("--class", dest="label", type=int, help="class label for a conditional G")
    s.add_argument("--truncation", type=float,
                   help="resample noise entries with |z| above this (truncation trick)")
    s.add_argument("--interpolate", type=int, metavar="STEPS",
                   help="rows of STEPS images interpolating (slerp) between random latents")
    s.add_argument("--no-ema", dest="ema", action="store_false",
                   help="use the raw generator weights instead of their EMA")
    s.add_argument("--input", metavar="FOLDER",
                   help="cyclegan runs: translate the images in FOLDER (default: test images)")
    s.add_argument("--direction", choices=("AB", "BA"),
                   help="cyclegan runs: translate A -> B (default) or B -> A")

    e = sub.add_parser("eval", help="score a trained run (also: eval train-classifier)")
    e.add_argument("run", help="run folder or checkpoint folder")
    e.add_argument("--classifier", help="trained classifier folder (from eval train-classifier)")
    e.add_argument("--n", type=int, default=10000, help="generated samples (default: 10000)")
    e.add_argument("--metrics", default="fd,kid,prdc,classes",
                   help="comma-separated: fd, kid, prdc, classes (default: all)")
    e.add_argument("--no-ema", dest="ema", action="store_false", help="raw generator weights")
    e.add_argument("--seed", type=int, default=0)

    sub.add_parser("presets", help="list the configs shipped with gantrain")
    return p


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


def cmd_train(args: argparse.Namespace) -> int:
    from ..config.schema import load_config
    from ..recipes.gan.run import (
        CONFIG_FILE,
        build_run,
        check_run_dir_free,
        default_run_dir,
        prepare_run_dir,
    )
    from ..recipes.resume import check_resumable

    if args.resume:
        run_dir = Path(args.resume)
        config = load_config(str(run_dir / CONFIG_FILE), args.overrides)
        changed = check_resumable(run_dir, config)
        run = build_run(config, run_dir)
        start = run.restore(run_dir)
        run.writer.write({"iteration": start, "kind": "resume", "changed": changed})
        print(f"resuming {run_dir} at iteration {start}"
              + (f" (changed: {', '.join(changed)})" if changed else ""), file=sys.stderr)
    else:
        config = load_config(args.config, args.overrides)
        run_dir = Path(args.runs_dir) / args.name if args.name else default_run_dir(
            config, args.runs_dir)
        check_run_dir_free(run_dir, overwrite=args.overwrite)
        run = build_run(config, run_dir)  # validates everything before anything is written
        prepare_run_dir(run_dir, run.config, overwrite=args.overwrite)
        print(f"run folder: {run_dir}", file=sys.stderr)
    loop = run.train()
    print(f"stopped after {loop.iteration} iterations ({loop.stop_reason}), "
          f"{loop.elapsed:.1f} s; outputs in {run_dir}")
    if run.last_report is not None:
        print(f"final evaluation: {run.last_report}")
    return 0


def cmd_sample(args: argparse.Namespace) -> int:
    import numpy as np

    from ..blocks import latents
    from ..recipes.gan.run import load_sampler
    from ..viz.images import save_grid, save_images

    if args.n < 1:
        raise ValueError(f"--n must be >= 1, got {args.n}")
    other = _task_sample(args)
    if other is not None:
        print(other)
        return 0
    sampler, config = load_sampler(args.run, ema=args.ema)
    rng = np.random.default_rng(args.seed)
    z_dim, classes = config.gan.z_dim, config.gan.num_classes
    if args.interpolate:
        z = latents.interpolation(rng, args.n, args.interpolate, z_dim)
    else:
        z = latents.normal(rng, args.n, z_dim, args.truncation)
    y = latents.labels(rng, len(z), classes, args.label)
    samples = sampler(z, y)
    written = []
    is_image = samples.ndim == 4
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        np.save(args.out, samples)
        written.append(args.out)
    if is_image and args.out_dir:
        save_images(args.out_dir, samples)
        written.append(f"{args.out_dir}/")
    if is_image and (args.grid or not written):
        cols = args.interpolate or None
        written.append(str(save_grid(args.grid or "samples.png", samples, cols, scale=2)))
    if not written:
        np.save("samples.npy", samples)
        written.append("samples.npy")
    print(f"wrote {len(samples)} samples of shape {samples.shape[1:]} to {', '.join(written)}")
    return 0


def _task_sample(args: argparse.Namespace) -> str | None:
    """``sample`` for a run of another task than "gan" (translation, reconstructions...)."""
    from ..config.schema import Config, ConfigError, from_dict
    from ..engine import checkpoint
    from ..recipes.gan.run import run_class

    ckpt = checkpoint.resolve(args.run)
    config = from_dict(Config, checkpoint.read_state(ckpt)["config"], source=str(ckpt))
    if config.task == "gan":
        if args.input or args.direction:
            raise ConfigError(f"--input/--direction translate images with a cyclegan run; "
                              f"{ckpt} is a GAN run")
        return None
    return run_class(config).sample_command(ckpt, config, args)


def cmd_eval(args: argparse.Namespace) -> int:

    from ..metrics.classifier import evaluate_run

    metrics = tuple(m.strip() for m in args.metrics.split(",") if m.strip())
    report = evaluate_run(args.run, args.classifier, args.n, metrics, args.ema, args.seed)
    print(report.pop("table"))
    print(f"wrote {report['path']}")
    return 0


def cmd_train_classifier(argv: list[str]) -> int:
    from ..metrics.classifier import classifier_data, train_classifier

    args = _classifier_parser().parse_args(argv)
    train, test = classifier_data(args.data, args.root, args.n, args.seed)
    out = args.out or f"classifiers/{args.data}"
    result = train_classifier(train, test, out, epochs=args.epochs, seed=args.seed)
    print(f"test accuracy {100 * result.accuracy:.2f}% on {len(test)} {test.name} images; "
          f"saved to {result.path}")
    return 0


def cmd_presets(args: argparse.Namespace) -> int:
    from ..config.schema import presets

    print("\n".join(presets()))
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:2] == ["eval", "train-classifier"]:
        args = argparse.Namespace(command="eval train-classifier", rest=argv[2:])
    else:
        args = _parser().parse_args(argv)
    from ..config.schema import ConfigError
    from ..engine.checkpoint import CheckpointError
    from ..engine.guard import DivergenceError

    commands = {"train": cmd_train, "sample": cmd_sample, "presets": cmd_presets,
                "eval": cmd_eval}
    try:
        if args.command == "eval train-classifier":
            return cmd_train_classifier(args.rest)
        return commands[args.command](args)
    except (ConfigError, CheckpointError, ValueError, FileNotFoundError) as e:
        print(f"gantrain {args.command}: error: {e}", file=sys.stderr)
        return 2
    except DivergenceError as e:
        print(f"gantrain {args.command}: stopped: {e}", file=sys.stderr)
        return 3


if __name__ == "__main__":
    sys.exit(main())
