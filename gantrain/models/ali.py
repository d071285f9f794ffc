"""Encoders and joint discriminators for ALI / BiGAN (Dumoulin et al. 2017; Donahue et al. 2017).

The generator is any noise -> sample net (``models.mlp:Generator``, ``models.dcgan:Generator``).
An encoder maps x -> z; with ``stochastic=True`` it returns ``(mu, log_sigma)`` concatenated,
shape (B, 2 * z_dim), and the recipe samples ``z = mu + sigma * eps`` with host noise (ALI).
A joint discriminator ``D(x, z)`` returns one logit per (x, z) pair, shape (B,).

The image discriminator follows ALI's layout (Dumoulin et al. 2017, Appendix A): a conv branch
for x, an MLP branch for z and a joint MLP on both. It has no BatchNorm (a batch statistic
mixes the pairs D is asked to tell apart) and no dropout: dropout would draw its masks inside
the graph, which a resumed run cannot reproduce.
"""

from __future__ import annotations

from mindspore import Tensor, nn, ops
from mindspore.common.initializer import Normal

from .dcgan import GEOMETRY, SIZES, DownBlock
from .layers import check_choice, check_positive_int, make_activation
from .mlp import _mlp, _stack

__all__ = ["ConvEncoder", "JointConvDiscriminator", "JointMLPDiscriminator", "MLPEncoder"]


class MLPEncoder(nn.Cell):
    """x (B, x_dim) -> z (B, z_dim), or (mu, log_sigma) (B, 2 * z_dim) when ``stochastic``."""

    def __init__(self, x_dim: int = 2, z_dim: int = 2, width: int = 128, depth: int = 3,
                 activation: str = "relu", stochastic: bool = False) -> None:
        super().__init__()
        self.z_dim, self.stochastic = z_dim, bool(stochastic)
        self.net = _mlp(x_dim, z_dim * (2 if stochastic else 1), width, depth, activation)

    def construct(self, x: Tensor) -> Tensor:
        return self.net(x)


class JointMLPDiscriminator(nn.Cell):
    """D(x, z) for vectors: an MLP on concat(x, z) -> logits (B,).

    ``unary=True`` gives BigBiGAN's discriminator (Donahue & Simonyan 2019, Sec. 2.1): an x
    branch F and a z branch H (``depth`` hidden layers each), a unary score on each,
    ``s_x = w_x . F(x)`` and ``s_z = w_z . H(z)``, and a joint score ``s_xz`` from one hidden
    layer on concat(F(x), H(z)); logits (B, 3) in that order, ``heads = 3``. The recipe applies
    the GAN loss to each head. The unary terms match the marginals p(x) and p(z) on their own,
    so G is judged on its samples alone as in a plain GAN, not only through the pair.
    """

    def __init__(self, x_dim: int = 2, z_dim: int = 2, width: int = 128, depth: int = 3,
                 activation: str = "relu", unary: bool = False) -> None:
        super().__init__()
        self.unary = bool(unary)
        self.heads = 3 if self.unary else 1
        if not self.unary:
            self.net = _mlp(x_dim + z_dim, 1, width, depth, activation)
            return
        self.x_branch = nn.SequentialCell(_stack(x_dim, width, depth, activation, 1))
        self.z_branch = nn.SequentialCell(_stack(z_dim, width, depth, activation, 1))
        self.x_score = nn.Dense(width, 1)
        self.z_score = nn.Dense(width, 1)
        self.joint = _mlp(2 * width, 1, width, 1, activation)

    def construct(self, x: Tensor, z: Tensor) -> Tensor:
        if not self.unary:
            return self.net(ops.concat((x, z), 1)).squeeze(-1)
        fx, hz = self.x_branch(x), self.z_branch(z)
        joint = self.joint(ops.concat((fx, hz), 1))
        return ops.concat((self.x_score(fx), self.z_score(hz), joint), 1)  # (B, 3)


