"""Tiny networks for the data-parallel tests: a generator with BatchNorm (per-rank running
statistics) and a discriminator with spectral norm (a power-iteration vector per layer)."""

from mindspore import nn

from gantrain.blocks.spectral_norm import spectral_norm


class G(nn.Cell):
    def __init__(self, z_dim: int = 2, width: int = 16) -> None:
        super().__init__()
        self.net = nn.SequentialCell(nn.Dense(z_dim, width), nn.BatchNorm1d(width), nn.ReLU(),
                                     nn.Dense(width, 2))

    def construct(self, z):
        return self.net(z)


class D(nn.Cell):
    def __init__(self, in_dim: int = 2, width: int = 16) -> None:
        super().__init__()
        self.net = nn.SequentialCell(spectral_norm(nn.Dense(in_dim, width)), nn.LeakyReLU(0.2),
                                     spectral_norm(nn.Dense(width, 1)))

    def construct(self, x):
        return self.net(x).squeeze(-1)
