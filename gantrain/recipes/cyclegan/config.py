"""The CycleGAN recipe's config: the sections and keys ``task = "cyclegan"`` reads."""

from __future__ import annotations

from dataclasses import dataclass, field

from ...config.schema import (
    DataConfig,
    GridTrainConfig,
    ModelConfig,
    RunConfig,
    TwoPlayerOptim,
)


@dataclass
class AdversarialLoss:
    """``[gan]`` of CycleGAN: only the adversarial loss (the paper uses least squares)."""

    loss: str = "nonsaturating"


@dataclass
class CycleGANOptions:
    """CycleGAN's loss weights and history pool (Zhu et al. 2017, Sec. 3-4)."""

    cycle_weight: float = 10.0  # lambda of the cycle-consistency L1 loss
    identity_weight: float = 0.5  # times cycle_weight: G_AB(b) ~ b, G_BA(a) ~ a
    pool_size: int = 50  # generated images D sees from history (0: only the newest)
    split_discriminators: bool = False  # D_A and D_B as two players (own optimizer state)


@dataclass(kw_only=True)
class CycleGANConfig(RunConfig):
    """Both generators share [generator] and both discriminators [discriminator]."""

    data: DataConfig
    generator: ModelConfig
    discriminator: ModelConfig
    cyclegan: CycleGANOptions = field(default_factory=CycleGANOptions)
    gan: AdversarialLoss = field(default_factory=AdversarialLoss)
    optim: TwoPlayerOptim = field(default_factory=TwoPlayerOptim)
    train: GridTrainConfig = field(default_factory=GridTrainConfig)
