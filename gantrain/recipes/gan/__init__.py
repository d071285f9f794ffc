"""The GAN recipe (``task = "gan"``), one idea per module.

* :mod:`.wrappers`: how the losses call G and D (packing, conditioning, ACGAN class head);
* :mod:`.batches`: the named batches each step gets, drawn on the host in a fixed order;
* :mod:`.objectives`: D's and G's losses and the lazy penalty objectives, composed;
* :mod:`.build`: :func:`~.build.build_gan`, wiring them into players and a schedule;
* :mod:`.run`: the config-driven run (data, hooks, sampling, checkpoints).
"""

from ..recipe import Recipe
from .build import GAN, build_gan
from .config import GANConfig
from .evaluate import evaluate
from .run import GANRun
from .sample import GANSampleOptions, sample

RECIPE = Recipe(task="gan", config=GANConfig, run=GANRun, sample=sample,
                sample_options=GANSampleOptions, evaluate=evaluate,
                summary="a generator against a discriminator")

__all__ = ["GAN", "GANConfig", "GANRun", "RECIPE", "build_gan"]
