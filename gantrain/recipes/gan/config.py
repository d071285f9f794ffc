"""The GAN recipe's config: the sections and keys ``task = "gan"`` reads, and nothing else."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Union

from ...config.schema import (
    DataConfig,
    GuardConfig,
    ModelConfig,
    RunConfig,
    SampleTrainConfig,
    TwoPlayerOptim,
)


@dataclass
class GANOptions:
    """``[gan]``: the loss, the regularizers and the generator's inputs."""

    loss: str = "nonsaturating"
    z_dim: int = 64
    n_critic: int = 1
    penalty: str = "none"  # none | gp | r1 | r2
    penalty_weight: float = 10.0
    penalty_every: int = 1
    weight_clip: Union[float, None] = None
    num_classes: int = 0  # > 0: conditional G(z, y) and D(x, y)
    aux_weight: float = 0.0  # > 0: ACGAN auxiliary classifier loss (D needs aux_classifier)
    pack: int = 1  # PacGAN: D sees `pack` samples at once (its input has pack x channels)
    augment: str = ""  # DiffAugment policy, e.g. "color,translation,cutout"
    # EMA of G's weights; samples use it when set. It warms up as min(decay, (1+n)/(10+n)) after
    # n updates, so a decay d is reached after 9/(1-d) - 10 of them (0.999: 8,990)
    ema_decay: Union[float, None] = None


@dataclass
class GANTrainConfig(SampleTrainConfig):
    """``[train]`` of a GAN: also quality metrics during training."""

    eval_every: int = 0  # > 0: quality metrics every N iterations (needs eval_classifier)
    eval_classifier: str = ""  # classifier folder from `gantrain eval train-classifier`
    eval_samples: int = 1000  # generated samples per periodic evaluation
    keep_best: str = ""  # fd | kid | precision | recall | density | coverage: keep checkpoints/best


@dataclass
class GANGuardConfig(GuardConfig):
    """``[guard]`` of a GAN: also the failure-sign warnings (gantrain.blocks.watchdog)."""

    d_loss_floor: float = 0.01  # warn when D's loss stays below this ...
    d_patience: int = 5  # ... for this many logging checks
    grad_norm_limit: float = 1000.0  # warn when a gradient norm exceeds this
    diversity_after: int = 500  # no diversity warning before this iteration (G starts constant)


@dataclass(kw_only=True)
class GANConfig(RunConfig):
    """A GAN run: data, G and D networks, ``[gan]``, one optimizer per side."""

    data: DataConfig
    generator: ModelConfig
    discriminator: ModelConfig
    gan: GANOptions = field(default_factory=GANOptions)
    optim: TwoPlayerOptim = field(default_factory=TwoPlayerOptim)
    train: GANTrainConfig = field(default_factory=GANTrainConfig)
    guard: GANGuardConfig = field(default_factory=GANGuardConfig)
