"""The CycleGAN recipe (Zhu et al., 2017, "Unpaired Image-to-Image Translation using
Cycle-Consistent Adversarial Networks", ICCV) as players and a schedule.

Two generators, ``G_AB: A -> B`` and ``G_BA: B -> A``, form ONE player minimizing (Eq. 3 plus the
identity loss of Sec. 5.2)::

    adv(D_B(G_AB(a))) + adv(D_A(G_BA(b)))
    + cycle_weight * (|G_BA(G_AB(a)) - a| + |G_AB(G_BA(b)) - b|)
    + cycle_weight * identity_weight * (|G_BA(a) - a| + |G_AB(b) - b|)

Two discriminators, ``D_A`` (real a vs. generated a) and ``D_B``, form one player (or two, with
``split_discriminators``). Each iteration runs phase G, then phase D on the same real batch
(``ctx.shared``), with the fakes G just made (``ctx.outputs``) passed through a history pool of
``pool_size`` images per domain.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from mindspore import Tensor, nn, ops
from mindspore import dtype as mstype

from ...blocks.image_pool import ImagePool
from ...blocks.losses import GANLoss
from ...engine.context import StepContext
from ...engine.optim import Optimizer
from ...engine.player import Player
from ...engine.schedule import Phase, Schedule
from ...engine.transforms import GradientTransform

BATCH = "cyclegan_batch"  # ctx.shared key of the iteration's (a, b) batch


@dataclass
class CycleGAN:
    """What :func:`build_cyclegan` returns."""

    generator: Player  # nets "G_AB", "G_BA"
    discriminators: list[Player]  # one player with nets "D_A", "D_B", or players D_A and D_B
    schedule: Schedule
    pools: dict[str, ImagePool]  # "a": generated A images (for D_A), "b": for D_B
    G_AB: nn.Cell
    G_BA: nn.Cell


def adversarial_scale(loss: GANLoss) -> float:
    """The paper's least-squares G term is E[(D(G(x)) - 1)^2]; gantrain's ``least_squares_g``
    carries LSGAN's 1/2 (Mao et al. 2017), so it is doubled here to keep ``cycle_weight = 10``
    the paper's lambda. D's loss, 1/2 (E[(D(y)-1)^2] + E[D(G(x))^2]), already matches."""
    return 2.0 if loss.name == "least_squares" else 1.0


def _l1(x, y):
    return ops.abs(x - y).mean()


def _logits(D: nn.Cell, x):
    return ops.reshape(D(x), (-1,))  # a PatchGAN map: every patch is one logit


def _g_loss_fn(G_AB, G_BA, D_A, D_B, loss: GANLoss, cycle_weight: float,
               identity_weight: float):
    adv_scale = adversarial_scale(loss)
    cycle_w = float(cycle_weight)
    identity_w = float(cycle_weight * identity_weight)
    use_identity = identity_w > 0
    needs_real = loss.g_needs_real

    def g_loss(a, b):
        fake_b = G_AB(a)
        fake_a = G_BA(b)
        d_fake_b, d_fake_a = _logits(D_B, fake_b), _logits(D_A, fake_a)
        # relativistic losses read D on real data; the others ignore the second argument
        d_real_b, d_real_a = d_fake_b, d_fake_a
        if needs_real:
            d_real_b = ops.stop_gradient(_logits(D_B, b))
            d_real_a = ops.stop_gradient(_logits(D_A, a))
        adv_ab = adv_scale * loss.g(d_fake_b, d_real_b)
        adv_ba = adv_scale * loss.g(d_fake_a, d_real_a)
        cycle_a = _l1(G_BA(fake_b), a)
        cycle_b = _l1(G_AB(fake_a), b)
        if use_identity:
            identity_a = _l1(G_BA(a), a)
            identity_b = _l1(G_AB(b), b)
        else:
            identity_a = ops.zeros((), mstype.float32)
            identity_b = ops.zeros((), mstype.float32)
        total = (adv_ab + adv_ba + cycle_w * (cycle_a + cycle_b)
                 + identity_w * (identity_a + identity_b))
        aux = {"adv_ab": adv_ab, "adv_ba": adv_ba, "cycle_a": cycle_a, "cycle_b": cycle_b,
               "identity_a": identity_a, "identity_b": identity_b,
               "fake_a": ops.stop_gradient(fake_a), "fake_b": ops.stop_gradient(fake_b)}
        return total, aux

    return g_loss


def _d_pair_loss_fn(D_A, D_B, loss: GANLoss):
    def d_loss(a, b, fake_a, fake_b):
        real_a, gen_a = _logits(D_A, a), _logits(D_A, fake_a)
        real_b, gen_b = _logits(D_B, b), _logits(D_B, fake_b)
        loss_a, loss_b = loss.d(real_a, gen_a), loss.d(real_b, gen_b)
        return loss_a + loss_b, {"d_a": loss_a, "d_b": loss_b, "real_a": real_a.mean(),
                                 "fake_a": gen_a.mean(), "real_b": real_b.mean(),
                                 "fake_b": gen_b.mean()}

    return d_loss


def _d_single_loss_fn(D, loss: GANLoss):
    def d_loss(x, fake):
        real, gen = _logits(D, x), _logits(D, fake)
        return loss.d(real, gen), {"real": real.mean(), "fake": gen.mean()}

    return d_loss


def build_cyclegan(
    G_AB: nn.Cell,
    G_BA: nn.Cell,
    D_A: nn.Cell,
    D_B: nn.Cell,
    *,
    loss: GANLoss,
    g_optimizer: Optimizer,
    d_optimizer: Optimizer,
    image_shape: tuple[int, int, int],
    cycle_weight: float = 10.0,
    identity_weight: float = 0.5,
    pool_size: int = 50,
    split_discriminators: bool = False,
    g_transforms: Sequence[GradientTransform] = (),
    d_transforms: Sequence[GradientTransform] = (),
    g_accumulate: int = 1,
    d_accumulate: int = 1,
) -> CycleGAN:
    """Wire CycleGAN's four nets into players, history pools and the schedule [G, D].

    The data stream must yield ``(a, b)`` batches of unpaired images of ``image_shape``
    (C, H, W) in [-1, 1], the same in both domains. ``identity_weight`` multiplies
    ``cycle_weight`` as in the paper's code (0 skips the identity terms and their compute).
    ``split_discriminators`` makes D_A and D_B two players with their own optimizers and phases.
    """
    if cycle_weight < 0 or identity_weight < 0:
        raise ValueError(f"cycle_weight and identity_weight must be >= 0, got {cycle_weight}, "
                         f"{identity_weight}")
    g_player = Player("G", {"G_AB": G_AB, "G_BA": G_BA},
                      _g_loss_fn(G_AB, G_BA, D_A, D_B, loss, cycle_weight, identity_weight),
                      g_optimizer, transforms=g_transforms, accumulate=g_accumulate)
    d_options = {"transforms": d_transforms, "accumulate": d_accumulate}
    if split_discriminators:
        d_players = [Player("D_A", D_A, _d_single_loss_fn(D_A, loss), d_optimizer, **d_options),
                     Player("D_B", D_B, _d_single_loss_fn(D_B, loss), d_optimizer, **d_options)]
    else:
        d_players = [Player("D", {"D_A": D_A, "D_B": D_B}, _d_pair_loss_fn(D_A, D_B, loss),
                            d_optimizer, **d_options)]
    pools = {k: ImagePool(pool_size, image_shape, f"pool_{k}") for k in ("a", "b")}

    def real(ctx: StepContext) -> tuple[Tensor, Tensor]:  # one (a, b) batch per iteration
        a, b = ctx.shared(BATCH, StepContext.batch)[:2]
        return a, b

    def pooled(key: str, ctx: StepContext) -> Tensor:
        # the fakes phase G made this iteration (the paper's code too makes fake_B once, with G
        # before its update, for both updates), through the history pool
        _, aux = ctx.outputs[g_player.name]
        return Tensor(pools[key].query(aux[f"fake_{key}"].asnumpy(), ctx.rng))

    def d_inputs(ctx: StepContext) -> tuple[Tensor, ...]:
        return (*real(ctx), pooled("a", ctx), pooled("b", ctx))

    def d_a_inputs(ctx: StepContext) -> tuple[Tensor, Tensor]:
        return real(ctx)[0], pooled("a", ctx)

    def d_b_inputs(ctx: StepContext) -> tuple[Tensor, Tensor]:
        return real(ctx)[1], pooled("b", ctx)

    phases = [Phase(g_player, real)]
    if split_discriminators:
        phases += [Phase(d_players[0], d_a_inputs, fusable=False),
                   Phase(d_players[1], d_b_inputs, fusable=False)]
    else:
        phases.append(Phase(d_players[0], d_inputs, fusable=False))  # reads G's fakes
    return CycleGAN(g_player, d_players, Schedule(phases), pools, G_AB, G_BA)
