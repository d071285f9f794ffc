"""The advantage actor-critic recipe: an actor player, a critic player and their schedule.

A non-GAN multi-model setup on the same engine (Mnih et al. 2016, "Asynchronous Methods for
Deep Reinforcement Learning", run synchronously as A2C). Each iteration one rollout of the
current actor is drawn once and shared by both phases (``ctx.shared``); the advantages in it
were computed by the critic on the host, so they reach the actor's loss as plain inputs and no
gradient can flow from the actor's loss into the critic.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from mindspore import nn, ops

from ...engine.context import StepContext
from ...engine.optim import Optimizer
from ...engine.player import Player
from ...engine.schedule import Phase, Schedule
from ...engine.transforms import GradientTransform

ROLLOUT = "rollout"  # the ctx.shared key both phases read the iteration's batch under


@dataclass
class ActorCritic:
    """What :func:`build_actor_critic` returns."""

    actor: Player
    critic: Player
    schedule: Schedule


def actor_loss_fn(actor: nn.Cell, entropy_weight: float):
    """Policy gradient with an entropy bonus: ``-mean(log pi(a|s) A) - w mean(H(pi(.|s)))``."""

    def actor_loss(obs, actions, advantages):
        logp = ops.log_softmax(actor(obs), axis=-1)
        logp_a = (logp * actions).sum(axis=-1)  # actions are one-hot (B, A)
        entropy = -(ops.exp(logp) * logp).sum(axis=-1).mean()
        pg = -(logp_a * advantages).mean()
        return pg - entropy_weight * entropy, {"pg": pg, "entropy": entropy}

    return actor_loss


def critic_loss_fn(critic: nn.Cell):
    """Mean squared error between the critic's values and the n-step returns."""

    def critic_loss(obs, returns):
        values = ops.reshape(critic(obs), (-1,))
        return ((values - returns) ** 2).mean(), {"value": values.mean()}

    return critic_loss


def rollout_batch(ctx: StepContext) -> tuple:
    """This iteration's rollout ``(obs, actions, returns, advantages)``, pulled once."""
    return ctx.shared(ROLLOUT, StepContext.batch)


def actor_inputs(ctx: StepContext) -> tuple:
    obs, actions, _, advantages = rollout_batch(ctx)
    return obs, actions, advantages


def critic_inputs(ctx: StepContext) -> tuple:
    obs, _, returns, _ = rollout_batch(ctx)
    return obs, returns


def build_actor_critic(
    actor: nn.Cell,
    critic: nn.Cell,
    *,
    actor_optimizer: Optimizer,
    critic_optimizer: Optimizer,
    entropy_weight: float = 0.01,
    actor_transforms: Sequence[GradientTransform] = (),
    critic_transforms: Sequence[GradientTransform] = (),
    actor_accumulate: int = 1,
    critic_accumulate: int = 1,
) -> ActorCritic:
    """Wire an actor (obs -> logits) and a critic (obs -> value) into players and a schedule.

    The data stream must yield rollouts ``(obs, actions_onehot, returns, advantages)`` such as
    :class:`~gantrain.recipes.actor_critic.rollout.RolloutSource` makes. Phases: the actor,
    then the critic, each once per iteration on the same rollout.
    """
    actor_player = Player("actor", actor, actor_loss_fn(actor, float(entropy_weight)),
                          actor_optimizer, transforms=actor_transforms,
                          accumulate=actor_accumulate)
    critic_player = Player("critic", critic, critic_loss_fn(critic), critic_optimizer,
                           transforms=critic_transforms, accumulate=critic_accumulate)
    # the rollouts run the current actor on the host: not fusable (gantrain.engine.fused)
    schedule = Schedule([Phase(actor_player, actor_inputs, fusable=False),
                         Phase(critic_player, critic_inputs, fusable=False)])
    return ActorCritic(actor_player, critic_player, schedule)
