"""The actor-critic run (``task = "actor_critic"``): A2C on a numpy environment.

Sections: ``[actor]`` and ``[critic]`` (networks), ``[rl]`` (environment, rollout, discount,
entropy bonus, evaluation episodes), ``[optim.actor]`` / ``[optim.critic]``. The batch stream
is a :class:`~.rollout.RolloutSource` of the current actor, so the loop, schedule,
checkpoints and divergence guard are the ones the GANs use.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from mindspore import Tensor

from ...config.builders import optimizer_from_config, transforms_from_config
from ...config.imports import build_cell
from ...config.strict import ConfigError
from ...engine.loop import Hook, Loop
from ..base import Run
from ..shapes import call_net
from .build import ActorCritic, build_actor_critic
from .cartpole import make_env
from .config import ActorCriticConfig
from .rollout import RolloutSource, compiled_forward, greedy_returns

EVAL_SEED = 2  # stream of the evaluation episodes' start states: [seed, EVAL_SEED]


def check_nets(actor: Any, critic: Any, obs_size: int, num_actions: int,
               config: ActorCriticConfig) -> None:
    """The actor maps (B, obs) to (B, actions) logits and the critic (B, obs) to (B,) values."""
    x = (Tensor(np.zeros((2, obs_size), np.float32)),)
    for role, net, want in (("actor", actor, (2, num_actions)), ("critic", critic, (2,))):
        shape = call_net(net, x, f"[{role}] {getattr(config, role).model} fails on observations "
                                 f"of shape (2, {obs_size}) from {config.rl.env!r}").shape
        if shape not in (want, want + (1,) if role == "critic" else want):
            raise ConfigError(f"[{role}] {getattr(config, role).model} maps observations "
                              f"(2, {obs_size}) to {shape}; {config.rl.env!r} needs {want}")


class EpisodeLogger(Hook):
    """Mean, min and max return of the training episodes that ended since the last log."""

    def __init__(self, source: RolloutSource, writer: Any, every: int) -> None:
        self.source, self.writer, self.every = source, writer, every

    def after_iteration(self, loop: Loop) -> None:
        finished = self.source.pop_finished()
        record: dict[str, Any] = {"iteration": loop.iteration, "kind": "episodes",
                                  "env_steps": self.source.env_steps, "episodes": len(finished)}
        if finished:
            record.update({"episodes/return_mean": float(np.mean(finished)),
                           "episodes/return_min": float(np.min(finished)),
                           "episodes/return_max": float(np.max(finished))})
            loop.postfix["return"] = f"{np.mean(finished):.1f}"
        self.writer.write(record)


def build_actor(config: ActorCriticConfig) -> Any:
    return build_cell(config.actor.model, config.actor.args, "actor")


class ActorCriticRun(Run):
    """Advantage actor-critic: actor and critic players trained on rollouts of the actor."""

    config: ActorCriticConfig
    data_parallel_blocker = (
        "its rollouts are collected on the host from one environment, and splitting an "
        "episode over workers is not built"
    )

    def build(self) -> None:
        c, rl = self.config, self.config.rl
        if rl.envs < 1 or rl.rollout < 1 or rl.eval_episodes < 1 or rl.max_episode_steps < 1:
            raise ConfigError("[rl] envs, rollout, eval_episodes and max_episode_steps must be "
                              f">= 1, got {rl.envs}, {rl.rollout}, {rl.eval_episodes}, "
                              f"{rl.max_episode_steps}")
        if not 0.0 <= rl.gamma <= 1.0:
            raise ConfigError(f"rl.gamma must be in [0, 1], got {rl.gamma}")
        env = make_env(rl.env, rl.envs, rl.max_episode_steps, c.seed)
        actor, critic = build_actor(c), build_cell(c.critic.model, c.critic.args, "critic")
        check_nets(actor, critic, env.observation_size, env.num_actions, c)
        self.ac: ActorCritic = build_actor_critic(
            actor, critic,
            actor_optimizer=optimizer_from_config(c.optim.actor, "optim.actor"),
            critic_optimizer=optimizer_from_config(c.optim.critic, "optim.critic"),
            entropy_weight=rl.entropy_weight,
            actor_transforms=transforms_from_config(c.optim.actor, c.seed),
            critic_transforms=transforms_from_config(c.optim.critic, c.seed + 1),
            actor_accumulate=c.optim.actor.accumulate,
            critic_accumulate=c.optim.critic.accumulate,
        )
        self.policy = compiled_forward(actor)
        self.source = RolloutSource(env, self.policy, compiled_forward(critic), rl.rollout,
                                    rl.gamma, seed=c.seed + 1,
                                    normalize_advantages=rl.normalize_advantages)
        self.schedule = self.ac.schedule
        self.players = {"actor": [self.ac.actor], "critic": [self.ac.critic]}

    def extra_hooks(self) -> list[Hook]:
        return [EpisodeLogger(self.source, self.writer, self.config.train.log_every)]

    def greedy_eval(self) -> np.ndarray:
        """Returns of ``rl.eval_episodes`` greedy (argmax) episodes; the start states come from
        their own seeded stream, the same at every evaluation, apart from training's."""
        rl = self.config.rl
        env = make_env(rl.env, rl.eval_episodes, rl.max_episode_steps,
                       [self.config.seed, EVAL_SEED])
        return greedy_returns(env, self.policy)

    def evaluate(self, loop: Loop) -> None:
        returns = self.greedy_eval()
        record = {"iteration": loop.iteration, "kind": "eval", "elapsed": round(loop.elapsed, 3),
                  "env_steps": self.source.env_steps,
                  "eval/return_mean": float(returns.mean()),
                  "eval/return_min": float(returns.min()),
                  "eval/return_max": float(returns.max())}
        self.writer.write(record)
        self.last_report = (f"greedy return {returns.mean():.1f} (min {returns.min():.0f}, max "
                            f"{returns.max():.0f}) over {len(returns)} episodes")
        target = self.config.rl.stop_at_return
        if target is not None and returns.mean() >= target:  # "solved": keep this policy
            loop.request_stop(f"greedy return {returns.mean():.1f} >= rl.stop_at_return")
