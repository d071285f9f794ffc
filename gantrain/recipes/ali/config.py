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
    """``[gan]`` of ALI: the loss, the prior's size, critic steps, D's penalty, the cycle term,
    weight clipping and EMA."""

    loss: str = "nonsaturating"
    z_dim: int = 64
    n_critic: int = 1
    penalty: str = "none"  # none | r1 (real pairs (x, E(x))) | r2 (fake pairs (G(z), z))
    penalty_weight: float = 10.0  # gamma of R1/R2 (the term is gamma / 2 * E[||grad||^2])
    cycle_weight: float = 0.0  # > 0: ALICE's cycle term weight * mean((G(E(x)) - x)^2), GE's
    weight_clip: Union[float, None] = None
    # EMA of G's and E's weights; samples use it when set (warm-up: see GANOptions.ema_decay)
    ema_decay: Union[float, None] = None


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
