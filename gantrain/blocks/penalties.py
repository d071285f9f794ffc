"""Discriminator and generator penalties, as objects, and weight clipping.

A penalty object says what it regularizes and how it is scheduled; the recipe that uses it
decides how its inputs are made:

* :class:`DiscriminatorPenalty` declares the input at which it differentiates D
  (:class:`PenaltyInput`: real data, generated data or interpolates between them) and builds its
  function from D's logits view. :class:`GradientPenalty` (WGAN-GP, Gulrajani et al. 2017),
  :class:`R1` and :class:`R2` (Mescheder et al. 2018).
* :class:`GeneratorPenalty` declares that it belongs to G: the home of generator regularizers
  such as StyleGAN2's path-length penalty (Karras et al. 2020, Sec. 3.2). None is implemented
  here; a subclass only has to build its function from G.

``every = 1`` runs a penalty inline, as a term of its player's loss; ``every = k > 1`` runs it
as a separate objective of the same player every k iterations with its weight multiplied by k
(lazy regularization, Karras et al. 2020, "Analyzing and Improving the Image Quality of
StyleGAN", Sec. 3.1): :attr:`Penalty.coefficient` is the factor in front of the raw penalty.

The penalties differentiate through an input gradient (grad of grad): under ``@ms.jit`` it is
right, in PyNative mode it silently comes back as zero for some layers (docs/mindspore-notes.md,
item 14). The functions here are meant to run inside a player's jitted step;
``tests/test_penalties.py`` checks them against finite differences under jit.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import ClassVar

import mindspore as ms
from mindspore import Parameter, Tensor, ops

from ..engine.player import PostUpdate

DApply = Callable[[Tensor, Tensor], Tensor]  # (images, labels) -> logits of shape (B,)
GApply = Callable[[Tensor, Tensor], Tensor]  # (noise, labels) -> samples


def _per_sample_sq_norm(g: Tensor) -> Tensor:
    return ops.reshape(ops.square(g), (g.shape[0], -1)).sum(axis=1)


def make_gradient_penalty(d_apply: DApply) -> Callable[[Tensor, Tensor, Tensor, Tensor], Tensor]:
    """WGAN-GP penalty E[(||grad_x D(x_hat)||_2 - 1)^2] at x_hat = eps*real + (1-eps)*fake,
    eps ~ U[0, 1] per sample, drawn by the caller (Gulrajani et al. 2017, Algorithm 1)."""

    def d_sum(x, y):
        return d_apply(x, y).sum()

    grad_x = ms.grad(d_sum, grad_position=0)

    def penalty(real, fake, y, eps):
        x_hat = eps * real + (1.0 - eps) * fake
        norm = ops.sqrt(_per_sample_sq_norm(grad_x(x_hat, y)) + 1e-12)
        return ops.square(norm - 1.0).mean()

    return penalty


def make_r1(d_apply: DApply) -> Callable[[Tensor, Tensor], Tensor]:
    """R1 (or R2 on fakes): E[||grad_x D(x)||^2] on real data (Mescheder et al. 2018, eq. 9).
    Multiply by gamma / 2 at the call site.

    Only the penalty: a D loss that also needs the logits at ``x`` computes them with its own
    pass. Taking them as the aux output of this input-gradient call would cut their gradient
    (``ms.value_and_grad(..., has_aux=True)`` stops the gradient of aux outputs), and D would
    learn nothing from its real samples (docs/mindspore-notes.md, item 31).
    """

    def d_sum(x, y):
        return d_apply(x, y).sum()

    grad_x = ms.grad(d_sum, grad_position=0)

    def penalty(x, y):
        return _per_sample_sq_norm(grad_x(x, y)).mean()

    return penalty


JointApply = Callable[[Tensor, Tensor], Tensor]  # (x, z) -> logits of shape (B,)


def make_joint_r1(d_apply: JointApply) -> Callable[[Tensor, Tensor], Tensor]:
    """R1 for a joint discriminator ``D(x, z)`` (ALI / BiGAN): E[||grad_(x, z) D(x, z)||^2],
    the squared norm of the gradient with respect to the whole pair. The pair is the point of
    the joint distribution D judges, so both halves are smoothed, not x alone. Multiply by
    gamma / 2 at the call site; like :func:`make_r1`, only the penalty."""

    def d_sum(x, z):
        return d_apply(x, z).sum()

    grad_xz = ms.grad(d_sum, grad_position=(0, 1))

    def penalty(x, z):
        gx, gz = grad_xz(x, z)
        return (_per_sample_sq_norm(gx) + _per_sample_sq_norm(gz)).mean()

    return penalty


class PenaltyInput(Enum):
    """Where a discriminator penalty takes D's input gradient."""

    REAL = "real"  # R1
    FAKE = "fake"  # R2
    INTERPOLATES = "interpolates"  # WGAN-GP: eps * real + (1 - eps) * fake


