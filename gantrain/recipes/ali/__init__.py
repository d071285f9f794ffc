"""The ALI / BiGAN recipe (``task = "ali"``): a generator and an encoder trained as one player
against a discriminator on (x, z) pairs."""

from ..recipe import Recipe
from .build import ALI, build_ali
from .config import ALIConfig
from .evaluate import evaluate
from .run import ALIRun
from .sample import ALISampleOptions, sample

RECIPE = Recipe(task="ali", config=ALIConfig, run=ALIRun, sample=sample,
                sample_options=ALISampleOptions, evaluate=evaluate,
                summary="adversarially learned inference (Dumoulin et al. 2017)")

__all__ = ["ALI", "ALIConfig", "ALIRun", "RECIPE", "build_ali"]
