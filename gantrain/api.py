"""Everything ``import gantrain`` offers, imported explicitly (``gantrain/__init__.py`` loads
this module on first use of a name, so that ``gantrain --help`` does not import MindSpore)."""

from .blocks.augment import AugmentPolicy
from .blocks.losses import GANLoss, get_loss
from .blocks.penalties import (
    R1,
    R2,
    ClipWeights,
    DiscriminatorPenalty,
    GeneratorPenalty,
    GradientPenalty,
    make_gradient_penalty,
    make_r1,
)
from .blocks.spectral_norm import spectral_norm
from .config.schema import RunConfig
from .config.strict import ConfigError
from .engine.context import StepContext
from .engine.ema import EMA
from .engine.hooks import JsonlWriter, MetricsLogger, Periodic
from .engine.loop import Hook, Loop
from .engine.optim import SGD, Adam, CosineDecay, LinearDecay, RMSProp
from .engine.player import Objective, Player, PostUpdate
from .engine.runtime import setup
from .engine.sampling import Sampler
from .engine.schedule import Phase, Schedule
from .engine.transforms import (
    Chain,
    ClipByGlobalNorm,
    ClipByValue,
    GaussianNoise,
    GradientTransform,
    Scale,
)
from .recipes.actor_critic import ActorCritic, build_actor_critic
from .recipes.ali import ALI, build_ali
from .recipes.base import Run
from .recipes.cyclegan import CycleGAN, build_cyclegan
from .recipes.gan import GAN, build_gan
from .recipes.recipe import Recipe
from .recipes.registry import build_run, load_config, register

__all__ = [
    "ALI", "ActorCritic", "Adam", "AugmentPolicy", "Chain", "ClipByGlobalNorm", "ClipByValue",
    "ClipWeights", "ConfigError", "CosineDecay", "CycleGAN", "DiscriminatorPenalty", "EMA", "GAN",
    "GANLoss", "GaussianNoise", "GeneratorPenalty", "GradientPenalty", "GradientTransform", "Hook",
    "JsonlWriter", "LinearDecay", "Loop", "MetricsLogger", "Objective", "Periodic", "Phase",
    "Player", "PostUpdate", "R1", "R2", "RMSProp", "Recipe", "Run", "RunConfig", "SGD", "Sampler",
    "Scale", "Schedule", "StepContext", "build_actor_critic", "build_ali", "build_cyclegan",
    "build_gan", "build_run", "get_loss", "load_config", "make_gradient_penalty", "make_r1",
    "register", "setup", "spectral_norm",
]
