"""The GAN recipe's losses, composed from the pieces :func:`.build.build_gan` picked.

The pieces: the generator and discriminator views of :mod:`.wrappers`, a
:class:`~gantrain.blocks.losses.GANLoss`, an optional DiffAugment policy, an optional ACGAN
class head (Odena et al. 2017) and penalty objects (:mod:`gantrain.blocks.penalties`). Each
builder returns a :class:`StepLoss`: a loss over the batch dict of :mod:`.batches` and the
fields it reads, which are exactly what its step is given.

Every choice is made here, on the host, when a loss is built: inside the graph the losses
branch only on closure constants, which the compiler resolves. The order of the D calls is
part of the numbers (BatchNorm running statistics move with each call in training mode), and
follows the recipe's earlier code: real before fake, except that R2 scores the fakes first.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from mindspore import Tensor, ops
from mindspore import dtype as mstype

from ...blocks.augment import AugmentPolicy
from ...blocks.losses import GANLoss
from ...blocks.penalties import (
    DApply,
    DiscriminatorPenalty,
    GApply,
    GeneratorPenalty,
    PenaltyInput,
)

LossFn = Callable[[dict], tuple[Tensor, dict]]
# scores(real, fake, batch) -> (real logits, fake logits, penalty, class loss), for the (x, y)
# pairs of both sides: how one D step scores its batches, with the terms that come with them
Scores = Callable[[tuple, tuple, dict], tuple[Tensor, Tensor, Tensor, Tensor]]


@dataclass(frozen=True)
class StepLoss:
    """A loss for one jitted step, ``fn(batch) -> (loss, aux)``, and the batch fields it reads."""

    fn: LossFn
    reads: frozenset[str]


def _zero() -> Tensor:
    return ops.zeros((), mstype.float32)


@dataclass(frozen=True)
class Sides:
    """How a batch becomes D's inputs: ``(x, y)`` pairs for the real and the fake side, with
    DiffAugment applied to both (Zhao et al. 2020) and ``y`` None for an unconditional GAN."""

    generator: GApply
    conditional: bool = False
    augment: AugmentPolicy | None = None

    def _fields(self, x: str, y: str, aug: str) -> frozenset[str]:
        fields = {x}
        if self.conditional:
            fields.add(y)
        if self.augment is not None:
            fields.add(aug)
        return frozenset(fields)

    @property
    def real_fields(self) -> frozenset[str]:
        return self._fields("real", "y_real", "aug_real")

    @property
    def fake_fields(self) -> frozenset[str]:
        return self._fields("z", "y_fake", "aug_fake")

    def _augmenter(self) -> Callable[[Tensor, Tensor], Tensor]:
        if self.augment is not None:
            return self.augment.function()

        def identity(x, params):
            return x

        return identity

    def reals(self) -> Callable[[dict], tuple]:
        augment = self._augmenter()

        def reals(batch):
            return augment(batch["real"], batch.get("aug_real")), batch.get("y_real")

        return reals

    def fakes(self, detach: bool) -> Callable[[dict], tuple]:
        """Generated samples; ``detach`` for D's steps, which must not reach G's weights."""
        generator, augment = self.generator, self._augmenter()

        def fakes(batch):
            y = batch.get("y_fake")
            x = generator(batch["z"], y)
            if detach:
                x = ops.stop_gradient(x)
            return augment(x, batch.get("aug_fake")), y

        return fakes


def _class_scores(head: DApply, critic: DApply, penalty: DiscriminatorPenalty | None) -> Scores:
    reg = _penalty_term(critic, penalty)

    def scores(real, fake, batch):
        d_real, c_real = head(*real)
        d_fake, c_fake = head(*fake)
        cls = ops.cross_entropy(c_real, real[1]) + ops.cross_entropy(c_fake, fake[1])
        return d_real, d_fake, reg(real, fake, batch), cls

    return scores


def _penalty_term(critic: DApply, penalty: DiscriminatorPenalty | None):
    """``(real, fake, batch) -> raw penalty`` on the input ``penalty`` reads (0 without one);
    the choice is made here, in Python, since the graph compiler cannot branch on it."""
    if penalty is None:
        def none(real, fake, batch):
            return _zero()

        return none
    fn = penalty.function(critic)
    if penalty.reads is PenaltyInput.INTERPOLATES:
        def on_interpolates(real, fake, batch):
            return fn(real[0], fake[0], real[1], batch["eps"])

        return on_interpolates
    if penalty.reads is PenaltyInput.REAL:
        def on_real(real, fake, batch):
            return fn(*real)

        return on_real

    def on_fake(real, fake, batch):
        return fn(*fake)

    return on_fake


def _critic_scores(critic: DApply, penalty: DiscriminatorPenalty | None) -> Scores:
    reg = _penalty_term(critic, penalty)

    def scores(real, fake, batch):
        d_real, d_fake = critic(*real), critic(*fake)
        return d_real, d_fake, reg(real, fake, batch), _zero()

    return scores


def discriminator_loss(loss: GANLoss, sides: Sides, critic: DApply, *,
                       penalty: DiscriminatorPenalty | None = None,
                       head: DApply | None = None, aux_weight: float = 0.0) -> StepLoss:
    """D's loss: ``loss.d`` + the inline penalty (its coefficient times its value) +
    ``aux_weight`` x the class cross-entropy on real and fake (ACGAN, with ``head``).

    Logs ``adv`` and the mean logits ``real`` and ``fake``, plus ``penalty`` with an inline
    penalty and ``class`` with a class head; a term the run does not have is not logged, so
    reports hold no flat-zero curves. A lazy ``penalty`` is not part of this loss: see
    :func:`lazy_penalty_loss`.
    """
    inline = penalty if penalty is not None and not penalty.lazy else None
    if head is not None:
        scores = _class_scores(head, critic, inline)
    else:
        scores = _critic_scores(critic, inline)
    coefficient = inline.coefficient if inline is not None else 0.0
    reals, fakes = sides.reals(), sides.fakes(detach=True)

    def d_loss(batch):
        real, fake = reals(batch), fakes(batch)
        d_real, d_fake, reg, cls = scores(real, fake, batch)
        adv = loss.d(d_real, d_fake)
        total = adv + coefficient * reg + aux_weight * cls
        logged = {"adv": adv, "real": d_real.mean(), "fake": d_fake.mean()}
        if inline is not None:
            logged["penalty"] = reg
        if head is not None:
            logged["class"] = cls
        return total, logged

    reads = sides.real_fields | sides.fake_fields
    if inline is not None and inline.reads is PenaltyInput.INTERPOLATES:
        reads = reads | {"eps"}
    return StepLoss(d_loss, reads)


def lazy_penalty_loss(penalty: DiscriminatorPenalty, sides: Sides, critic: DApply) -> StepLoss:
    """D's lazy objective: ``penalty.coefficient`` (weight x every) x the penalty, on the side
    it reads (Karras et al. 2020, Sec. 3.1). Logs ``penalty``, the raw value."""
    if penalty.reads is PenaltyInput.INTERPOLATES:
        raise ValueError(f"{type(penalty).__name__} reads interpolates, which only D's own step "
                         "makes; run it inline (every = 1)")
    on_real = penalty.reads is PenaltyInput.REAL
    side = sides.reals() if on_real else sides.fakes(detach=True)
    fn, coefficient = penalty.function(critic), penalty.coefficient

    def d_reg(batch):
        reg = fn(*side(batch))
        return coefficient * reg, {"penalty": reg}

    return StepLoss(d_reg, sides.real_fields if on_real else sides.fake_fields)


def generator_loss(loss: GANLoss, sides: Sides, critic: DApply, *,
                   head: DApply | None = None, aux_weight: float = 0.0,
                   penalty: GeneratorPenalty | None = None) -> StepLoss:
    """G's loss: ``loss.g`` (with D's real logits only for relativistic losses) +
    ``aux_weight`` x the class cross-entropy of the fakes (ACGAN) + an inline G penalty.

    Logs ``adv`` and ``fake``, plus ``class`` with a class head and ``penalty`` with an
    inline G penalty.
    """
    needs_real = loss.g_needs_real
    fakes, reals = sides.fakes(detach=False), sides.reals()
    inline = penalty if penalty is not None and not penalty.lazy else None
    pen = inline.function(sides.generator) if inline is not None else None
    coefficient = inline.coefficient if inline is not None else 0.0

    def g_loss(batch):
        fake = fakes(batch)
        if head is not None:
            d_fake, c_fake = head(*fake)
            cls = ops.cross_entropy(c_fake, fake[1])
        else:
            d_fake, cls = critic(*fake), _zero()
        d_real = critic(*reals(batch)) if needs_real else d_fake
        adv = loss.g(d_fake, ops.stop_gradient(d_real))
        total = adv + aux_weight * cls
        logged = {"adv": adv, "fake": d_fake.mean()}
        if head is not None:
            logged["class"] = cls
        if pen is None:
            return total, logged
        reg = pen(batch["z"], batch.get("y_fake"))
        logged["penalty"] = reg
        return total + coefficient * reg, logged

    reads = sides.fake_fields | (sides.real_fields if needs_real else frozenset())
    return StepLoss(g_loss, reads)


def generator_penalty_loss(penalty: GeneratorPenalty, sides: Sides) -> StepLoss:
    """G's lazy objective: ``penalty.coefficient`` x the penalty on fresh noise."""
    fn, coefficient = penalty.function(sides.generator), penalty.coefficient

    def g_reg(batch):
        reg = fn(batch["z"], batch.get("y_fake"))
        return coefficient * reg, {"penalty": reg}

    return StepLoss(g_reg, sides.fake_fields - {"aug_fake"})
