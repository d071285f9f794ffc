"""Strict TOML configs: an unknown key or a value of the wrong type is an error that names the
key, the file and what was expected. ``--set section.key=value`` overrides apply before checks."""

from __future__ import annotations

import difflib
import sys
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Union

from .strict import ConfigError, dumps_toml, from_dict, to_dict  # noqa: F401  (re-exported)

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


@dataclass
class ModelConfig:
    """A network by import path (``models.dcgan:Generator`` or ``my_nets.py:G``) and kwargs."""

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
    decay_steps: int = 0  # updates over which the schedule runs; 0: set from train.steps
    clip_norm: Union[float, None] = None
    clip_value: Union[float, None] = None
    grad_noise: Union[float, None] = None  # eta of GaussianNoise
    accumulate: int = 1


@dataclass
class OptimPair:
    """Optimizers by player: a GAN's generator (with ALI's encoder) and discriminator (both
    CycleGAN discriminators), or an actor-critic's actor and critic."""

    generator: OptimConfig = field(default_factory=OptimConfig)
    discriminator: OptimConfig = field(default_factory=OptimConfig)
    actor: Union[OptimConfig, None] = None
    critic: Union[OptimConfig, None] = None


@dataclass
class GANConfig:
    loss: str = "nonsaturating"
    z_dim: int = 64
    n_critic: int = 1
    penalty: str = "none"  # none | gp | r1 | r2
    penalty_weight: float = 10.0
    penalty_every: int = 1
    weight_clip: Union[float, None] = None
    num_classes: int = 0  # > 0: conditional G(z, y) and D(x, y)
    aux_weight: float = 0.0  # > 0: ACGAN auxiliary classifier loss (D needs aux_classifier)
    pack: int = 1  # PacGAN: D sees `pack` samples at once (its input has pack x channels)
    augment: str = ""  # DiffAugment policy, e.g. "color,translation,cutout"
    ema_decay: Union[float, None] = None  # EMA of G's weights; samples use it when set


@dataclass
class TrainConfig:
    steps: int = 10000
    time_budget: Union[float, None] = None  # seconds
    log_every: int = 100
    sample_every: int = 1000
    samples: int = 2500  # samples drawn by the periodic evaluation hook (2D data)
    grid: int = 64  # images in the periodic sample grid (image data)
    checkpoint_every: int = 1000
    keep_checkpoints: int = 3
    eval_every: int = 0  # > 0: quality metrics every N iterations (needs eval_classifier)
    eval_classifier: str = ""  # classifier folder from `gantrain eval train-classifier`
    eval_samples: int = 1000  # generated samples per periodic evaluation
    keep_best: str = ""  # fd | kid | precision | recall | density | coverage: keep checkpoints/best
    progress: bool = True


@dataclass
class GuardConfig:
    """Divergence guard and failure-sign warnings (see gantrain.guard)."""

    every: int = 10  # iterations per non-finite check window
    max_skips: int = 10  # skipped updates in one window that trigger a rollback
    lr_factor: float = 0.5  # learning-rate multiplier at each rollback
    max_rollbacks: int = 3
    d_loss_floor: float = 0.01  # warn when D's loss stays below this ...
    d_patience: int = 5  # ... for this many logging checks
    grad_norm_limit: float = 1000.0  # warn when a gradient norm exceeds this
    diversity_after: int = 500  # no diversity warning before this iteration (G starts constant)


@dataclass
class CycleGANConfig:
    """CycleGAN's loss weights and history pool (Zhu et al. 2017, Sec. 3-4)."""

    cycle_weight: float = 10.0  # lambda of the cycle-consistency L1 loss
    identity_weight: float = 0.5  # times cycle_weight: G_AB(b) ~ b, G_BA(a) ~ a
    pool_size: int = 50  # generated images D sees from history (0: only the newest)
    split_discriminators: bool = False  # D_A and D_B as two players (own optimizer state)


@dataclass
class RLConfig:
    """Advantage actor-critic on a numpy environment (see gantrain.rl)."""

    env: str = "cartpole"
    envs: int = 16  # environments stepped in parallel
    rollout: int = 32  # steps per environment per iteration (n-step returns)
    gamma: float = 0.99
    entropy_weight: float = 0.01
    normalize_advantages: bool = False  # scale each rollout's advantages to mean 0, std 1
    max_episode_steps: int = 500
    eval_episodes: int = 10  # greedy episodes at each evaluation
    stop_at_return: Union[float, None] = None  # stop once the greedy mean return reaches this


TASKS = ("gan", "cyclegan", "ali", "actor_critic")
# The model and section keys each task needs; the others must be absent.
TASK_SECTIONS = {
    "gan": ("data", "generator", "discriminator"),
    "cyclegan": ("data", "generator", "discriminator", "cyclegan"),
    "ali": ("data", "generator", "discriminator", "encoder"),
    "actor_critic": ("actor", "critic", "rl"),
}
OPTIONAL_SECTIONS = ("data", "generator", "discriminator", "encoder", "actor", "critic",
                     "cyclegan", "rl")


@dataclass
class Config:
    """A whole run. ``task`` picks the recipe; each task uses the sections in TASK_SECTIONS
    (CycleGAN's G_AB/G_BA share [generator], D_A/D_B share [discriminator])."""

    name: str
    task: str = "gan"  # gan | cyclegan | ali | actor_critic
    data: Union[DataConfig, None] = None
    generator: Union[ModelConfig, None] = None
    discriminator: Union[ModelConfig, None] = None
    encoder: Union[ModelConfig, None] = None  # ALI/BiGAN: x -> z
    actor: Union[ModelConfig, None] = None
    critic: Union[ModelConfig, None] = None
    cyclegan: Union[CycleGANConfig, None] = None
    rl: Union[RLConfig, None] = None
    gan: GANConfig = field(default_factory=GANConfig)
    optim: OptimPair = field(default_factory=OptimPair)
    train: TrainConfig = field(default_factory=TrainConfig)
    guard: GuardConfig = field(default_factory=GuardConfig)
    seed: int = 0
    device: str = "CPU"


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


def load_config(spec: str, overrides: list[str] | tuple[str, ...] = ()) -> Config:
    """Load a config file or preset, apply ``--set`` overrides, and check it strictly."""
    text, source = read_config_text(spec)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{source}: not valid TOML: {e}") from None
    for assignment in overrides:
        apply_override(data, assignment)
    return check_task(from_dict(Config, data, source=source), source)


def check_task(config: Config, source: str = "config") -> Config:
    """Every section the task needs is there and none that it would ignore."""
    if config.task not in TASKS:
        close = difflib.get_close_matches(config.task, TASKS, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ConfigError(f"{source}: task {config.task!r} is not one of {', '.join(TASKS)}{hint}")
    wanted = TASK_SECTIONS[config.task]
    for section in OPTIONAL_SECTIONS:
        present = getattr(config, section) is not None
        if section in wanted and not present:
            raise ConfigError(f"{source}: task {config.task!r} needs a [{section}] section")
        if present and section not in wanted:
            users = [t for t, s in TASK_SECTIONS.items() if section in s]
            raise ConfigError(f"{source}: [{section}] is not used by task {config.task!r} "
                              f"(it belongs to {', '.join(users)}); remove it")
    uses_ac = config.task == "actor_critic"
    for name in ("actor", "critic"):
        if getattr(config.optim, name) is not None and not uses_ac:
            raise ConfigError(f"{source}: [optim.{name}] is only used by task 'actor_critic'")
        if uses_ac and getattr(config.optim, name) is None:
            setattr(config.optim, name, OptimConfig())
    return config
