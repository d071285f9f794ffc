"""CartPole-v1 as a vectorized numpy environment, and the registry of environments by name.

The dynamics are the classic-control ones (Barto, Sutton & Anderson 1983, as written in
gym/gymnasium ``CartPoleEnv`` with the "euler" integrator), so returns are comparable with
published CartPole-v1 results without depending on gym. All environments step together and
reset automatically (gymnasium's vector-env convention): the observation returned after a
finished episode is the first of the next one, and the last observation of the finished episode
comes back separately (``final_obs``) so a truncated episode can still be bootstrapped.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...config.strict import ConfigError


@dataclass(frozen=True)
class StepResult:
    """What :meth:`CartPole.step` returns, one entry per environment."""

    obs: np.ndarray  # (E, 4) float32, after the automatic reset of finished episodes
    reward: np.ndarray  # (E,) float32, 1 for every step (also the terminating one)
    terminated: np.ndarray  # (E,) bool: the pole fell or the cart left the track
    truncated: np.ndarray  # (E,) bool: the time limit was reached
    final_obs: np.ndarray  # (E, 4) float32: the observation reached by this step (pre-reset)


class CartPole:
    """``num_envs`` CartPole-v1 environments stepped in lockstep.

    Args:
        num_envs: environments stepped together.
        max_episode_steps: an episode is truncated after this many steps (500 in v1).
        seed: seeds the Generator that draws every reset state, uniform in [-0.05, 0.05]^4.
    """

    gravity = 9.8
    masscart = 1.0
    masspole = 0.1
    total_mass = masspole + masscart
    length = 0.5  # half the pole's length
    polemass_length = masspole * length
    force_mag = 10.0
    tau = 0.02  # seconds between state updates
    theta_threshold = 12 * 2 * np.pi / 360
    x_threshold = 2.4
    observation_size = 4
    num_actions = 2

    def __init__(self, num_envs: int, max_episode_steps: int = 500,
                 seed: int | Sequence[int] = 0) -> None:
        if num_envs < 1 or max_episode_steps < 1:
            raise ValueError(f"CartPole needs num_envs >= 1 and max_episode_steps >= 1, got "
                             f"{num_envs} and {max_episode_steps}")
        self.num_envs, self.max_episode_steps = num_envs, max_episode_steps
        self.rng = np.random.default_rng(seed)
        self.state = np.zeros((num_envs, 4))  # float64, like gym's Python-float state
        self.elapsed = np.zeros(num_envs, np.int64)
        self.reset()

    def reset(self) -> np.ndarray:
        """Start a new episode in every environment; returns the observations."""
        self.state = self.rng.uniform(-0.05, 0.05, (self.num_envs, 4))
        self.elapsed[:] = 0
        return self.observe()

    def observe(self) -> np.ndarray:
        return self.state.astype(np.float32)

    @classmethod
    def dynamics(cls, state: np.ndarray, action: np.ndarray) -> np.ndarray:
        """One Euler step of the cart-pole equations for states (E, 4) and actions (E,) in
        {0: push left, 1: push right}."""
        x, x_dot, theta, theta_dot = state.T
        force = np.where(action == 1, cls.force_mag, -cls.force_mag)
        costheta, sintheta = np.cos(theta), np.sin(theta)
        temp = (force + cls.polemass_length * theta_dot**2 * sintheta) / cls.total_mass
        thetaacc = (cls.gravity * sintheta - costheta * temp) / (
            cls.length * (4.0 / 3.0 - cls.masspole * costheta**2 / cls.total_mass))
        xacc = temp - cls.polemass_length * thetaacc * costheta / cls.total_mass
        return np.stack([x + cls.tau * x_dot, x_dot + cls.tau * xacc,
                         theta + cls.tau * theta_dot, theta_dot + cls.tau * thetaacc], axis=1)

    def step(self, action: np.ndarray) -> StepResult:
        action = np.asarray(action)
        if action.shape != (self.num_envs,) or not np.isin(action, (0, 1)).all():
            raise ValueError(f"CartPole.step expects {self.num_envs} actions in {{0, 1}}, got "
                             f"shape {action.shape}")
        self.state = self.dynamics(self.state, action)
        self.elapsed += 1
        x, theta = self.state[:, 0], self.state[:, 2]
        terminated = (np.abs(x) > self.x_threshold) | (np.abs(theta) > self.theta_threshold)
        truncated = self.elapsed >= self.max_episode_steps
        final_obs = self.observe()
        done = terminated | truncated
        if done.any():
            self.state[done] = self.rng.uniform(-0.05, 0.05, (int(done.sum()), 4))
            self.elapsed[done] = 0
        reward = np.ones(self.num_envs, np.float32)
        return StepResult(self.observe(), reward, terminated, truncated, final_obs)

    def state_dict(self) -> dict[str, Any]:
        """Plain JSON-able state (floats round-trip exactly through JSON)."""
        return {"state": self.state.tolist(), "elapsed": self.elapsed.tolist(),
                "rng": self.rng.bit_generator.state}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        new = np.asarray(state["state"], np.float64)
        if new.shape != self.state.shape:
            raise ValueError(f"CartPole state has shape {new.shape}, expected {self.state.shape}"
                             f" ({self.num_envs} environments)")
        self.state = new
        self.elapsed = np.asarray(state["elapsed"], np.int64)
        self.rng.bit_generator.state = state["rng"]


ENVS = {"cartpole": CartPole}


def make_env(name: str, num_envs: int, max_episode_steps: int,
             seed: int | Sequence[int]) -> CartPole:
    """The vectorized environment registered as ``name`` (the config's ``rl.env``)."""
    if name not in ENVS:
        raise ConfigError(f"rl.env: unknown environment {name!r}; known: {', '.join(ENVS)}")
    return ENVS[name](num_envs, max_episode_steps, seed)
