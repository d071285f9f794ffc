"""gantrain: GANs and other multi-model training on MindSpore 2.x.

Players with their own jitted steps, an alternating schedule, composable gradient transforms and
one generic loop; recipes (GAN, CycleGAN, ALI, actor-critic) built on them. Importing gantrain
first sets MindSpore's environment defaults (see :mod:`gantrain.engine.runtime`). The public
names, listed in :mod:`gantrain.api`, load on first use so that the command line starts fast.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .engine.runtime import prepare_environment

prepare_environment()  # before anything below imports mindspore

__version__ = "0.1.0"

if TYPE_CHECKING:  # what type checkers and IDEs see: the public names, imported eagerly
    from .api import (  # noqa: F401
        ALI,
        EMA,
        GAN,
        R1,
        R2,
        SGD,
        ActorCritic,
        Adam,
        AugmentPolicy,
        Chain,
        ClipByGlobalNorm,
        ClipByValue,
        ClipWeights,
        ConfigError,
        CosineDecay,
        CycleGAN,
        DiscriminatorPenalty,
        GANLoss,
        GaussianNoise,
        GeneratorPenalty,
        GradientPenalty,
        GradientTransform,
        Hook,
        JsonlWriter,
        LinearDecay,
        Loop,
        MetricsLogger,
        Objective,
        Periodic,
        Phase,
        Player,
        PostUpdate,
        Recipe,
        RMSProp,
        Run,
        RunConfig,
        Sampler,
        Scale,
        Schedule,
        StepContext,
        build_actor_critic,
        build_ali,
        build_cyclegan,
        build_gan,
        build_run,
        get_loss,
        load_config,
        make_gradient_penalty,
        make_r1,
        register,
        setup,
        spectral_norm,
    )


def _api() -> Any:
    # import_module, not `from . import api`: that would look the name up here first
    return importlib.import_module(f"{__name__}.api")


def __getattr__(name: str) -> Any:
    api = _api()

    if name == "__all__":  # `from gantrain import *`
        return list(api.__all__)
    if name not in api.__all__:
        raise AttributeError(f"module 'gantrain' has no attribute {name!r}")
    value = getattr(api, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_api().__all__))
