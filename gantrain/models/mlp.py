"""MLP generator and discriminator for low-dimensional data such as the 2D mixtures."""

from __future__ import annotations

from mindspore import nn, ops

from .layers import check_choice, check_positive_int, make_activation

ACTIVATIONS = ("relu", "leaky_relu", "tanh", "elu", "maxout")


class Maxout(nn.Cell):
    """A maxout layer (Goodfellow et al. 2013): ``pieces`` affine maps per unit, and their
    maximum, ``(B, d_in) -> (B, d_out)``. The PacGAN 2D experiments' discriminator is built of
    these (Lin et al. 2018, 5 pieces)."""

    def __init__(self, d_in: int, d_out: int, pieces: int) -> None:
        super().__init__()
        self.d_out, self.pieces = d_out, pieces
        self.dense = nn.Dense(d_in, d_out * pieces)

    def construct(self, x):
        y = self.dense(x)  # (B, d_out * pieces): each unit's pieces are adjacent
        return ops.amax(ops.reshape(y, (x.shape[0], self.d_out, self.pieces)), -1)


def _hidden(d_in: int, d_out: int, activation: str, pieces: int) -> list[nn.Cell]:
    if activation == "maxout":
        return [Maxout(d_in, d_out, pieces)]
    return [nn.Dense(d_in, d_out), make_activation(activation, ACTIVATIONS)]


def _mlp(d_in: int, d_out: int, width: int, depth: int, activation: str,
         pieces: int = 1) -> nn.SequentialCell:
    for arg, value in (("width", width), ("depth", depth), ("d_in", d_in), ("d_out", d_out)):
        if value < 1:
            raise ValueError(f"{arg} must be >= 1, got {value}")
    check_choice("activation", activation, ACTIVATIONS)
    check_positive_int("pieces", pieces)
    if (activation == "maxout") != (pieces > 1):
        raise ValueError(f"pieces={pieces} with activation={activation!r}: maxout takes "
                         "pieces >= 2, every other activation pieces = 1")
    layers: list[nn.Cell] = []
    dims = [d_in] + [width] * depth
    for a, b in zip(dims[:-1], dims[1:]):
        layers += _hidden(a, b, activation, pieces)
    layers.append(nn.Dense(dims[-1], d_out))
    return nn.SequentialCell(layers)


class Generator(nn.Cell):
    """z (B, z_dim) -> x (B, out_dim) through ``depth`` hidden layers of ``width`` units."""

    def __init__(
        self, z_dim: int = 2, out_dim: int = 2, width: int = 128, depth: int = 3,
        activation: str = "relu", pieces: int = 1,
    ) -> None:
        super().__init__()
        self.z_dim = z_dim
        self.net = _mlp(z_dim, out_dim, width, depth, activation, pieces)

    def construct(self, z):
        return self.net(z)


class Discriminator(nn.Cell):
    """x (B, in_dim) -> logits (B,). ``activation = "maxout"`` with ``pieces`` >= 2 builds
    maxout hidden layers, as the PacGAN 2D discriminator (200 units, 5 pieces)."""

    def __init__(
        self, in_dim: int = 2, width: int = 128, depth: int = 3, activation: str = "relu",
        pieces: int = 1,
    ) -> None:
        super().__init__()
        self.net = _mlp(in_dim, 1, width, depth, activation, pieces)

    def construct(self, x):
        return self.net(x).squeeze(-1)
