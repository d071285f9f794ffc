"""The advantage actor-critic recipe (``task = "actor_critic"``): not a GAN, two players on the
same loop and schedule, trained on rollouts of a numpy CartPole."""

from ..recipe import Recipe
from .build import ActorCritic, build_actor_critic
from .config import ActorCriticConfig
from .run import ActorCriticRun
from .sample import sample

RECIPE = Recipe(task="actor_critic", config=ActorCriticConfig, run=ActorCriticRun,
                sample=sample, summary="advantage actor-critic on CartPole (Mnih et al. 2016)")

__all__ = ["RECIPE", "ActorCritic", "ActorCriticConfig", "ActorCriticRun", "build_actor_critic"]
