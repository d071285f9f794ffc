"""The ALI / BiGAN recipe: a generator z -> x and an encoder x -> z against a joint discriminator.

Dumoulin et al. 2017, "Adversarially Learned Inference" (ALI), and Donahue et al. 2017,
"Adversarial Feature Learning" (BiGAN): the discriminator judges (x, z) pairs; the encoder's
pairs ``(x, E(x))`` with x from the data are labelled real and the generator's pairs
``(G(z), z)`` with z from the prior are labelled fake. G and E are ONE player, trained on the
same objective with the labels swapped (ALI Algorithm 1), so the two joint distributions are
pushed together and, at the optimum, E inverts G.

The encoder is deterministic (BiGAN, ``z = E(x)``) or stochastic (ALI, ``E(x) = (mu,
log_sigma)`` and ``z = mu + sigma * eps``, the reparametrization trick). ``eps`` is drawn on the
host from ``ctx.rng`` and passed in, so a resumed run is exact. An encoder Cell declares its
form with a ``stochastic`` attribute (``encoder.args.stochastic = true`` for the built-ins).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from mindspore import Tensor, nn, ops

from ...blocks.losses import GANLoss
from ...blocks.penalties import R1, R2, PenaltyInput
from ...config.strict import ConfigError
from ...engine.context import StepContext
from ...engine.optim import Optimizer
from ...engine.player import Player, PostUpdate
from ...engine.schedule import Phase, Schedule
from ...engine.transforms import GradientTransform
from ..shapes import call_net


@dataclass
class ALI:
    """What :func:`build_ali` returns: the joint G/E player, D and the schedule."""

    generator: Player  # nets {"G": G, "E": E}
    discriminator: Player
    schedule: Schedule
    z_dim: int
    stochastic: bool


def make_encode(E: nn.Cell, z_dim: int, stochastic: bool):
    """``encode(x, eps) -> z``; the stochastic form reads ``(mu, log_sigma)`` from E's output
    and reparametrizes with the host noise ``eps`` (B, z_dim)."""
    if stochastic:

        def encode(x, eps):
            h = E(x)
            return h[:, :z_dim] + ops.exp(h[:, z_dim:]) * eps

    else:

        def encode(x, eps):
            return E(x)

    return encode


def swapped_objective(loss: GANLoss):
    """The G/E objective ``f(d_real, d_fake)``: D's loss with real and fake swapped (ALI
    Algorithm 1), which for the logistic loss is the non-saturating form for both nets; for
    ``minimax`` it is minus D's loss (the two-player game as written in BiGAN, eq. 3)."""
    d = loss.d
    if loss.name == "minimax":

        def minimax(d_real, d_fake):
            return -d(d_real, d_fake)

        return minimax

    def swapped(d_real, d_fake):
        return d(d_fake, d_real)

    return swapped


def _penalty_term(d_apply, penalty: R1 | R2 | None):
    """``(real pair, fake pair) -> raw penalty`` on the pair ``penalty`` reads; chosen here, in
    Python, since the graph compiler cannot branch on it."""
    if penalty is None:
        return None
    fn = penalty.joint_function(d_apply)
    if penalty.reads is PenaltyInput.REAL:
        def on_real(real, fake):
            return fn(*real)

        return on_real

    def on_fake(real, fake):
        return fn(*fake)

    return on_fake


def per_head(objective, heads: int):
    """``objective(d_real, d_fake)`` averaged over the ``heads`` columns of (B, heads) logits,
    each column a score of its own (BigBiGAN's s_x, s_z, s_xz); one head is the objective as
    is. The loop unrolls at compile time."""
    if heads == 1:
        return objective

    def averaged(d_real, d_fake):
        total = objective(d_real[:, 0], d_fake[:, 0])
        for h in range(1, heads):
            total = total + objective(d_real[:, h], d_fake[:, h])
        return total / heads

    return averaged


