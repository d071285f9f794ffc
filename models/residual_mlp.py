"""An example of networks of your own: residual MLPs for 2D data, loaded by file path
(``models/residual_mlp.py:Generator``) as any user's networks are."""

from __future__ import annotations

from mindspore import nn


class Residual(nn.Cell):
    """x + f(x) with f = Dense -> ReLU -> Dense."""

    def __init__(self, width: int) -> None:
        super().__init__()
        self.f = nn.SequentialCell(nn.Dense(width, width), nn.ReLU(), nn.Dense(width, width))

    def construct(self, x):
        return x + self.f(x)


def _trunk(d_in: int, width: int, blocks: int) -> nn.SequentialCell:
    if min(d_in, width, blocks) < 1:
        raise ValueError(f"d_in, width and blocks must be >= 1, got {d_in}, {width}, {blocks}")
    return nn.SequentialCell([nn.Dense(d_in, width), nn.ReLU()]
                             + [Residual(width) for _ in range(blocks)])


class Generator(nn.Cell):
    """z (B, z_dim) -> x (B, out_dim)."""

    def __init__(self, z_dim: int = 2, out_dim: int = 2, width: int = 64, blocks: int = 2):
        super().__init__()
        self.trunk = _trunk(z_dim, width, blocks)
        self.out = nn.Dense(width, out_dim)

    def construct(self, z):
        return self.out(self.trunk(z))


class Discriminator(nn.Cell):
    """x (B, in_dim) -> logits (B,)."""

    def __init__(self, in_dim: int = 2, width: int = 64, blocks: int = 2):
        super().__init__()
        self.trunk = _trunk(in_dim, width, blocks)
        self.out = nn.Dense(width, 1)

    def construct(self, x):
        return self.out(self.trunk(x)).squeeze(-1)
