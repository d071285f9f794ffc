"""MLP generator and discriminator for low-dimensional data such as the 2D mixtures."""

from __future__ import annotations

from mindspore import nn

from .layers import make_activation

ACTIVATIONS = ("relu", "leaky_relu", "tanh", "elu")


def _mlp(d_in: int, d_out: int, width: int, depth: int, activation: str) -> nn.SequentialCell:
    for arg, value in (("width", width), ("depth", depth), ("d_in", d_in), ("d_out", d_out)):
        if value < 1:
            raise ValueError(f"{arg} must be >= 1, got {value}")
    layers: list[nn.Cell] = []
    dims = [d_in] + [width] * depth
    for a, b in zip(dims[:-1], dims[1:]):
        layers += [nn.Dense(a, b), make_activation(activation, ACTIVATIONS)]
    layers.append(nn.Dense(dims[-1], d_out))
    return nn.SequentialCell(layers)


class Generator(nn.Cell):
    """z (B, z_dim) -> x (B, out_dim) through ``depth`` hidden layers of ``width`` units."""

    def __init__(
        self, z_dim: int = 2, out_dim: int = 2, width: int = 128, depth: int = 3,
        activation: str = "relu",
    ) -> None:
        super().__init__()
        self.z_dim = z_dim
        self.net = _mlp(z_dim, out_dim, width, depth, activation)

    def construct(self, z):
        return self.net(z)


class Discriminator(nn.Cell):
    """x (B, in_dim) -> logits (B,)."""

    def __init__(
        self, in_dim: int = 2, width: int = 128, depth: int = 3, activation: str = "relu",
    ) -> None:
        super().__init__()
        self.net = _mlp(in_dim, 1, width, depth, activation)

    def construct(self, x):
        return self.net(x).squeeze(-1)
