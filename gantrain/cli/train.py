"""``gantrain train`` and ``gantrain presets``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def run(args: argparse.Namespace) -> int:
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
