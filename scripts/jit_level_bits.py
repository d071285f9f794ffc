"""Train a preset at jit_level O0 and at O1, side by side, and list the parameters that differ.

    python scripts/jit_level_bits.py gan_2d_grid [--steps 200] [--set KEY=VALUE ...]

Prints ``<preset>: N of M parameters differ``; 0 means O1's operator fusion computed O0's
bits (docs/mindspore-notes.md, item 34). Runs write to runs/jit-level-bits-<preset>-<level>/.
"""

from __future__ import annotations

import argparse
import hashlib

import gantrain  # noqa: F401  (sets MindSpore's environment before it loads)
from gantrain.recipes.registry import build_run, load_config
from gantrain.recipes.rundir import prepare_run_dir


def parameter_hashes(preset: str, level: str, steps: int, overrides: list[str]) -> dict:
    config = load_config(preset, [*overrides, f'jit_level="{level}"', f"train.steps={steps}",
                                  "train.progress=false", f"train.sample_every={steps}",
                                  f"train.checkpoint_every={steps}"])
    run = build_run(config, f"runs/jit-level-bits-{preset}-{level}")
    prepare_run_dir(run.dir, run.config, overwrite=True)
    run.train()
    return {f"{player}/{p.name}": hashlib.sha256(p.asnumpy().tobytes()).hexdigest()
            for player, params in run.checkpoint_state().items() for p in params}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("preset")
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--set", dest="overrides", action="append", default=[])
    args = parser.parse_args()
    plain, fused = (parameter_hashes(args.preset, level, args.steps, args.overrides)
                    for level in ("O0", "O1"))
    differ = sorted(k for k in plain if plain[k] != fused.get(k))
    print(f"{args.preset}: {len(differ)} of {len(plain)} parameters differ"
          + (f" ({', '.join(differ[:5])}...)" if differ else ""))


if __name__ == "__main__":
    main()