class Penalty(ABC):
    """A regularizer with a weight and a schedule: inline when ``every == 1``, else lazy.

    Subclasses are frozen dataclasses with an ``every`` field; they define :attr:`factor`.
    """

    every: int

    @property
    @abstractmethod
    def factor(self) -> float:
        """The factor in front of the raw penalty when it runs inline."""

    @property
    def lazy(self) -> bool:
        """Whether it runs as its own objective every ``every`` iterations."""
        return self.every > 1

    @property
    def coefficient(self) -> float:
        """The factor in front of the raw penalty in the loss it runs in: :attr:`factor`
        inline, ``factor * every`` lazily (Karras et al. 2020, Sec. 3.1)."""
        return self.factor * self.every if self.lazy else self.factor

    def _check(self, weight: float) -> None:
        every = self.every
        if isinstance(every, bool) or not isinstance(every, int) or every < 1:
            raise ValueError(f"{type(self).__name__}: every must be an int >= 1, got {every!r}")
        if not weight >= 0:  # also rejects NaN
            raise ValueError(f"{type(self).__name__}: the weight must be >= 0, got {weight!r}")


class DiscriminatorPenalty(Penalty):
    """A penalty on D's input gradient at the input it :attr:`reads`."""

    reads: ClassVar[PenaltyInput]

    @abstractmethod
    def function(self, critic: DApply) -> Callable:
        """The raw penalty for D's logits view ``critic(x, y) -> (B,)``: for
        ``PenaltyInput.INTERPOLATES`` ``(real, fake, y, eps) -> penalty``, otherwise
        ``(x, y) -> penalty``."""


class GeneratorPenalty(Penalty):
    """A penalty on G's parameters: it belongs to the generator's player.

    The home of generator regularizers such as StyleGAN2's path-length penalty (Karras et al.
    2020, Sec. 3.2, run lazily there): a subclass builds ``(z, y) -> penalty`` from
    the generator view ``generator(z, y) -> samples``. The GAN recipe adds it to G's loss
    (``every == 1``) or runs it as G's objective ``G_reg`` on fresh noise.
    """

    @abstractmethod
    def function(self, generator: GApply) -> Callable[[Tensor, Tensor], Tensor]:
        """The raw penalty ``(z, y) -> scalar`` (``y`` is None for an unconditional G)."""


@dataclass(frozen=True)
class GradientPenalty(DiscriminatorPenalty):
    """WGAN-GP: ``weight * E[(||grad D(x_hat)|| - 1)^2]`` on interpolates (Gulrajani et al.
    2017, weight 10 in the paper). Runs in every D step."""

    weight: float = 10.0
    every: int = 1
    reads: ClassVar[PenaltyInput] = PenaltyInput.INTERPOLATES

    def __post_init__(self) -> None:
        self._check(self.weight)
        if self.every != 1:
            raise ValueError("the WGAN-GP penalty runs every D step; use every = 1")

    @property
    def factor(self) -> float:
        return self.weight

    def function(self, critic: DApply) -> Callable[[Tensor, Tensor, Tensor, Tensor], Tensor]:
        return make_gradient_penalty(critic)


@dataclass(frozen=True)
class _SquaredGradientNorm(DiscriminatorPenalty):
    gamma: float
    every: int = 1

    def __post_init__(self) -> None:
        self._check(self.gamma)

    @property
    def factor(self) -> float:
        return 0.5 * self.gamma  # gamma / 2 * E[||grad D||^2] (Mescheder et al. 2018, eq. 9)

    def function(self, critic: DApply) -> Callable[[Tensor, Tensor], Tensor]:
        return make_r1(critic)

    def joint_function(self, critic: JointApply) -> Callable[[Tensor, Tensor], Tensor]:
        """The raw penalty ``(x, z) -> scalar`` for a joint ``critic(x, z) -> (B,)``: the
        gradient with respect to both inputs (:func:`make_joint_r1`)."""
        return make_joint_r1(critic)


@dataclass(frozen=True)
class R1(_SquaredGradientNorm):
    """R1: ``gamma / 2 * E[||grad_x D(x)||^2]`` on real data (Mescheder et al. 2018);
    ``every = 16`` is StyleGAN2's lazy setting."""

    reads: ClassVar[PenaltyInput] = PenaltyInput.REAL


@dataclass(frozen=True)
class R2(_SquaredGradientNorm):
    """R2: the same squared gradient norm on generated data (Mescheder et al. 2018)."""

    reads: ClassVar[PenaltyInput] = PenaltyInput.FAKE


class ClipWeights(PostUpdate):
    """Clamp every updated parameter to [-limit, limit] after each update: the original
    WGAN's Lipschitz constraint (Arjovsky et al. 2017, Algorithm 1, c = 0.01)."""

    def __init__(self, limit: float = 0.01) -> None:
        super().__init__()
        if limit <= 0:
            raise ValueError(f"ClipWeights: limit must be > 0, got {limit}")
        self.limit = float(limit)

    def init(self, params: Sequence[Parameter], prefix: str) -> None:
        pass

    def construct(self, params, token):
        for p in params:
            token = ops.depend(
                ops.assign(p, ops.clamp(ops.depend(p, token), -self.limit, self.limit)), token
            )
        return token
