"""The GAN recipe: a generator player, a discriminator player and their schedule.

:func:`build_gan` composes small pieces: the views of G and D (:mod:`.wrappers`: packing,
conditioning, ACGAN class head), the losses (:mod:`.objectives`), penalty objects
(:mod:`gantrain.blocks.penalties`), a DiffAugment policy and the host-side draws
(:mod:`.batches`), into the phase list ``[D x n_critic, (D_reg every k), G, (G_reg every k)]``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from mindspore import nn

from ...blocks.augment import AugmentPolicy
from ...blocks.losses import GANLoss
from ...blocks.penalties import DiscriminatorPenalty, GeneratorPenalty, Penalty
from ...engine.context import StepContext
from ...engine.optim import Optimizer
from ...engine.player import Player, PostUpdate
from ...engine.schedule import Phase, Schedule
from ...engine.transforms import GradientTransform
from .batches import Draws, GBatch, phase_inputs
from .objectives import (
    Sides,
    discriminator_loss,
    generator_loss,
    generator_penalty_loss,
    lazy_penalty_loss,
)
from .wrappers import ClassHead, Conditional, Critic, Unconditional, packed


@dataclass
class GAN:
    """What :func:`build_gan` returns: the two players and the schedule."""

    generator: Player
    discriminator: Player
    schedule: Schedule
    z_dim: int
    num_classes: int


def _by_player(penalties: Sequence[Penalty]) -> tuple[DiscriminatorPenalty | None,
                                                       GeneratorPenalty | None]:
    d_penalty = g_penalty = None
    for p in penalties:
        if isinstance(p, DiscriminatorPenalty) and d_penalty is None:
            d_penalty = p
        elif isinstance(p, GeneratorPenalty) and g_penalty is None:
            g_penalty = p
        elif isinstance(p, Penalty):
            raise ValueError(f"at most one penalty per player; got {list(penalties)}")
        else:
            raise TypeError(f"penalties must be Penalty objects such as R1(gamma=10.0), got "
                            f"{type(p).__name__}")
    return d_penalty, g_penalty


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
    penalties: Sequence[Penalty] = (),
    num_classes: int = 0,
    pack: int = 1,
    aux_weight: float = 0.0,
    augment: AugmentPolicy | None = None,
    g_transforms: Sequence[GradientTransform] = (),
    d_transforms: Sequence[GradientTransform] = (),
    g_post_update: Sequence[PostUpdate] = (),
    d_post_update: Sequence[PostUpdate] = (),
    g_accumulate: int = 1,
    d_accumulate: int = 1,
    shard: slice | None = None,
) -> GAN:
    """Wire a generator and a discriminator into players ``G`` and ``D`` and a schedule.

    The data stream yields ``(x,)`` or ``(x, y)`` batches; each D step pulls a fresh one, so
    ``n_critic = 5`` sees five batches per iteration (WGAN-GP).

    Args:
        penalties: at most one :class:`~gantrain.blocks.penalties.DiscriminatorPenalty`
            (``GradientPenalty(10.0)``, ``R1(gamma=10.0, every=16)``, ``R2(...)``) and one
            :class:`~gantrain.blocks.penalties.GeneratorPenalty`. A lazy one (``every > 1``)
            runs as its player's objective ``reg``, in phase ``D_reg`` or ``G_reg``.
        num_classes: > 0 makes the GAN class-conditional: ``G(z, y)`` and ``D(x, y)``, and the
            data must have labels.
        pack: m > 1 makes D judge m samples at once (PacGAN, Lin et al. 2018): its input has m
            times the channels (or features) of one sample. Unconditional GANs only.
        aux_weight: > 0 adds ACGAN's class cross-entropy (Odena et al. 2017) to both losses,
            for a conditional D that returns ``(logits, class_logits)``.
        augment: DiffAugment (Zhao et al. 2020) for everything D sees, in both steps.
        g_transforms, d_transforms, g_post_update, d_post_update, g_accumulate, d_accumulate:
            passed to the players.
        shard: in a data-parallel run, this rank's slice of the global batch of
            ``batch_size``; each step gets only that part of every draw.
    """
    d_penalty, g_penalty = _by_player(penalties)
    conditional = num_classes > 0
    if isinstance(pack, bool) or not isinstance(pack, int) or pack < 1 or batch_size % pack:
        raise ValueError(f"pack must be an int >= 1 that divides batch_size {batch_size}; "
                         f"got pack={pack!r}")
    local = batch_size if shard is None else len(range(batch_size)[shard])
    if local % pack:
        raise ValueError(f"pack = {pack} must divide each worker's share of the batch "
                         f"({local} of {batch_size}): D judges whole packs of samples")
    if pack > 1 and conditional:
        raise ValueError("pack > 1 (PacGAN) is for unconditional GANs: D(x, y) takes one label "
                         "per input, and a pack would mix classes")
    if aux_weight > 0 and not conditional:
        raise ValueError("aux_weight > 0 (ACGAN) needs num_classes > 0 and a discriminator "
                         "that returns (logits, class_logits)")

    generator = Conditional(G) if conditional else Unconditional(G)
    d_view = Conditional(D) if conditional else Unconditional(packed(D, pack))
    critic = Critic(d_view)
    head = ClassHead(d_view) if aux_weight > 0 else None
    sides = Sides(generator, conditional, augment)
    d_loss = discriminator_loss(loss, sides, critic, penalty=d_penalty, head=head,
                                aux_weight=aux_weight)
    g_loss = generator_loss(loss, sides, critic, head=head, aux_weight=aux_weight,
                            penalty=g_penalty)

    # D's step runs G too, and a graph bakes in each net's train flag when it compiles
    # (docs/mindspore-notes.md, item 10). D compiles first, before G's own step would set G to
    # train: without this, D would learn from fakes made with G's BatchNorm running statistics.
    for net in (G, D):
        net.set_train(True)
    d_player = Player("D", D, d_loss.fn, d_optimizer, transforms=d_transforms,
                      post_update=d_post_update, accumulate=d_accumulate)
    g_player = Player("G", G, g_loss.fn, g_optimizer, transforms=g_transforms,
                      post_update=g_post_update, accumulate=g_accumulate)

    draws = Draws(batch_size, z_dim, num_classes, augment)
    g_reads_real = "real" in g_loss.reads

    def g_batch(ctx: StepContext) -> GBatch:
        return draws.g_batch(ctx, with_real=g_reads_real)

    phases = [Phase(d_player, phase_inputs(draws.d_batch, d_loss.reads, shard),
                    repeats=n_critic)]
    if d_penalty is not None and d_penalty.lazy:
        reg = lazy_penalty_loss(d_penalty, sides, critic)
        # the same draws as a D step, so that runs keep their RNG stream
        phases.append(Phase(d_player.objective("reg", reg.fn),
                            phase_inputs(draws.d_batch, reg.reads, shard),
                            every=d_penalty.every))
    phases.append(Phase(g_player, phase_inputs(g_batch, g_loss.reads, shard)))
    if g_penalty is not None and g_penalty.lazy:
        reg = generator_penalty_loss(g_penalty, sides)
        phases.append(Phase(g_player.objective("reg", reg.fn),
                            phase_inputs(draws.noise_batch, reg.reads, shard),
                            every=g_penalty.every))
    return GAN(g_player, d_player, Schedule(phases), z_dim, num_classes)
