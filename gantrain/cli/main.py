"""The ``gantrain`` command: parse the command line and hand over to one command module.

Nothing heavy is imported here, so ``gantrain --help`` answers at once; each command imports
what it needs when it runs.
"""

from __future__ import annotations

import argparse
import sys

from . import data

DEFAULT_PRESET = "dcgan_digits"
EVAL_COMMANDS = ("train-classifier", "stats", "convert-weights")  # parsed by cli/evaluate.py
DESCRIPTION = """\
Train GANs and other multi-model setups on MindSpore: players with their own compiled steps,
an alternating schedule, exact resume. Runs are written under runs/ in the current folder."""
EXAMPLES = """\
examples:
  gantrain train                                  # the default preset (DCGAN on embedded digits)
  gantrain train gan_2d_ring --set train.steps=2000
  gantrain train --resume runs/<run>              # continue from the latest checkpoint
  gantrain train dcgan_digits --workers 2         # data parallel, 2 processes under msrun
  gantrain sample runs/<run> --n 64 --grid grid.png
  gantrain eval runs/<run> --classifier classifiers/digits
  gantrain eval runs/<run> --features inception --weights pt_inception-2015-12-05-6726825d.pth
  gantrain report runs/<run>                      # runs/<run>/report.html (also written live)
  gantrain report runs/a runs/b --out ab.html     # several runs overlaid
  gantrain presets
  gantrain data prepare ~/data/celeba --size 64 --crop 108 --out celeba64
  gantrain data info celeba64

A run folder's config names the networks it builds; a model given as a file (nets.py:G) is
imported and executed: only sample, evaluate or resume run folders you trust."""


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="gantrain", description=DESCRIPTION, epilog=EXAMPLES,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    t = sub.add_parser("train", help="train from a config file or preset, or resume a run")
    t.add_argument("config", nargs="?", default=DEFAULT_PRESET,
                   help=f"TOML file or preset name (default: {DEFAULT_PRESET})")
    t.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                   help="override a config value, e.g. --set train.steps=500 (repeatable)")
    t.add_argument("--name", help="run folder name under --runs-dir (default: <config>-<time>)")
    t.add_argument("--runs-dir", default="runs", help="parent folder of runs (default: runs)")
    t.add_argument("--resume", metavar="RUN_DIR", help="continue the run in RUN_DIR")
    t.add_argument("--overwrite", action="store_true", help="replace an existing run folder")
    t.add_argument("--workers", type=int, metavar="N",
                   help="data-parallel worker processes on this machine, started with msrun; "
                        "data.batch_size stays the global batch (docs/distributed.md)")
    t.add_argument("--port", type=int, help="with --workers: msrun's port on 127.0.0.1 "
                   "(default: a free one)")
    t.add_argument("--cluster-timeout", type=int, default=120, metavar="SECONDS",
                   help="with --workers: how long workers may take to join (default: 120)")

    s = sub.add_parser("sample", help="draw samples from a trained run or checkpoint")
    s.add_argument("run", help="run folder or checkpoint folder")
    s.add_argument("--n", type=int, default=64, help="number of samples (default: 64)")
    s.add_argument("--out", help="write the raw samples as a .npy file")
    s.add_argument("--grid", help="write image samples as one grid PNG (default: samples.png "
                   "when no other output is given)")
    s.add_argument("--out-dir", help="write image samples as individual PNGs into this folder")
    s.add_argument("--seed", type=int, default=0, help="noise seed (default: 0)")
    s.add_argument("--no-ema", dest="ema", action="store_false", default=None,
                   help="gan, ali: the raw generator weights instead of their EMA")
    s.add_argument("--class", dest="label", type=int, help="gan: class label of a conditional G")
    s.add_argument("--truncation", type=float,
                   help="gan, ali: resample noise entries with |z| above this (with "
                   "--interpolate: the ends of each path)")
    s.add_argument("--interpolate", type=int, metavar="STEPS",
                   help="gan, ali: rows of STEPS images along slerp paths between latents")
    s.add_argument("--drs", type=float, metavar="PERCENTILE",
                   help="gan: discriminator rejection sampling (Azadi et al. 2019) with the "
                   "trained D; gamma at this percentile of F, e.g. 80 (higher keeps fewer)")
    s.add_argument("--dot", type=int, metavar="STEPS",
                   help="gan: move the noise by discriminator optimal transport (Tanaka 2019) "
                   "with the trained D, STEPS gradient steps, e.g. 20")
    s.add_argument("--mh", type=int, metavar="STEPS",
                   help="gan: each sample the end of a Metropolis-Hastings chain (Turner et al. "
                   "2019) with the trained, calibrated D; STEPS proposals per chain, e.g. 20")
    s.add_argument("--input", metavar="FOLDER",
                   help="cyclegan: translate the images in FOLDER (default: test images)")
    s.add_argument("--direction", choices=("AB", "BA"),
                   help="cyclegan: translate A -> B (default) or B -> A")

    e = sub.add_parser("eval", help="score a trained GAN or ALI run (also: eval train-classifier, "
                       "eval stats, eval convert-weights)")
    e.add_argument("run", help="run folder or checkpoint folder")
    e.add_argument("--classifier", help="trained classifier folder (from eval train-classifier)")
    e.add_argument("--features", choices=("classifier", "inception"), default="classifier",
                   help="classifier: gantrain's LeNet (default); inception: the FID Inception "
                        "network, paper-comparable FID/IS/KID/PRDC (needs --weights)")
    e.add_argument("--weights", help="inception: pytorch-fid's .pth or a .ckpt converted from it")
    e.add_argument("--ref", help="inception: real statistics from `gantrain eval stats` "
                   "(default: features of the run's own dataset)")
    e.add_argument("--resize", default="bilinear", help="inception: bilinear (pytorch-fid, "
                   "default) or pil-bicubic (clean-fid)")
    e.add_argument("--batch", type=int, default=50, help="inception: images per batch")
    e.add_argument("--n", type=int, default=10000, help="generated samples (default: 10000)")
    e.add_argument("--metrics", default="fd,kid,prdc,classes",
                   help="comma-separated: fd, kid, prdc, classes, stacked (default: all but "
                        "stacked); inception: fid, is, kid, prdc (default: all)")
    e.add_argument("--no-ema", dest="ema", action="store_false", help="raw generator weights")
    e.add_argument("--drs", type=float, metavar="PERCENTILE",
                   help="score samples kept by discriminator rejection sampling (as gantrain "
                   "sample --drs) instead of the plain generator's")
    e.add_argument("--dot", type=int, metavar="STEPS",
                   help="score samples from noise moved by discriminator optimal transport "
                   "(as gantrain sample --dot)")
    e.add_argument("--mh", type=int, metavar="STEPS",
                   help="score the ends of Metropolis-Hastings chains (as gantrain sample --mh)")
    e.add_argument("--truncation", type=float,
                   help="score samples of noise truncated at this |z| (as gantrain sample "
                   "--truncation)")
    e.add_argument("--seed", type=int, default=0)

    r = sub.add_parser("report", help="write an HTML report (curves, warnings, sample grids) "
                       "of one run or several overlaid")
    r.add_argument("runs", nargs="+", metavar="RUN", help="run folder(s)")
    r.add_argument("--out", help="the HTML file (default: RUN/report.html for one run, "
                   "report.html in the current folder for several)")

    sub.add_parser("presets", help="list the configs shipped with gantrain")
    data.add_parser(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["eval"] and argv[1:2] and argv[1] in EVAL_COMMANDS:
        args = argparse.Namespace(command=f"eval {argv[1]}", rest=argv[2:])
    else:
        args = _parser().parse_args(argv)
    if args.command == "data":  # needs no MindSpore either
        try:
            return data.run(args)
        except (ValueError, OSError) as e:
            print(f"gantrain data: error: {e}", file=sys.stderr)
            return 2
        except KeyboardInterrupt:  # the build said what it kept
            return 130
    if args.command == "report":  # needs no MindSpore: answers in a fraction of a second
        from . import report

        try:
            return report.run(args)
        except (ValueError, OSError) as e:
            print(f"gantrain report: error: {e}", file=sys.stderr)
            return 2
    from ..config.strict import ConfigError
    from ..engine.checkpoint import CheckpointError
    from ..engine.guard import DivergenceError
    from . import evaluate, sample, train

    commands = {"train": train.run, "sample": sample.run, "presets": train.list_presets,
                "eval": evaluate.run, "eval train-classifier": evaluate.train_classifier,
                "eval stats": evaluate.stats, "eval convert-weights": evaluate.convert_weights}
    try:
        return commands[args.command](args)
    except (ConfigError, CheckpointError, ValueError, FileNotFoundError) as e:
        print(f"gantrain {args.command}: error: {e}", file=sys.stderr)
        return 2
    except DivergenceError as e:
        print(f"gantrain {args.command}: stopped: {e}", file=sys.stderr)
        return 3


if __name__ == "__main__":
    sys.exit(main())
