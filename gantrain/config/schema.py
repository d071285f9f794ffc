"""The config sections every recipe shares, and reading TOML files, presets and ``--set``.

A recipe's config is a dataclass that subclasses :class:`RunConfig` and adds exactly the
sections it reads (see ``gantrain/recipes/<recipe>/config.py``); the strict reader
(:mod:`gantrain.config.strict`) refuses any key that dataclass does not declare, so a key a
recipe would ignore is an error, not a silent no-op.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Union

from .strict import ConfigError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


@dataclass
class ModelConfig:
    """A network by import path (``gantrain.models.dcgan:Generator`` or ``my_nets.py:G``)
    and the keyword arguments of its constructor."""

    model: str
    args: dict[str, Any] = field(default_factory=dict)


@dataclass
class DataConfig:
    """``dataset`` names a reader (see ``gantrain.data.registry``); ``args`` are its kwargs."""

    dataset: str
    args: dict[str, Any] = field(default_factory=dict)
    batch_size: int = 64


@dataclass
class OptimConfig:
    """One player's optimizer, learning-rate schedule and gradient transforms."""

    name: str = "adam"  # adam | sgd | rmsprop
    lr: float = 2e-4
    betas: list[float] = field(default_factory=lambda: [0.5, 0.999])
    eps: float = 1e-8
    weight_decay: float = 0.0
    momentum: float = 0.0
    lr_schedule: str = "constant"  # constant | linear_decay | cosine
    decay_start: int = 0  # linear_decay: updates before the decay begins
    decay_steps: int = 0  # updates over which the schedule runs; 0: derived from the schedule
    clip_norm: Union[float, None] = None
    clip_value: Union[float, None] = None
    grad_noise: Union[float, None] = None  # eta of GaussianNoise
    accumulate: int = 1


@dataclass
class TwoPlayerOptim:
    """Optimizers of a generator side (G, with ALI's encoder, with CycleGAN's second G) and a
    discriminator side."""

    generator: OptimConfig = field(default_factory=OptimConfig)
    discriminator: OptimConfig = field(default_factory=OptimConfig)


@dataclass
class TrainConfig:
    """Length, logging and checkpointing of any run."""

    steps: int = 10000
    time_budget: Union[float, None] = None  # seconds
    log_every: int = 100
    sample_every: int = 1000  # the recipe's periodic evaluation (samples, returns, ...)
    checkpoint_every: int = 1000
    keep_checkpoints: int = 3
    progress: bool = True
    tensorboard: bool = False  # also write TensorBoard event files (gantrain[tensorboard])
    # iterations compiled into one call (gantrain.engine.fused): fewer graph launches for small
    # models; the same numbers. Every interval must be a multiple of it.
    iterations_per_call: int = 1


@dataclass
class GridTrainConfig(TrainConfig):
    """``[train]`` of a recipe that draws image grids."""

    grid: int = 64  # images in the periodic sample grid (image data)


@dataclass
class SampleTrainConfig(GridTrainConfig):
    """``[train]`` of a generator recipe: also how many samples a 2D evaluation draws."""

    samples: int = 2500  # samples drawn by the periodic evaluation hook (2D data)


@dataclass
class GuardConfig:
    """Divergence guard (see gantrain.engine.guard): roll back when non-finite updates pile up."""

    every: int = 10  # iterations per non-finite check window
    max_skips: int = 10  # skipped updates in one window that trigger a rollback
    lr_factor: float = 0.5  # learning-rate multiplier at each rollback
    max_rollbacks: int = 3


@dataclass(kw_only=True)
class RunConfig:
    """What every run has. ``task`` names the recipe; each recipe's config subclasses this
    and adds its own sections."""

    name: str
    task: str = "gan"
    seed: int = 0
    device: str = "CPU"
    # MindSpore's graph optimisation level for the player steps and samplers: "O0" (each op as
    # written) or "O1" (its operator fusion; same bits on CPU, no measured gain here)
    jit_level: str = "O0"
    train: TrainConfig = field(default_factory=TrainConfig)
    guard: GuardConfig = field(default_factory=GuardConfig)


# ---------------------------------------------------------------------------------------------
# files, presets, overrides


def presets() -> list[str]:
    """Names of the configs shipped inside the package (``gantrain/configs/*.toml``)."""
    folder = resources.files("gantrain") / "configs"
    return sorted(p.name[:-5] for p in folder.iterdir() if p.name.endswith(".toml"))


def read_config_text(spec: str) -> tuple[str, str]:
    """Return ``(toml_text, source_label)`` for a file path or a preset name."""
    path = Path(spec)
    if path.is_file():
        return path.read_text(), str(path)
    name = path.name[:-5] if path.name.endswith(".toml") else path.name
    if name in presets():
        text = (resources.files("gantrain") / "configs" / f"{name}.toml").read_text()
        return text, f"preset {name}"
    raise ConfigError(
        f"config {spec!r} is neither a file nor a preset; presets: {', '.join(presets())}"
    )


def apply_override(data: dict[str, Any], assignment: str) -> None:
    """Apply ``section.key=value`` to a raw config dict; the value is parsed as TOML when it
    can be (numbers, booleans, lists, quoted strings) and taken as a plain string otherwise."""
    if "=" not in assignment:
        raise ConfigError(f"--set expects section.key=value, got {assignment!r}")
    dotted, raw = assignment.split("=", 1)
    keys = dotted.strip().split(".")
    try:
        value = tomllib.loads(f"v = {raw}")["v"]
    except tomllib.TOMLDecodeError:
        value = raw
    node = data
    for k in keys[:-1]:
        node = node.setdefault(k, {})
        if not isinstance(node, dict):
            raise ConfigError(f"--set {dotted}: {k!r} is not a table")
    node[keys[-1]] = value


def read_config(spec: str, overrides: list[str] | tuple[str, ...] = ()) -> tuple[dict, str]:
    """The raw data of a config file or preset with ``--set`` overrides applied, and its
    source label; the recipe named by ``task`` checks it (``gantrain.recipes.load_config``)."""
    text, source = read_config_text(spec)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{source}: not valid TOML: {e}") from None
    for assignment in overrides:
        apply_override(data, assignment)
    return data, source
