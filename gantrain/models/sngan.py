"""SNGAN ResNet generator and discriminator (Miyato et al., 2018, "Spectral Normalization for
Generative Adversarial Networks", ICLR, Appendix B.4 / Table 4: the CIFAR-10 ResNet), with the
projection discriminator of Miyato & Koyama (2018, "cGANs with Projection Discriminator") and
class-conditional BatchNorm in the generator when ``num_classes > 0``.

Generator (32x32, width 256): z -> Dense -> 4x4x256 -> 3 up-ResBlocks -> BN, ReLU, 3x3 conv ->
tanh. Discriminator (width 128): an "optimized" down-ResBlock, a down-ResBlock, two plain
ResBlocks, ReLU, global sum pooling, Dense; spectral norm on every weight. Widths are
configurable (tests use tiny ones); 64x64 adds one up-block to G and one down-block to D.

Upsampling is nearest-neighbour and downsampling 2x2 average pooling, both written as reshapes
(no resize kernel needed, exact gradients under ``@ms.jit``).
"""

from __future__ import annotations

from mindspore import Tensor, nn, ops
from mindspore.common.initializer import XavierUniform

from ..blocks.spectral_norm import spectral_norm
from .layers import (
    ACTIVATIONS,
    ProjectionHead,
    check_choice,
    check_head_args,
    check_positive_int,
    generator_norm,
    make_activation,
)

__all__ = ["Discriminator", "Generator", "upsample_nearest2x", "avg_pool2x"]

SIZES = (32, 64)
D_NORMS = ("spectral", "none")
_BOTTOM = 4  # G's first feature map is 4x4


def upsample_nearest2x(x: Tensor) -> Tensor:
    """(B, C, H, W) -> (B, C, 2H, 2W), each pixel repeated in a 2x2 block."""
    b, c, h, w = x.shape
    x = ops.reshape(x, (b, c, h, 1, w, 1))
    x = ops.broadcast_to(x, (b, c, h, 2, w, 2))
    return ops.reshape(x, (b, c, 2 * h, 2 * w))


