"""The CycleGAN recipe (``task = "cyclegan"``): two generators and two discriminators on
unpaired images, a history pool, cycle and identity losses."""

from ..recipe import Recipe
from .build import CycleGAN, build_cyclegan
from .config import CycleGANConfig
from .run import CycleGANRun
from .sample import CycleGANSampleOptions, sample

RECIPE = Recipe(task="cyclegan", config=CycleGANConfig, run=CycleGANRun, sample=sample,
                sample_options=CycleGANSampleOptions,
                summary="unpaired image-to-image translation (Zhu et al. 2017)")

__all__ = ["RECIPE", "CycleGAN", "CycleGANConfig", "CycleGANRun", "build_cyclegan"]