def _loss_fns(G, D, encode, loss: GANLoss, penalty: R1 | R2 | None, cycle_weight: float,
              heads: int):
    d_objective = per_head(loss.d, heads)
    ge_objective = per_head(swapped_objective(loss), heads)
    shape = (-1,) if heads == 1 else (-1, heads)

    def d_apply(x, z):
        return ops.reshape(D(x, z), shape)

    reg = _penalty_term(d_apply, penalty)
    coefficient = penalty.coefficient if penalty is not None else 0.0

    def d_loss(x, eps, z):
        real = (x, ops.stop_gradient(encode(x, eps)))
        fake = (ops.stop_gradient(G(z)), z)
        d_real, d_fake = d_apply(*real), d_apply(*fake)
        adv = d_objective(d_real, d_fake)
        logged = {"real": d_real.mean(), "fake": d_fake.mean()}
        if reg is None:
            return adv, logged
        value = reg(real, fake)
        logged["adv"] = adv
        logged["penalty"] = value
        return adv + coefficient * value, logged

    def ge_loss(x, eps, z):
        z_hat = encode(x, eps)
        d_real, d_fake = d_apply(x, z_hat), d_apply(G(z), z)
        adv = ge_objective(d_real, d_fake)
        logged = {"real": d_real.mean(), "fake": d_fake.mean()}
        if not cycle_weight:
            return adv, logged
        cycle = ops.square(G(z_hat) - x).mean()  # per element, as eval/recon_mse
        logged["adv"] = adv
        logged["cycle"] = cycle
        return adv + cycle_weight * cycle, logged

    return d_loss, ge_loss


def build_ali(
    G: nn.Cell,
    E: nn.Cell,
    D: nn.Cell,
    *,
    z_dim: int,
    batch_size: int,
    loss: GANLoss,
    g_optimizer: Optimizer,
    d_optimizer: Optimizer,
    stochastic: bool | None = None,
    n_critic: int = 1,
    penalty: R1 | R2 | None = None,
    cycle_weight: float = 0.0,
    g_transforms: Sequence[GradientTransform] = (),
    d_transforms: Sequence[GradientTransform] = (),
    g_post_update: Sequence[PostUpdate] = (),
    d_post_update: Sequence[PostUpdate] = (),
    g_accumulate: int = 1,
    d_accumulate: int = 1,
    shard: slice | None = None,
) -> ALI:
    """Wire G, E and a joint ``D(x, z) -> logits (B,)`` into players and the schedule
    ``[D x n_critic, GE]``.

    ``shard``: in a data-parallel run, this rank's slice of the global batch of ``batch_size``.

    The data stream yields ``(x,)`` or ``(x, y)`` batches (labels are ignored). Each phase pulls
    a fresh real batch, prior noise ``z`` (batch_size, z_dim) and, for a stochastic encoder,
    ``eps`` (B, z_dim). ``stochastic=None`` reads ``E.stochastic`` (default False). ``g_optimizer``
    updates G and E together.

    ``penalty``: R1 (real pairs ``(x, E(x))``) or R2 (fake pairs ``(G(z), z)``) on D's gradient
    with respect to the whole pair, a term of D's loss in every D step (Mescheder et al. 2018;
    for the joint D, :func:`~gantrain.blocks.penalties.make_joint_r1`).

    A D with a ``heads`` attribute > 1 returns that many scores per pair, (B, heads) (BigBiGAN's
    unary form: ``JointMLPDiscriminator(unary=True)``); both players' objectives are averaged
    over the heads, and R1/R2 take the gradient of their sum.

    ``cycle_weight`` > 0 adds ALICE's explicit cycle term to the G/E loss, ``cycle_weight *
    mean((G(E(x)) - x)^2)`` (Li et al. 2017, "ALICE: Towards Understanding Adversarial
    Learning for Joint Distribution Matching", Sec. 4): ALI's game alone does not make E
    invert G (the joint distributions can match with G(E(x)) far from x); the cycle term pins
    the pairing the adversarial game leaves open.
    """
    if not cycle_weight >= 0:  # also rejects NaN
        raise ValueError(f"cycle_weight must be >= 0, got {cycle_weight!r}")
    if penalty is not None and (not isinstance(penalty, (R1, R2)) or penalty.lazy):
        raise ValueError(f"ALI takes an inline R1 or R2 penalty (every = 1), got {penalty!r}")
    if stochastic is None:
        stochastic = bool(getattr(E, "stochastic", False))
    # Every training graph runs all three nets in train mode: a graph bakes in the flag at
    # compile time (docs/mindspore-notes.md, item 10), and the D step compiles before
    # the GE step.
    for net in (G, E, D):
        net.set_train(True)
    encode = make_encode(E, z_dim, stochastic)
    heads = discriminator_heads(D)
    d_loss, ge_loss = _loss_fns(G, D, encode, loss, penalty, float(cycle_weight), heads)
    d_player = Player("D", D, d_loss, d_optimizer, transforms=d_transforms,
                      post_update=d_post_update, accumulate=d_accumulate)
    ge_player = Player("GE", {"G": G, "E": E}, ge_loss, g_optimizer, transforms=g_transforms,
                       post_update=g_post_update, accumulate=g_accumulate)
    no_eps = Tensor(np.zeros((1, 1), np.float32))  # one step signature for the BiGAN form

    def inputs(ctx: StepContext) -> tuple[Tensor, Tensor, Tensor]:
        x = ctx.batch()[0]
        eps = ctx.normal(x.shape[0], z_dim) if stochastic else no_eps
        z = ctx.normal(batch_size, z_dim)
        if shard is None:
            return x, eps, z
        # a data-parallel rank: the same global draws everywhere, this rank's slice of each
        return x[shard], eps[shard] if stochastic else eps, z[shard]

    schedule = Schedule([Phase(d_player, inputs, repeats=n_critic), Phase(ge_player, inputs)])
    return ALI(ge_player, d_player, schedule, z_dim, stochastic)