def avg_pool2x(x: Tensor) -> Tensor:
    """2x2 average pooling with stride 2: (B, C, H, W) -> (B, C, H/2, W/2); H, W even."""
    b, c, h, w = x.shape
    x = ops.reshape(x, (b, c, h // 2, 2, w // 2, 2))
    return ops.mean(x, axis=(3, 5))


def _conv(in_ch: int, out_ch: int, kernel: int, spectral: bool = False) -> nn.Cell:
    """Same-size conv (kernel 3 pad 1, or kernel 1), Xavier-uniform init, optional SN."""
    layer = nn.Conv2d(in_ch, out_ch, kernel, stride=1, pad_mode="pad", padding=kernel // 2,
                      has_bias=True, weight_init=XavierUniform(), bias_init="zeros")
    return spectral_norm(layer) if spectral else layer


class _GBlock(nn.Cell):
    """Pre-activation up-ResBlock: (C)BN, act, upsample, conv3, (C)BN, act, conv3; shortcut
    upsample, conv1."""

    def __init__(self, in_ch: int, out_ch: int, activation: str, num_classes: int) -> None:
        super().__init__()
        self.norm1 = generator_norm("batch", in_ch, num_classes)
        self.conv1 = _conv(in_ch, out_ch, 3)
        self.norm2 = generator_norm("batch", out_ch, num_classes)
        self.conv2 = _conv(out_ch, out_ch, 3)
        self.shortcut = _conv(in_ch, out_ch, 1)
        self.act = make_activation(activation)

    def construct(self, x: Tensor, y: Tensor = None) -> Tensor:
        h = upsample_nearest2x(self.act(self.norm1(x, y)))
        h = self.conv2(self.act(self.norm2(self.conv1(h), y)))
        return h + self.shortcut(upsample_nearest2x(x))


class Generator(nn.Cell):
    """SNGAN ResNet generator: ``G(z)`` or ``G(z, y)`` -> (B, channels, size, size) in [-1, 1].

    Args:
        z_dim: latent size (128 in the paper).
        channels: image channels.
        size: 32 (paper) or 64.
        width: channels of every ResBlock (256 in the paper).
        activation: "relu" in the paper.
        num_classes: > 0 switches every BatchNorm inside the ResBlocks to conditional BatchNorm.
    """

    def __init__(self, z_dim: int = 128, channels: int = 3, size: int = 32, width: int = 256,
                 activation: str = "relu", num_classes: int = 0) -> None:
        super().__init__()
        check_positive_int("z_dim", z_dim)
        check_positive_int("channels", channels)
        check_choice("size", size, SIZES)
        check_positive_int("width", width)
        check_choice("activation", activation, ACTIVATIONS)
        check_positive_int("num_classes", num_classes, minimum=0)
        n_up = {32: 3, 64: 4}[size]
        self.width = width
        self.fc = nn.Dense(z_dim, width * _BOTTOM * _BOTTOM, weight_init=XavierUniform(),
                           bias_init="zeros")
        self.blocks = nn.CellList([
            _GBlock(width, width, activation, num_classes) for _ in range(n_up)
        ])
        self.norm_out = nn.BatchNorm2d(width)
        self.act = make_activation(activation)
        self.to_image = _conv(width, channels, 3)
        self.tanh = nn.Tanh()

    def construct(self, z: Tensor, y: Tensor = None) -> Tensor:
        h = ops.reshape(self.fc(z), (-1, self.width, _BOTTOM, _BOTTOM))
        for block in self.blocks:
            h = block(h, y)
        return self.tanh(self.to_image(self.act(self.norm_out(h))))


class _OptimizedDBlock(nn.Cell):
    """First D block, no pre-activation on raw pixels: conv3, act, conv3, pool; shortcut
    pool, conv1."""

    def __init__(self, in_ch: int, out_ch: int, activation: str, spectral: bool) -> None:
        super().__init__()
        self.conv1 = _conv(in_ch, out_ch, 3, spectral)
        self.conv2 = _conv(out_ch, out_ch, 3, spectral)
        self.shortcut = _conv(in_ch, out_ch, 1, spectral)
        self.act = make_activation(activation)

    def construct(self, x: Tensor) -> Tensor:
        h = avg_pool2x(self.conv2(self.act(self.conv1(x))))
        return h + self.shortcut(avg_pool2x(x))


class _DBlock(nn.Cell):
    """Pre-activation D ResBlock: act, conv3, act, conv3, [pool]; shortcut conv1, [pool] when
    the shape changes, identity otherwise."""

    def __init__(self, in_ch: int, out_ch: int, activation: str, spectral: bool,
                 downsample: bool) -> None:
        super().__init__()
        self.downsample = downsample
        self.learned_shortcut = downsample or in_ch != out_ch
        self.conv1 = _conv(in_ch, out_ch, 3, spectral)
        self.conv2 = _conv(out_ch, out_ch, 3, spectral)
        if self.learned_shortcut:
            self.shortcut = _conv(in_ch, out_ch, 1, spectral)
        self.act = make_activation(activation)

    def construct(self, x: Tensor) -> Tensor:
        h = self.conv2(self.act(self.conv1(self.act(x))))
        sc = x
        if self.learned_shortcut:
            sc = self.shortcut(x)
        if self.downsample:
            h = avg_pool2x(h)
            sc = avg_pool2x(sc)
        return h + sc


class Discriminator(nn.Cell):
    """SNGAN ResNet discriminator: ``D(x)`` or ``D(x, y)`` -> logits (B,).

    Args:
        channels: image channels.
        size: 32 (paper) or 64.
        width: channels of every ResBlock (128 in the paper).
        norm: "spectral" (paper: SN on every conv, the Dense and the class embedding) or "none"
            (e.g. for WGAN-GP ablations).
        activation: "relu" in the paper.
        num_classes: > 0 makes it a projection discriminator taking labels y (B,) int32.
        projection: use the projection term when conditional.
        aux_classifier: also return class logits: ``D(x, y) -> (logit, class_logits)``.
    """

    def __init__(self, channels: int = 3, size: int = 32, width: int = 128,
                 norm: str = "spectral", activation: str = "relu", num_classes: int = 0,
                 projection: bool = True, aux_classifier: bool = False) -> None:
        super().__init__()
        check_positive_int("channels", channels)
        check_choice("size", size, SIZES)
        check_positive_int("width", width)
        check_choice("norm", norm, D_NORMS)
        check_choice("activation", activation, ACTIVATIONS)
        check_head_args(num_classes, projection, aux_classifier)
        spectral = norm == "spectral"
        n_down = {32: 2, 64: 3}[size]  # 32 -> 8x8 features, 64 -> 8x8 features
        blocks = [_OptimizedDBlock(channels, width, activation, spectral)]
        blocks += [_DBlock(width, width, activation, spectral, downsample=True)
                   for _ in range(n_down - 1)]
        blocks += [_DBlock(width, width, activation, spectral, downsample=False)
                   for _ in range(2)]
        self.blocks = nn.SequentialCell(blocks)
        self.act = make_activation(activation)
        self.head = ProjectionHead(width, num_classes, projection, aux_classifier,
                                   spectral=spectral, weight_init=XavierUniform())

    def construct(self, x: Tensor, y: Tensor = None):
        h = self.act(self.blocks(x))
        h = ops.reduce_sum(h, (2, 3))  # global sum pooling: (B, C, H, W) -> (B, C)
        return self.head(h, y)
