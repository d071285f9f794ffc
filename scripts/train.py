"""Train from a config file or preset: ``python scripts/train.py [CONFIG] [--set k=v ...]``.

The same as ``gantrain train``; see ``gantrain train --help``.
"""

import sys

from gantrain.cli.main import main

if __name__ == "__main__":
    sys.exit(main(["train", *sys.argv[1:]]))
