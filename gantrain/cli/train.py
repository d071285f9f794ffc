"""``gantrain train`` and ``gantrain presets``."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path


def run(args: argparse.Namespace) -> int:
    from ..engine import dist

    workers = getattr(args, "workers", None)
    if workers is not None and workers < 1:
        raise ValueError(f"--workers {workers}: expected 1 or more worker processes")
    if dist.in_cluster():
        world = _join_cluster(args)
        if workers is not None and workers != world.size:
            raise ValueError(f"--workers {workers} under a launcher that started {world.size} "
                             "workers; leave --workers out when msrun starts gantrain")
    elif workers is not None and workers > 1:
        from .launch import launch

        return launch(args)
    return _train(args, dist.world())


def _join_cluster(args: argparse.Namespace):
    """Join the msrun job before anything else happens: msrun's scheduler process runs this
    program up to ``init()`` too, and must not load data or write files. The device comes from
    the config, which is only read here."""
    from ..engine import dist, runtime
    from ..recipes.registry import load_config, load_stored_config
    from ..recipes.rundir import CONFIG_FILE

    config = (load_stored_config(Path(args.resume) / CONFIG_FILE, args.overrides)
              if args.resume else load_config(args.config, args.overrides))
    runtime.setup(config.device, config.seed, config.jit_level)
    world = dist.init()
    print(f"gantrain worker: rank {world.rank} of {world.size}, pid {os.getpid()}", flush=True)
    return world


def _train(args: argparse.Namespace, world) -> int:
    from ..recipes.registry import build_run, load_config, load_stored_config
    from ..recipes.rundir import (
        CONFIG_FILE,
        check_resumable,
        check_run_dir_free,
        default_run_dir,
        prepare_run_dir,
    )

    if args.resume:
        run_dir = Path(args.resume)
        config = load_stored_config(run_dir / CONFIG_FILE, args.overrides)
        changed = check_resumable(run_dir, config)
        run = build_run(config, run_dir)
        start = run.restore(run_dir)
        run.writer.write({"iteration": start, "kind": "resume", "changed": changed,
                          "workers": world.size})
        print(f"resuming {run_dir} at iteration {start}"
              + (f" (changed: {', '.join(changed)})" if changed else ""), file=sys.stderr)
    else:
        config = load_config(args.config, args.overrides)
        run_dir = Path(args.runs_dir) / args.name if args.name else default_run_dir(
            config, args.runs_dir)
        if world.is_main:
            check_run_dir_free(run_dir, overwrite=args.overwrite)
        run = build_run(config, run_dir)  # validates everything before anything is written
        if world.is_main:  # the other ranks write nothing in the run folder
            prepare_run_dir(run_dir, run.config, overwrite=args.overwrite,
                            keep_logs=world.size > 1)
            print(f"run folder: {run_dir}", file=sys.stderr)
    loop = run.train()
    if not world.is_main:
        print(f"gantrain worker: rank {world.rank} finished at iteration {loop.iteration} "
              f"({loop.stop_reason})")
        return 0
    report = f"; report: {run.report_path}" if run.report_path is not None else ""
    print(f"stopped after {loop.iteration} iterations ({loop.stop_reason}), "
          f"{loop.elapsed:.1f} s; outputs in {run_dir}{report}")
    if run.last_report is not None:
        print(f"final evaluation: {run.last_report}")
    return 0


def list_presets(args: argparse.Namespace) -> int:
    from ..config.schema import presets

    print("\n".join(presets()))
    return 0
