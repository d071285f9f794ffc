"""Adversarial losses on discriminator logits. Pure functions; each returns a scalar mean.

A :class:`GANLoss` pairs the discriminator's and the generator's objective. The generator
objective takes the real logits too because the relativistic loss needs them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from mindspore import Tensor, ops


def _softplus(x: Tensor) -> Tensor:
    # log(1 + exp(x)) without overflow: max(x, 0) + log1p(exp(-|x|)).
    return ops.relu(x) + ops.log1p(ops.exp(-ops.abs(x)))


def bce_d(real: Tensor, fake: Tensor) -> Tensor:
    """-log D(x) - log(1 - D(G(z))) with D = sigmoid (Goodfellow et al. 2014)."""
    return _softplus(-real).mean() + _softplus(fake).mean()


def nonsaturating_g(fake: Tensor, real: Tensor) -> Tensor:
    """-log D(G(z)): the non-saturating generator loss (Goodfellow et al. 2014, Sec. 3)."""
    return _softplus(-fake).mean()


def minimax_g(fake: Tensor, real: Tensor) -> Tensor:
    """log(1 - D(G(z))): the original minimax generator loss (Goodfellow et al. 2014)."""
    return -_softplus(fake).mean()


def hinge_d(real: Tensor, fake: Tensor) -> Tensor:
    """max(0, 1 - D(x)) + max(0, 1 + D(G(z))) (Lim & Ye 2017; Miyato et al. 2018)."""
    return ops.relu(1.0 - real).mean() + ops.relu(1.0 + fake).mean()


def hinge_g(fake: Tensor, real: Tensor) -> Tensor:
    """-D(G(z)) (Lim & Ye 2017)."""
    return -fake.mean()


def least_squares_d(real: Tensor, fake: Tensor) -> Tensor:
    """(D(x) - 1)^2 / 2 + D(G(z))^2 / 2 (LSGAN, Mao et al. 2017, a=0, b=c=1)."""
    return 0.5 * (ops.square(real - 1.0).mean() + ops.square(fake).mean())


def least_squares_g(fake: Tensor, real: Tensor) -> Tensor:
    """(D(G(z)) - 1)^2 / 2 (Mao et al. 2017)."""
    return 0.5 * ops.square(fake - 1.0).mean()


def wasserstein_d(real: Tensor, fake: Tensor) -> Tensor:
    """D(G(z)) - D(x): the critic loss of WGAN (Arjovsky et al. 2017)."""
    return fake.mean() - real.mean()


def wasserstein_g(fake: Tensor, real: Tensor) -> Tensor:
    """-D(G(z)) (Arjovsky et al. 2017)."""
    return -fake.mean()


def relativistic_average_d(real: Tensor, fake: Tensor) -> Tensor:
    """RaSGAN discriminator loss (Jolicoeur-Martineau 2019, eq. 10)."""
    return _softplus(-(real - fake.mean())).mean() + _softplus(fake - real.mean()).mean()


def relativistic_average_g(fake: Tensor, real: Tensor) -> Tensor:
    """RaSGAN generator loss: the discriminator loss with real and fake swapped."""
    return _softplus(-(fake - real.mean())).mean() + _softplus(real - fake.mean()).mean()


@dataclass(frozen=True)
class GANLoss:
    """A discriminator objective ``d(real, fake)`` and a generator objective ``g(fake, real)``.

    ``g_needs_real`` tells the generator step to run D on a real batch too.
    """

    name: str
    d: Callable[[Tensor, Tensor], Tensor]
    g: Callable[[Tensor, Tensor], Tensor]
    g_needs_real: bool = False


NONSATURATING = GANLoss("nonsaturating", bce_d, nonsaturating_g)
MINIMAX = GANLoss("minimax", bce_d, minimax_g)
HINGE = GANLoss("hinge", hinge_d, hinge_g)
LEAST_SQUARES = GANLoss("least_squares", least_squares_d, least_squares_g)
WASSERSTEIN = GANLoss("wasserstein", wasserstein_d, wasserstein_g)
RELATIVISTIC_AVERAGE = GANLoss(
    "relativistic_average", relativistic_average_d, relativistic_average_g, g_needs_real=True
)
LOSSES = {
    loss.name: loss
    for loss in (NONSATURATING, MINIMAX, HINGE, LEAST_SQUARES, WASSERSTEIN, RELATIVISTIC_AVERAGE)
}


def get_loss(name: str) -> GANLoss:
    """Look up a loss by its config name."""
    if name not in LOSSES:
        raise ValueError(f"unknown GAN loss {name!r}; choose one of {sorted(LOSSES)}")
    return LOSSES[name]
