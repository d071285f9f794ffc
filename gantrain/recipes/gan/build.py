"""The GAN recipe: a generator player, a discriminator player and their schedule.

Everything GAN-specific about the loop lives here: what each player's loss looks like, which
host-side random draws (noise, labels, interpolation weights) each step receives, and the phase
list ``[D x n_critic, (D_reg every k), G]``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from mindspore import Tensor, nn, ops
from mindspore import dtype as mstype

from ...blocks.augment import diff_augment, draw_augment_params, parse_policy
from ...blocks.losses import GANLoss
from ...blocks.penalties import make_gradient_penalty, make_r1
from ...engine.context import StepContext
from ...engine.optim import Optimizer
from ...engine.player import Player, PostUpdate
from ...engine.schedule import Phase, Schedule
from ...engine.transforms import GradientTransform


@dataclass(frozen=True)
class Penalty:
    """A discriminator regularizer.

    kind: ``"gp"`` (WGAN-GP, weight 10 in the paper), ``"r1"`` (real data; StyleGAN2 gamma),
    ``"r2"`` (generated data). ``every > 1`` runs R1/R2 as a lazy phase every ``every``
    iterations with the weight multiplied by ``every`` (Karras et al. 2020, "Analyzing and
    Improving the Image Quality of StyleGAN", Sec. 3.1).
    """

    kind: str
    weight: float
    every: int = 1

    def __post_init__(self) -> None:
        if self.kind not in ("gp", "r1", "r2"):
            raise ValueError(f"penalty kind must be 'gp', 'r1' or 'r2', got {self.kind!r}")
        if self.kind == "gp" and self.every != 1:
            raise ValueError("the WGAN-GP penalty runs every D step; use every = 1")
        if self.every < 1 or self.weight < 0:
            raise ValueError(f"penalty needs every >= 1 and weight >= 0, got {self}")


@dataclass
class GAN:
    """What :func:`build_gan` returns: the two players and the schedule."""

    generator: Player
    discriminator: Player
    schedule: Schedule
    z_dim: int
    num_classes: int


def _classifier(D: nn.Cell):
    def d_classify(x, y):
        out = D(x, y)
        return ops.reshape(out[0], (-1,)), out[1]

    return d_classify


def _appliers(G: nn.Cell, D: nn.Cell, conditional: bool, pack: int, aux: bool):
    # Labels are always passed so that every step has one signature; unconditional nets
    # ignore them. Plain functions, not lambdas: the graph parser rejects lambdas.
    if pack > 1:

        def g_apply(z, y):
            return G(z)

        def d_apply(x, y):
            # PacGAN: m consecutive samples become one input, (B, C, ...) -> (B/m, m*C, ...).
            packed = ops.reshape(x, (x.shape[0] // pack, pack * x.shape[1]) + x.shape[2:])
            return ops.reshape(D(packed), (-1,))

    elif conditional and aux:

        def g_apply(z, y):
            return G(z, y)

        def d_apply(x, y):  # D(x, y) -> (logits, class logits); penalties use the logits
            return ops.reshape(D(x, y)[0], (-1,))

    elif conditional:

        def g_apply(z, y):
            return G(z, y)

        def d_apply(x, y):
            return ops.reshape(D(x, y), (-1,))

    else:

        def g_apply(z, y):
            return G(z)

        def d_apply(x, y):
            return ops.reshape(D(x), (-1,))

    return g_apply, d_apply


def _augmenter(policy: tuple[str, ...]):
    """``augment(x, packed)``: DiffAugment with the host's draws packed as one (P, B) float
    Tensor (a tuple of fresh Tensors as a jit input would recompile every call)."""
    is_int = []
    for name in policy:
        is_int += [False] * 3 if name == "color" else [True, True]

    def augment(x, packed):
        if not policy:
            return x
        params = ()
        for i in range(len(is_int)):
            v = packed[i]
            if is_int[i]:
                v = ops.cast(v, mstype.int32)
            params = params + (v,)
        return diff_augment(x, params, policy)

    return augment


def _d_loss_fn(g_apply, d_apply, loss: GANLoss, penalty: Penalty | None, augment,
               classify=None, aux_weight: float = 0.0):
    gp = make_gradient_penalty(d_apply) if penalty and penalty.kind == "gp" else None
    inline = penalty is not None and penalty.every == 1
    r1 = make_r1(d_apply) if inline and penalty.kind in ("r1", "r2") else None
    kind = penalty.kind if penalty else ""
    weight = float(penalty.weight) if penalty else 0.0

    def d_loss(real, y_real, z, y_fake, eps, aug_real, aug_fake):
        real = augment(real, aug_real)
        fake = augment(ops.stop_gradient(g_apply(z, y_fake)), aug_fake)
        cls = ops.zeros((), mstype.float32)
        if classify is not None:  # ACGAN: D also names the class of real and fake images
            d_real, c_real = classify(real, y_real)
            d_fake, c_fake = classify(fake, y_fake)
            cls = ops.cross_entropy(c_real, y_real) + ops.cross_entropy(c_fake, y_fake)
            reg = gp(real, fake, y_real, eps) if kind == "gp" else ops.zeros((), mstype.float32)
        elif inline and kind == "r1":
            reg, d_real = r1(real, y_real)
            d_fake = d_apply(fake, y_fake)
        elif inline and kind == "r2":
            reg, d_fake = r1(fake, y_fake)
            d_real = d_apply(real, y_real)
        else:
            d_real, d_fake = d_apply(real, y_real), d_apply(fake, y_fake)
            reg = gp(real, fake, y_real, eps) if kind == "gp" else ops.zeros((), mstype.float32)
        adv = loss.d(d_real, d_fake)
        scale = 0.5 if kind in ("r1", "r2") else 1.0
        total = adv + scale * weight * reg + aux_weight * cls
        return total, {"adv": adv, "penalty": reg, "class": cls, "real": d_real.mean(),
                       "fake": d_fake.mean()}

    return d_loss


def _d_reg_fn(g_apply, d_apply, penalty: Penalty, augment):
    r1 = make_r1(d_apply)
    on_real = penalty.kind == "r1"
    scale = 0.5 * float(penalty.weight) * penalty.every

    def d_reg(real, y_real, z, y_fake, eps, aug_real, aug_fake):
        if on_real:
            reg, _ = r1(augment(real, aug_real), y_real)
        else:
            reg, _ = r1(augment(ops.stop_gradient(g_apply(z, y_fake)), aug_fake), y_fake)
        return scale * reg, {"penalty": reg}

    return d_reg


def _g_loss_fn(g_apply, d_apply, loss: GANLoss, augment, classify=None,
               aux_weight: float = 0.0):
    needs_real = loss.g_needs_real

    def g_loss(real, y_real, z, y_fake, aug_real, aug_fake):
        fake = augment(g_apply(z, y_fake), aug_fake)
        if classify is not None:
            d_fake, c_fake = classify(fake, y_fake)
            cls = ops.cross_entropy(c_fake, y_fake)
        else:
            d_fake, cls = d_apply(fake, y_fake), ops.zeros((), mstype.float32)
        d_real = d_apply(augment(real, aug_real), y_real) if needs_real else d_fake
        adv = loss.g(d_fake, ops.stop_gradient(d_real))
        return adv + aux_weight * cls, {"adv": adv, "class": cls, "fake": d_fake.mean()}

    return g_loss


def build_gan(
    G: nn.Cell,
    D: nn.Cell,
    *,
    z_dim: int,
    batch_size: int,
    loss: GANLoss,
    g_optimizer: Optimizer,
    d_optimizer: Optimizer,
    n_critic: int = 1,
    penalty: Penalty | None = None,
    num_classes: int = 0,
    g_transforms: Sequence[GradientTransform] = (),
    d_transforms: Sequence[GradientTransform] = (),
    g_post_update: Sequence[PostUpdate] = (),
    d_post_update: Sequence[PostUpdate] = (),
    g_accumulate: int = 1,
    d_accumulate: int = 1,
    pack: int = 1,
    augment: str = "",
    image_size: tuple[int, int] | None = None,
    aux_weight: float = 0.0,
) -> GAN:
    """Wire a generator and a discriminator into players and a schedule.

    The data stream must yield ``(x,)`` or ``(x, y)`` batches (``y`` int labels, needed when
    ``num_classes > 0``: ``G(z, y)`` and ``D(x, y)`` are then called with labels). Each D step
    pulls a fresh real batch, so ``n_critic = 5`` sees five batches per iteration (WGAN-GP).
    ``pack = m > 1`` makes D judge m samples at once (PacGAN, Lin et al. 2018): its input has m
    times the channels (or features) of one sample. ``augment`` is a DiffAugment policy such
    as ``"color,translation,cutout"`` (Zhao et al. 2020), applied to everything D sees, with
    ``image_size = (H, W)``. ``aux_weight > 0`` adds ACGAN's auxiliary classification loss
    (Odena et al. 2017) for a conditional D that returns ``(logits, class_logits)``.
    """
    conditional = num_classes > 0
    if pack < 1 or batch_size % pack or (pack > 1 and conditional):
        raise ValueError(f"pack must be >= 1, divide batch_size {batch_size} and is for "
                         f"unconditional GANs; got pack={pack}")
    aux = aux_weight > 0
    if aux and (not conditional or (penalty is not None and penalty.kind in ("r1", "r2")
                                    and penalty.every == 1)):
        raise ValueError("aux_weight > 0 (ACGAN) needs num_classes > 0 and no inline R1/R2 "
                         "(use penalty_every > 1)")
    g_apply, d_apply = _appliers(G, D, conditional, pack, aux)
    classify = _classifier(D) if aux else None
    policy = parse_policy(augment)
    if policy and image_size is None:
        raise ValueError("augment needs image_size=(H, W) of the images")
    aug = _augmenter(policy)
    # D's step runs G too, and a graph bakes in each net's train flag when it compiles (shared
    # notes item 10). D compiles first, before G's own step would set G to train: without
    # this, D would learn from fakes made with G's BatchNorm running statistics.
    for net in (G, D):
        net.set_train(True)
    d_player = Player(
        "D", D, _d_loss_fn(g_apply, d_apply, loss, penalty, aug, classify, aux_weight),
        d_optimizer,
        transforms=d_transforms, post_update=d_post_update, accumulate=d_accumulate,
    )
    g_player = Player(
        "G", G, _g_loss_fn(g_apply, d_apply, loss, aug, classify, aux_weight), g_optimizer,
        transforms=g_transforms, post_update=g_post_update, accumulate=g_accumulate,
    )

    def real_batch(ctx: StepContext) -> tuple[Tensor, Tensor]:
        batch = ctx.batch()
        if conditional and len(batch) < 2:
            raise ValueError("a conditional GAN (num_classes > 0) needs a labelled dataset")
        y = batch[1] if len(batch) > 1 else Tensor(np.zeros(len(batch[0]), np.int32))
        return batch[0], ops.cast(y, mstype.int32)

    def fake_inputs(ctx: StepContext) -> tuple[Tensor, Tensor]:
        z = ctx.normal(batch_size, z_dim)
        y = ctx.integers(max(num_classes, 1), batch_size)
        return z, y

    no_aug = Tensor(np.zeros((1, 1), np.float32))

    def aug_params(ctx: StepContext) -> Tensor:
        if not policy:
            return no_aug
        draws = draw_augment_params(ctx.rng, batch_size, image_size, policy)
        return Tensor(np.stack([d.astype(np.float32) for d in draws]))

    def d_inputs(ctx: StepContext) -> tuple:
        real, y_real = real_batch(ctx)
        z, y_fake = fake_inputs(ctx)
        eps_shape = (real.shape[0],) + (1,) * (real.ndim - 1)
        eps = Tensor(ctx.rng.random(eps_shape, dtype=np.float32))
        return real, y_real, z, y_fake, eps, aug_params(ctx), aug_params(ctx)

    # The generator loss reads real data only for relativistic losses; otherwise a constant
    # placeholder keeps one step signature without pulling a batch.
    placeholder = (Tensor(np.zeros((1,), np.float32)), Tensor(np.zeros((1,), np.int32)))

    def g_inputs(ctx: StepContext) -> tuple:
        if loss.g_needs_real:
            real, y_real = real_batch(ctx)
            aug_real = aug_params(ctx)
        else:
            (real, y_real), aug_real = placeholder, no_aug
        z, y_fake = fake_inputs(ctx)
        return real, y_real, z, y_fake, aug_real, aug_params(ctx)

    phases = [Phase(d_player, d_inputs, repeats=n_critic)]
    if penalty is not None and penalty.every > 1:
        reg = d_player.objective("reg", _d_reg_fn(g_apply, d_apply, penalty, aug))
        phases.append(Phase(reg, d_inputs, every=penalty.every))
    phases.append(Phase(g_player, g_inputs))
    return GAN(g_player, d_player, Schedule(phases), z_dim, num_classes)

