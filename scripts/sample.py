"""Sample from a trained run: ``python scripts/sample.py RUN_DIR [--n 64] [--grid g.png] ...``.

The same as ``gantrain sample``; see ``gantrain sample --help``.
"""

import sys

from gantrain.cli.main import main

if __name__ == "__main__":
    sys.exit(main(["sample", *sys.argv[1:]]))
