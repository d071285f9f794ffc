"""The actor-critic recipe's config: the sections and keys ``task = "actor_critic"`` reads."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Union

from ...config.schema import ModelConfig, OptimConfig, RunConfig


@dataclass
class RLConfig:
    """Advantage actor-critic on a numpy environment (see ``cartpole.py`` and ``rollout.py``)."""

    env: str = "cartpole"
    envs: int = 16  # environments stepped in parallel
    rollout: int = 32  # steps per environment per iteration (n-step returns)
    gamma: float = 0.99
    entropy_weight: float = 0.01
    normalize_advantages: bool = False  # scale each rollout's advantages to mean 0, std 1
    max_episode_steps: int = 500
    eval_episodes: int = 10  # greedy episodes at each evaluation
    stop_at_return: Union[float, None] = None  # stop once the greedy mean return reaches this


@dataclass
class ActorCriticOptim:
    actor: OptimConfig = field(default_factory=OptimConfig)
    critic: OptimConfig = field(default_factory=OptimConfig)


@dataclass(kw_only=True)
class ActorCriticConfig(RunConfig):
    """An actor (observations -> action logits) and a critic (observations -> value)."""

    actor: ModelConfig
    critic: ModelConfig
    rl: RLConfig = field(default_factory=RLConfig)
    optim: ActorCriticOptim = field(default_factory=ActorCriticOptim)
