"""``gantrain sample RUN``: whatever the run's recipe draws (samples, translations,
reconstructions, greedy episodes), written by one helper."""

from __future__ import annotations

import argparse

FLAGS = {"n": "--n", "seed": "--seed", "ema": "--no-ema", "out": "--out", "grid": "--grid",
         "out_dir": "--out-dir", "label": "--class", "truncation": "--truncation",
         "interpolate": "--interpolate", "input": "--input", "direction": "--direction",
         "drs": "--drs", "dot": "--dot", "mh": "--mh"}


def run(args: argparse.Namespace) -> int:
    from ..config.strict import ConfigError
    from ..engine import checkpoint, runtime
    from ..recipes.registry import get_recipe
    from ..recipes.rundir import checkpoint_config
    from ..recipes.sampling import options_for, write_samples

    ckpt = checkpoint.resolve(args.run)
    config = checkpoint_config(ckpt)
    recipe = get_recipe(config.task)
    if recipe.sample is None:
        raise ConfigError(f"{ckpt} is a {config.task!r} run, which has nothing to sample")
    given = {name: getattr(args, name) for name in FLAGS}
    options = options_for(recipe.sample_options, given, config.task, FLAGS)
    options.check(config)
    runtime.setup(config.device, config.seed, config.jit_level)
    drawn = recipe.sample(ckpt, config, options)
    written = write_samples(drawn, options)
    print(drawn.summary + (f"; wrote {', '.join(written)}" if written else ""))
    return 0
