"""gantrain: GANs and other multi-model training on MindSpore 2.x.

Players with their own jitted steps, an alternating schedule, composable gradient transforms and
one generic loop. Importing gantrain first sets MindSpore's environment defaults (see
:mod:`gantrain.runtime`); the public names below load lazily so the CLI starts fast.
"""

from __future__ import annotations

import importlib
from typing import Any

from .runtime import prepare_environment

prepare_environment()  # before anything below imports mindspore

__version__ = "0.1.0"

_EXPORTS = {
    "Player": "player", "PostUpdate": "player", "Objective": "player",
    "Phase": "schedule", "Schedule": "schedule",
    "Loop": "loop", "Hook": "loop",
    "StepContext": "context",
    "MetricsLogger": "hooks", "Periodic": "hooks", "JsonlWriter": "hooks",
    "GradientTransform": "transforms", "Chain": "transforms", "ClipByGlobalNorm": "transforms",
    "ClipByValue": "transforms", "Scale": "transforms", "GaussianNoise": "transforms",
    "Adam": "optim", "SGD": "optim", "RMSProp": "optim", "LinearDecay": "optim",
    "CosineDecay": "optim",
    "GANLoss": "losses", "get_loss": "losses",
    "make_gradient_penalty": "penalties", "make_r1": "penalties", "ClipWeights": "penalties",
    "GAN": "gan", "Penalty": "gan", "build_gan": "gan",
    "Sampler": "sampling",
    "Config": "config", "ConfigError": "config", "load_config": "config",
    "Run": "run", "load_sampler": "run", "build_run": "run", "BaseRun": "runbase",
    "setup": "runtime",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        value = getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'gantrain' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(list(globals()) + __all__)
