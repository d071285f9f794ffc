"""The ALI / BiGAN recipe's config: the sections and keys ``task = "ali"`` reads."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Union

from ...config.schema import (
    DataConfig,
    ModelConfig,
    RunConfig,
    SampleTrainConfig,
    TwoPlayerOptim,
)


@dataclass
class ALIOptions:
    """``[gan]`` of ALI: the loss, the prior's size, critic steps, weight clipping and EMA."""

    loss: str = "nonsaturating"
    z_dim: int = 64
    n_critic: int = 1
    weight_clip: Union[float, None] = None
    ema_decay: Union[float, None] = None  # EMA of G's and E's weights; samples use it when set


@dataclass(kw_only=True)
class ALIConfig(RunConfig):
    """G (z -> x), an encoder E (x -> z) and a joint D(x, z); ``[optim.generator]`` trains G
    and E together."""

    data: DataConfig
    generator: ModelConfig
    encoder: ModelConfig
    discriminator: ModelConfig
    gan: ALIOptions = field(default_factory=ALIOptions)
    optim: TwoPlayerOptim = field(default_factory=TwoPlayerOptim)
    train: SampleTrainConfig = field(default_factory=SampleTrainConfig)
