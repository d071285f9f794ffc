"""The GAN recipe: a generator and a discriminator, any loss, penalty, packing, conditioning,
DiffAugment and EMA (``task = "gan"``)."""

from ..recipe import Recipe
from .build import GAN, build_gan
from .config import GANConfig
from .run import GANRun
from .sample import GANSampleOptions, sample

RECIPE = Recipe(task="gan", config=GANConfig, run=GANRun, sample=sample,
                sample_options=GANSampleOptions,
                summary="a generator against a discriminator")

__all__ = ["GAN", "GANConfig", "GANRun", "RECIPE", "build_gan"]
