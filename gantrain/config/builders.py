"""Config sections -> engine objects (optimizers, learning-rate schedules, transforms).

The only place where config strings become types; everything past here takes objects.
"""

from __future__ import annotations

from ..blocks.penalties import R1, R2, ClipWeights, GradientPenalty, Penalty
from ..engine.optim import SGD, Adam, CosineDecay, LinearDecay, LRSchedule, Optimizer, RMSProp
from ..engine.player import PostUpdate
from ..engine.transforms import ClipByGlobalNorm, ClipByValue, GaussianNoise, GradientTransform
from .schema import OptimConfig
from .strict import ConfigError

OPTIMIZERS = ("adam", "sgd", "rmsprop")
SCHEDULES = ("constant", "linear_decay", "cosine")
PENALTIES = {"gp": GradientPenalty, "r1": R1, "r2": R2}  # called with (weight or gamma, every)


def lr_schedule_from_config(c: OptimConfig, where: str) -> LRSchedule | None:
    """The schedule of ``[where]`` over ``decay_steps`` updates (None: constant)."""
    total = max(c.decay_steps, c.decay_start + 1)
    try:
        if c.lr_schedule == "constant":
            return None
        if c.lr_schedule == "linear_decay":
            return LinearDecay(c.decay_start, total)
        if c.lr_schedule == "cosine":
            return CosineDecay(total)
    except ValueError as e:
        raise ConfigError(f"[{where}]: {e}") from None
    raise ConfigError(f"{where}.lr_schedule: {c.lr_schedule!r} is not one of {SCHEDULES}")


def optimizer_from_config(c: OptimConfig, where: str) -> Optimizer:
    """The optimizer spec of one player. Its learning-rate schedule is set by the run once the
    phase list tells how many updates the player makes (``Run.fit_lr_schedules``)."""
    lr_schedule_from_config(c, where)  # an unknown schedule name stops here, before building
    try:
        if c.name == "adam":
            if len(c.betas) != 2:
                raise ValueError(f"betas must have two values, got {c.betas}")
            return Adam(c.lr, None, tuple(c.betas), c.eps, c.weight_decay)
        if c.name == "sgd":
            return SGD(c.lr, None, c.momentum)
        if c.name == "rmsprop":
            return RMSProp(c.lr, None, eps=c.eps)
    except ValueError as e:
        raise ConfigError(f"[{where}]: {e}") from None
    raise ConfigError(f"{where}.name: {c.name!r} is not one of {OPTIMIZERS}")


def transforms_from_config(c: OptimConfig, seed: int) -> list[GradientTransform]:
    """Clip by global norm, then clip by value, then add noise, as configured."""
    out: list[GradientTransform] = []
    if c.clip_norm is not None:
        out.append(ClipByGlobalNorm(c.clip_norm))
    if c.clip_value is not None:
        out.append(ClipByValue(c.clip_value))
    if c.grad_noise is not None:
        out.append(GaussianNoise(eta=c.grad_noise, seed=seed))
    return out


def weight_clip(limit: float | None) -> list[PostUpdate]:
    """The original WGAN's weight clipping as a post-update, when ``limit`` is set."""
    return [ClipWeights(limit)] if limit is not None else []


def penalty_from_config(name: str, weight: float, every: int = 1, *,
                        allowed: tuple[str, ...] = tuple(PENALTIES),
                        where: str = "gan") -> Penalty | None:
    """The penalty ``[where].penalty`` names (None for ``"none"``), with its weight and
    schedule; ``allowed`` is what the recipe can run."""
    if name == "none":
        return None
    if name not in allowed:
        raise ConfigError(f"{where}.penalty = {name!r}; allowed: none, {', '.join(allowed)}")
    try:
        return PENALTIES[name](weight, every)
    except ValueError as e:
        raise ConfigError(f"[{where}] penalty: {e}") from None