def discriminator_heads(D: nn.Cell) -> int:
    """How many scores D returns per pair: its ``heads`` attribute (BigBiGAN's unary form
    declares 3), 1 when it has none."""
    heads = getattr(D, "heads", 1)
    if isinstance(heads, bool) or not isinstance(heads, int) or heads < 1:
        raise ConfigError(f"discriminator {type(D).__name__}.heads must be a positive int "
                          f"(scores per (x, z) pair), got {heads!r}")
    return heads


def check_ali_shapes(
    G: nn.Cell, E: nn.Cell, D: nn.Cell, *, z_dim: int, sample_shape: tuple[int, ...],
    stochastic: bool, names: tuple[str, str, str] = ("generator", "encoder", "discriminator"),
) -> None:
    """Dry-run the three nets on a tiny batch (PyNative, eval mode) and raise a ConfigError
    naming the net and the shapes when G(z), E(x) or D(x, z) does not fit."""
    g_name, e_name, d_name = names
    n = 2
    z = Tensor(np.zeros((n, z_dim), np.float32))
    fake = call_net(G, (z,), f"generator {g_name} failed on noise of shape {(n, z_dim)}")
    if tuple(fake.shape[1:]) != tuple(sample_shape):
        raise ConfigError(
            f"generator {g_name} makes samples of shape {tuple(fake.shape[1:])} but the data "
            f"has samples of shape {tuple(sample_shape)} (check generator.args and gan.z_dim)")
    x = Tensor(np.zeros((n, *sample_shape), np.float32))
    out = call_net(E, (x,), f"encoder {e_name} failed on data of shape {(n, *sample_shape)}")
    want = 2 * z_dim if stochastic else z_dim
    if out.shape != (n, want):
        form = ("stochastic: 2*z_dim, mean and log-sigma" if stochastic
                else "deterministic: z_dim")
        raise ConfigError(
            f"encoder {e_name} returned shape {out.shape} for data of shape "
            f"{(n, *sample_shape)}; expected {(n, want)} ({form}, gan.z_dim = {z_dim}; "
            "encoder.args.stochastic picks the form)")
    logits = call_net(D, (x, z), f"discriminator {d_name} cannot take the pair (x, z) of shapes "
                   f"{(n, *sample_shape)} and {(n, z_dim)}")
    heads = discriminator_heads(D)
    want = "one logit per pair, shape (B,) or (B, 1)" if heads == 1 else \
        f"{heads} logits per pair (its heads attribute), shape (B, {heads})"
    if logits.size != n * heads or (heads > 1 and logits.shape != (n, heads)):
        raise ConfigError(f"discriminator {d_name} returned shape {logits.shape} for {n} "
                          f"(x, z) pairs; expected {want}")
