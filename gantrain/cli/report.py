"""``gantrain report RUN [RUN ...]``: write the HTML report of one run or several overlaid."""

from __future__ import annotations

import argparse


def run(args: argparse.Namespace) -> int:
    from ..viz.report import build_report, default_out

    out = args.out if args.out else default_out(args.runs)
    path = build_report(args.runs, out)
    print(f"wrote {path} ({len(args.runs)} run{'s' if len(args.runs) > 1 else ''}); "
          "open it in a browser")
    return 0
