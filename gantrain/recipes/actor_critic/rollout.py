"""Rollouts of the current actor as a :class:`~gantrain.context.BatchSource`.

Each :meth:`RolloutSource.next_batch` steps every environment ``rollout`` times with the actor
as it is now (on-policy), then asks the critic for the values it needs and returns flat arrays
``(obs, actions_onehot, returns, advantages)``: what an advantage actor-critic update consumes
(Mnih et al. 2016, "Asynchronous Methods for Deep Reinforcement Learning", Algorithm S3, run
synchronously over parallel environments as in A2C).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import mindspore as ms
import numpy as np
from mindspore import Tensor, nn

from .cartpole import CartPole

Forward = Callable[[np.ndarray], np.ndarray]


def compiled_forward(cell: nn.Cell) -> Forward:
    """``cell`` in inference mode as a numpy -> numpy function, compiled once per input shape.

    The graph reads the cell's Parameters in place, so the updates of the training steps and
    checkpoint restores (``ops.assign``) are seen by the next call. A graph bakes in the
    training flag it was compiled with (docs/mindspore-notes.md, item 10), so every shape
    compiles with ``set_train(False)`` whatever the players' steps set meanwhile.
    """

    @ms.jit
    def forward(x):
        return cell(x)

    def run(x: np.ndarray) -> np.ndarray:
        was = cell.training
        cell.set_train(False)
        try:
            return forward(Tensor(np.ascontiguousarray(x, np.float32))).asnumpy()
        finally:
            cell.set_train(was)

    return run


def nstep_returns(rewards: np.ndarray, terminated: np.ndarray, truncated: np.ndarray,
                  next_values: np.ndarray, gamma: float) -> np.ndarray:
    """n-step discounted returns over a rollout of shape (T, E).

    ``next_values[t]`` is the critic's value of the observation step ``t`` reached (before an
    automatic reset). A terminated step's return is its reward alone (the episode really ended);
    a truncated step, and the last step of the rollout, bootstrap from ``next_values`` (the
    episode was only cut short, by the time limit or by the rollout's end).
    """
    T = len(rewards)
    out = np.zeros_like(rewards, dtype=np.float64)
    running = np.zeros(rewards.shape[1:])
    for t in reversed(range(T)):
        cut = truncated[t] | (t == T - 1)
        running = np.where(cut, next_values[t], running)
        running = rewards[t] + gamma * np.where(terminated[t], 0.0, running)
        out[t] = running
    return out.astype(np.float32)


def sample_actions(logits: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One action per row, drawn from softmax(logits) by inverse CDF with one uniform each."""
    z = logits.astype(np.float64)
    p = np.exp(z - z.max(axis=1, keepdims=True))
    cdf = np.cumsum(p / p.sum(axis=1, keepdims=True), axis=1)
    u = rng.random(len(z))
    return np.minimum((cdf < u[:, None]).sum(axis=1), z.shape[1] - 1)


def critic_values(critic: Forward, obs: np.ndarray) -> np.ndarray:
    """The critic's values of ``obs`` (..., D) as shape (...) float64."""
    flat = obs.reshape(-1, obs.shape[-1])
    return critic(flat).reshape(obs.shape[:-1]).astype(np.float64)


class RolloutSource:
    """On-policy batches for the actor and the critic.

    Args:
        env: the vectorized environment (its state is part of this source's state).
        actor: observations (B, D) -> action logits (B, A), e.g. ``compiled_forward(actor)``.
        critic: observations (B, D) -> values (B,) or (B, 1).
        rollout: steps per environment per batch (the n of n-step returns).
        gamma: discount factor.
        seed: seeds the Generator that samples the actions.
        normalize_advantages: scale each batch's advantages to mean 0, std 1.
    """

    def __init__(self, env: CartPole, actor: Forward, critic: Forward, rollout: int,
                 gamma: float, seed: int, normalize_advantages: bool = False) -> None:
        if rollout < 1 or not 0.0 <= gamma <= 1.0:
            raise ValueError(f"rollout must be >= 1 and 0 <= gamma <= 1, got {rollout}, {gamma}")
        self.env, self.actor, self.critic = env, actor, critic
        self.rollout, self.gamma = rollout, gamma
        self.normalize = normalize_advantages
        self.rng = np.random.default_rng(seed)
        self.episode_return = np.zeros(env.num_envs)
        self.finished: list[float] = []  # returns of episodes ended since pop_finished()
        self.env_steps = 0

    def next_batch(self) -> tuple[np.ndarray, ...]:
        T, E, A = self.rollout, self.env.num_envs, self.env.num_actions
        obs = np.zeros((T, E, self.env.observation_size), np.float32)
        next_obs = np.zeros_like(obs)
        actions = np.zeros((T, E), np.int64)
        rewards = np.zeros((T, E), np.float32)
        terminated = np.zeros((T, E), bool)
        truncated = np.zeros((T, E), bool)
        current = self.env.observe()
        for t in range(T):
            obs[t] = current
            actions[t] = sample_actions(self.actor(current), self.rng)
            step = self.env.step(actions[t])
            rewards[t], terminated[t], truncated[t] = step.reward, step.terminated, step.truncated
            next_obs[t], current = step.final_obs, step.obs
            self._track(step.reward, step.terminated | step.truncated)
        self.env_steps += T * E
        values = critic_values(self.critic, np.concatenate([obs, next_obs]))
        returns = nstep_returns(rewards, terminated, truncated, values[T:], self.gamma)
        advantages = returns - values[:T]
        if self.normalize:
            advantages = (advantages - advantages.mean()) / (advantages.std() + 1e-8)
        onehot = np.eye(A, dtype=np.float32)[actions.reshape(-1)]
        return (obs.reshape(T * E, -1), onehot, returns.reshape(-1),
                advantages.reshape(-1).astype(np.float32))

    def _track(self, reward: np.ndarray, done: np.ndarray) -> None:
        self.episode_return += reward
        self.finished.extend(self.episode_return[done].tolist())
        self.episode_return[done] = 0.0

    def pop_finished(self) -> list[float]:
        """Returns of the training episodes finished since the last call."""
        out, self.finished = self.finished, []
        return out

    def state_dict(self) -> dict[str, Any]:
        return {"env": self.env.state_dict(), "rng": self.rng.bit_generator.state,
                "episode_return": self.episode_return.tolist(), "finished": list(self.finished),
                "env_steps": self.env_steps}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.env.load_state_dict(state["env"])
        self.rng.bit_generator.state = state["rng"]
        self.episode_return = np.asarray(state["episode_return"], np.float64)
        self.finished = list(state["finished"])
        self.env_steps = int(state["env_steps"])


def greedy_returns(env: CartPole, actor: Forward) -> np.ndarray:
    """Run one episode in each of ``env``'s environments with the argmax action; returns the
    episode returns (E,). Stops once every environment has finished its first episode."""
    env.reset()
    total = np.zeros(env.num_envs)
    running = np.ones(env.num_envs, bool)
    current = env.observe()
    while running.any():
        step = env.step(np.argmax(actor(current), axis=1))
        total += step.reward * running
        running &= ~(step.terminated | step.truncated)
        current = step.obs
    return total
