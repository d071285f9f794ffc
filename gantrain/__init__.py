"""gantrain: GANs and other multi-model training on MindSpore 2.x.

Players with their own jitted steps, an alternating schedule, composable gradient transforms and
one generic loop. Importing gantrain first sets MindSpore's environment defaults (see
:mod:`gantrain.runtime`); the public names below load lazily so the CLI starts fast.
"""

from __future__ import annotations

import importlib
from typing import Any

from .engine.runtime import prepare_environment

prepare_environment()  # before anything below imports mindspore

__version__ = "0.1.0"

_EXPORTS = {
    "Player": "engine.player", "PostUpdate": "engine.player", "Objective": "engine.player",
    "Phase": "engine.schedule", "Schedule": "engine.schedule",
    "Loop": "engine.loop", "Hook": "engine.loop",
    "StepContext": "engine.context",
    "MetricsLogger": "engine.hooks", "Periodic": "engine.hooks", "JsonlWriter": "engine.hooks",
    "GradientTransform": "engine.transforms", "Chain": "engine.transforms",
    "ClipByGlobalNorm": "engine.transforms", "ClipByValue": "engine.transforms",
    "Scale": "engine.transforms", "GaussianNoise": "engine.transforms",
    "Adam": "engine.optim", "SGD": "engine.optim", "RMSProp": "engine.optim",
    "LinearDecay": "engine.optim", "CosineDecay": "engine.optim",
    "GANLoss": "blocks.losses", "get_loss": "blocks.losses",
    "make_gradient_penalty": "blocks.penalties", "make_r1": "blocks.penalties",
    "ClipWeights": "blocks.penalties", "GradientPenalty": "blocks.penalties",
    "R1": "blocks.penalties", "R2": "blocks.penalties",
    "DiscriminatorPenalty": "blocks.penalties", "GeneratorPenalty": "blocks.penalties",
    "GAN": "recipes.gan.build", "build_gan": "recipes.gan.build",
    "Sampler": "engine.sampling",
    "Config": "config.schema", "ConfigError": "config.schema", "load_config": "config.schema",
    "Run": "recipes.gan.run", "load_sampler": "recipes.gan.run", "build_run": "recipes.gan.run",
    "BaseRun": "recipes.base",
    "setup": "engine.runtime",
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
