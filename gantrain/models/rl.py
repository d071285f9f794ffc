"""Small MLP actor (logits) and critic (value) networks for low-dimensional control tasks."""

from __future__ import annotations

from mindspore import nn

from .mlp import _mlp


class Actor(nn.Cell):
    """obs (B, obs_dim) -> action logits (B, num_actions)."""

    def __init__(self, obs_dim: int = 4, num_actions: int = 2, width: int = 64, depth: int = 2,
                 activation: str = "tanh") -> None:
        super().__init__()
        self.obs_dim, self.num_actions = obs_dim, num_actions
        self.net = _mlp(obs_dim, num_actions, width, depth, activation)

    def construct(self, obs):
        return self.net(obs)


class Critic(nn.Cell):
    """obs (B, obs_dim) -> state value (B,)."""

    def __init__(self, obs_dim: int = 4, width: int = 64, depth: int = 2,
                 activation: str = "tanh") -> None:
        super().__init__()
        self.obs_dim = obs_dim
        self.net = _mlp(obs_dim, 1, width, depth, activation)

    def construct(self, obs):
        return self.net(obs).squeeze(-1)
