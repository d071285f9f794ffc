"""``gantrain data prepare SRC --size N --out NAME`` and ``gantrain data info NAME``: build a
prepared (memory-mapped uint8) dataset explicitly, with a progress bar, and describe one.

Neither loads MindSpore. Training with ``dataset = "folder"`` prepares the same cache on its
own; ``prepare`` is the explicit step (and ``dataset = "prepared", args = {name = NAME}``
trains from a named one).
"""

from __future__ import annotations

import argparse
import sys


def add_parser(sub: argparse._SubParsersAction) -> None:
    d = sub.add_parser("data", help="prepare an image folder or ZIP into the dataset cache, or "
                       "describe a prepared dataset")
    cmds = d.add_subparsers(dest="data_command", required=True, metavar="SUBCOMMAND")
    p = cmds.add_parser("prepare", help="decode, crop and resize once into a memory-mapped "
                        "uint8 cache (continues an interrupted build)")
    p.add_argument("source", help="image folder (searched recursively; class subfolders "
                   "become labels) or a StyleGAN dataset_tool .zip")
    p.add_argument("--size", type=int, nargs="+", required=True, metavar="N",
                   help="output side N, or height width")
    p.add_argument("--channels", type=int, default=3, choices=(1, 3))
    p.add_argument("--crop", type=int, nargs="+", metavar="N",
                   help="centre crop (side, or height width, in source pixels) before "
                        "resizing, e.g. 108 for CelebA's faces")
    p.add_argument("--out", help="name under the cache folder, or a path (default: derived "
                   "from the source and its key)")
    p.add_argument("--workers", type=int, help="decoding processes (default: CPU count, max 8)")
    p.add_argument("--skip-bad", action="store_true",
                   help="skip unreadable images (counted in the header) instead of stopping")
    p.add_argument("--labelled", choices=("auto", "yes", "no"), default="auto",
                   help="folder labels from class subfolders (default: auto)")
    p.add_argument("--cache-dir", help="cache folder (default: $GANTRAIN_DATA_CACHE or "
                   "~/.cache/gantrain/data)")
    p.add_argument("--no-progress", dest="progress", action="store_false")
    i = cmds.add_parser("info", help="count, size, channels, labels and bytes of a prepared "
                        "dataset")
    i.add_argument("name", help="name under the cache folder, or a path")
    i.add_argument("--cache-dir", help="cache folder (as for prepare)")


def run(args: argparse.Namespace) -> int:
    from ..data.prepare import Target, prepare
    from ..data.prepared import PreparedImages, resolve_prepared
    from ..data.sources import open_source

    if args.data_command == "info":
        print(describe(PreparedImages(resolve_prepared(args.name, args.cache_dir))))
        return 0
    labelled = {"auto": None, "yes": True, "no": False}[args.labelled]
    target = Target(_pair(args.size, "--size"), args.channels,
                    None if args.crop is None else _pair(args.crop, "--crop"), args.skip_bad)
    folder = prepare(open_source(args.source, labelled), target, cache_dir=args.cache_dir,
                     name=args.out, workers=args.workers, progress=args.progress)
    print(describe(PreparedImages(folder)))
    return 0


def describe(data) -> str:
    """The lines ``gantrain data info`` prints."""
    import numpy as np

    h = data.header
    lines = [f"prepared dataset {data.folder}",
             f"  source     {h['source']} ({h['source_kind']})",
             f"  images     {h['count']}" + (f" ({h['skipped']} unreadable skipped)"
                                              if h["skipped"] else ""),
             f"  size       {h['size'][0]}x{h['size'][1]}, {h['channels']} channel(s)"
             + (f", centre crop {h['crop'][0]}x{h['crop'][1]}" if h["crop"] else ""),
             f"  bytes      {data.nbytes} ({data.nbytes / 2**20:.1f} MiB uint8)"]
    if data.y is None:
        lines.append("  labels     none")
    else:
        counts = np.bincount(data.y, minlength=len(data.classes))
        shown = ", ".join(f"{c}: {n}" for c, n in list(zip(data.classes, counts))[:10])
        more = f", ... ({len(data.classes)} classes)" if len(data.classes) > 10 else ""
        lines.append(f"  labels     {len(data.classes)} classes ({shown}{more})")
    lines.append(f"  format     {h['format_version']} (gantrain {h['gantrain_version']}), "
                 f"key {h['key'][:16]}")
    return "\n".join(lines)


def _pair(values: list[int], flag: str) -> tuple[int, int]:
    if len(values) not in (1, 2) or min(values) < 1:
        print(f"gantrain data: error: {flag} takes one or two positive ints", file=sys.stderr)
        raise SystemExit(2)
    return (values[0], values[0]) if len(values) == 1 else (values[0], values[1])
