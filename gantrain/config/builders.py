"""Config sections -> engine objects (optimizers, transforms, post-update hooks).

The only place where config strings become types; everything past here takes objects.
"""

from __future__ import annotations

from ..blocks.penalties import ClipWeights
from ..engine.optim import SGD, Adam, CosineDecay, LinearDecay, LRSchedule, Optimizer, RMSProp
from ..engine.player import PostUpdate
from ..engine.transforms import ClipByGlobalNorm, ClipByValue, GaussianNoise, GradientTransform
from .schema import ConfigError, GANConfig, OptimConfig

OPTIMIZERS = ("adam", "sgd", "rmsprop")
SCHEDULES = ("constant", "linear_decay", "cosine")


def schedule_from_config(c: OptimConfig, total: int, where: str) -> LRSchedule | None:
    if c.lr_schedule == "constant":
        return None
    if c.lr_schedule == "linear_decay":
        return LinearDecay(c.decay_start, total)
    if c.lr_schedule == "cosine":
        return CosineDecay(total)
    raise ConfigError(f"{where}.lr_schedule: {c.lr_schedule!r} is not one of {SCHEDULES}")


def optimizer_from_config(c: OptimConfig, where: str) -> Optimizer:
    """Build the optimizer spec of one player (``decay_steps`` must be resolved)."""
    schedule = schedule_from_config(c, max(c.decay_steps, c.decay_start + 1), where)
    try:
        if c.name == "adam":
            if len(c.betas) != 2:
                raise ValueError(f"betas must have two values, got {c.betas}")
            return Adam(c.lr, schedule, tuple(c.betas), c.eps, c.weight_decay)
        if c.name == "sgd":
            return SGD(c.lr, schedule, c.momentum)
        if c.name == "rmsprop":
            return RMSProp(c.lr, schedule, eps=c.eps)
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


def post_updates_from_config(c: GANConfig) -> list[PostUpdate]:
    return [ClipWeights(c.weight_clip)] if c.weight_clip is not None else []