def _conv_trunk(channels: int, size: int, width: int, norm: str, activation: str,
                init_std: float) -> tuple[nn.SequentialCell, int]:
    """DCGAN's stride-2 conv stack (no norm on the first layer); returns it and its flat size."""
    check_choice("size", size, SIZES)
    check_positive_int("width", width)
    check_positive_int("channels", channels)
    end, n_down = GEOMETRY[size]
    widths = [width * 2 ** i for i in range(n_down)]
    blocks = [DownBlock(channels, widths[0], "none", activation, init_std)]
    blocks += [DownBlock(widths[i - 1], widths[i], norm, activation, init_std)
               for i in range(1, n_down)]
    return nn.SequentialCell(blocks), widths[-1] * end * end


class ConvEncoder(nn.Cell):
    """Images (B, C, size, size) -> z (B, z_dim), or (B, 2 * z_dim) when ``stochastic``.

    DCGAN's discriminator trunk (4x4 stride-2 convs, BatchNorm after the first) then a Dense
    layer. For 28x28 and width w: 28 -> 14x14xw -> 7x7x2w -> z.
    """

    def __init__(self, channels: int = 1, size: int = 28, z_dim: int = 64, width: int = 64,
                 norm: str = "batch", activation: str = "leaky_relu", stochastic: bool = False,
                 init_std: float = 0.02) -> None:
        super().__init__()
        check_choice("norm", norm, ("batch", "none"))
        check_positive_int("z_dim", z_dim)
        self.z_dim, self.stochastic = z_dim, bool(stochastic)
        self.trunk, flat = _conv_trunk(channels, size, width, norm, activation, init_std)
        self.flatten = nn.Flatten()
        self.out = nn.Dense(flat, z_dim * (2 if stochastic else 1), weight_init=Normal(init_std),
                            bias_init="zeros")

    def construct(self, x: Tensor) -> Tensor:
        return self.out(self.flatten(self.trunk(x)))


class JointConvDiscriminator(nn.Cell):
    """D(x, z) for images: conv branch on x, MLP branch on z, joint MLP -> logits (B,).

    Args:
        channels, size, width: the x branch (DCGAN trunk without BatchNorm).
        z_dim: length of z.
        z_width: units of the two z-branch layers.
        joint_width: units of the joint hidden layer.
        unary: BigBiGAN's form (Donahue & Simonyan 2019): linear scores on the x branch's and
            the z branch's features beside the joint one, logits (B, 3) as (s_x, s_z, s_xz).
    """

    def __init__(self, channels: int = 1, size: int = 28, z_dim: int = 64, width: int = 64,
                 z_width: int = 256, joint_width: int = 512, activation: str = "leaky_relu",
                 init_std: float = 0.02, unary: bool = False) -> None:
        super().__init__()
        self.unary = bool(unary)
        self.heads = 3 if self.unary else 1
        check_positive_int("z_dim", z_dim)
        check_positive_int("z_width", z_width)
        check_positive_int("joint_width", joint_width)
        self.x_branch, flat = _conv_trunk(channels, size, width, "none", activation, init_std)
        self.flatten = nn.Flatten()
        self.z_branch = nn.SequentialCell([
            nn.Dense(z_dim, z_width), make_activation(activation),
            nn.Dense(z_width, z_width), make_activation(activation)])
        self.joint = nn.SequentialCell([
            nn.Dense(flat + z_width, joint_width), make_activation(activation),
            nn.Dense(joint_width, 1)])
        if self.unary:
            self.x_score, self.z_score = nn.Dense(flat, 1), nn.Dense(z_width, 1)

    def construct(self, x: Tensor, z: Tensor) -> Tensor:
        hx, hz = self.flatten(self.x_branch(x)), self.z_branch(z)
        joint = self.joint(ops.concat((hx, hz), 1))
        if not self.unary:
            return joint.squeeze(-1)
        return ops.concat((self.x_score(hx), self.z_score(hz), joint), 1)  # (B, 3)
