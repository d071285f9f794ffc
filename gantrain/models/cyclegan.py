"""CycleGAN's networks (Zhu et al., 2017, "Unpaired Image-to-Image Translation using
Cycle-Consistent Adversarial Networks", ICCV; Appendix 7.2): a ResNet generator (Johnson et al.
2016) and a PatchGAN discriminator (Isola et al. 2017).

Full size, as in the paper for 256x256 images: ``ResnetGenerator(width=64, downsamplings=2,
blocks=9)`` and ``PatchDiscriminator(width=64, layers=3)`` (70x70 receptive field, a 30x30 map
of logits). The small digit preset scales both down (width 16-32, 3-4 blocks, 2 layers).

Instance normalization is written by hand (``InstanceNorm``): ``nn.InstanceNorm2d`` has no CPU
kernel in MindSpore 2.10. As in the paper's code it has no affine parameters and no running
statistics, so train and eval mode compute the same thing.
"""

from __future__ import annotations

from mindspore import Tensor, nn, ops
from mindspore.common.initializer import Normal

from .layers import LeakyReLU, check_positive_int

__all__ = ["InstanceNorm", "PatchDiscriminator", "ResnetGenerator"]

INIT_STD = 0.02  # N(0, 0.02) weights, as in the paper's code


class InstanceNorm(nn.Cell):
    """Normalize each (sample, channel) plane to zero mean, unit variance (Ulyanov et al. 2016)."""

    def __init__(self, eps: float = 1e-5) -> None:
        super().__init__()
        self.eps = eps

    def construct(self, x: Tensor) -> Tensor:
        mean = ops.mean(x, (2, 3), True)
        centred = x - mean
        var = ops.mean(centred * centred, (2, 3), True)
        return centred / ops.sqrt(var + self.eps)


def _conv(in_ch: int, out_ch: int, kernel: int, stride: int = 1, padding: int = 0) -> nn.Conv2d:
    return nn.Conv2d(in_ch, out_ch, kernel, stride=stride, pad_mode="pad" if padding else "valid",
                     padding=padding, has_bias=True, weight_init=Normal(INIT_STD),
                     bias_init="zeros")


class _ResBlock(nn.Cell):
    """x + [reflect-pad, conv3x3, IN, ReLU, reflect-pad, conv3x3, IN](x)."""

    def __init__(self, ch: int) -> None:
        super().__init__()
        self.body = nn.SequentialCell(
            nn.ReflectionPad2d(1), _conv(ch, ch, 3), InstanceNorm(), nn.ReLU(),
            nn.ReflectionPad2d(1), _conv(ch, ch, 3), InstanceNorm(),
        )

    def construct(self, x: Tensor) -> Tensor:
        return x + self.body(x)


class ResnetGenerator(nn.Cell):
    """Image -> image of the same shape, in [-1, 1] (tanh output).

    c7s1-w, then ``downsamplings`` stride-2 3x3 convs doubling the channels, ``blocks`` residual
    blocks, as many 4x4 stride-2 transposed convs back, c7s1-out. Reflection padding
    everywhere except the strided convs. Height and width must be divisible by
    ``2 ** downsamplings``.

    Args:
        in_channels / out_channels: image channels of the input and output domains.
        width: channels of the first layer (64 in the paper).
        downsamplings: stride-2 stages (2 in the paper).
        blocks: residual blocks at the bottleneck (9 for 256x256, 6 for 128x128).
        outer_kernel: kernel of the first and last conv (7 in the paper; on a CPU a 7x7 conv at
            full resolution costs more than the whole bottleneck of a small net).
    """

    def __init__(self, in_channels: int = 3, out_channels: int = 3, width: int = 64,
                 downsamplings: int = 2, blocks: int = 9, outer_kernel: int = 7) -> None:
        super().__init__()
        for name, value, low in (("in_channels", in_channels, 1), ("out_channels", out_channels, 1),
                                 ("width", width, 1), ("downsamplings", downsamplings, 0),
                                 ("blocks", blocks, 0), ("outer_kernel", outer_kernel, 1)):
            check_positive_int(name, value, minimum=low)
        self.in_channels, self.out_channels = in_channels, out_channels
        self.multiple = 2 ** downsamplings
        if outer_kernel % 2 == 0:
            raise ValueError(f"outer_kernel={outer_kernel} is invalid; allowed values: odd ints")
        pad = outer_kernel // 2
        layers = [nn.ReflectionPad2d(pad), _conv(in_channels, width, outer_kernel), InstanceNorm(),
                  nn.ReLU()]
        ch = width
        for _ in range(downsamplings):
            layers += [_conv(ch, 2 * ch, 3, stride=2, padding=1), InstanceNorm(), nn.ReLU()]
            ch *= 2
        layers += [_ResBlock(ch) for _ in range(blocks)]
        for _ in range(downsamplings):
            # 4x4 stride-2 padding-1 doubles H and W exactly (the paper's code uses 3x3 with
            # output_padding=1, which does the same with a slightly smaller kernel)
            layers += [nn.Conv2dTranspose(ch, ch // 2, 4, stride=2, pad_mode="pad", padding=1,
                                          has_bias=True, weight_init=Normal(INIT_STD),
                                          bias_init="zeros"),
                       InstanceNorm(), nn.ReLU()]
            ch //= 2
        layers += [nn.ReflectionPad2d(pad), _conv(ch, out_channels, outer_kernel), nn.Tanh()]
        self.net = nn.SequentialCell(layers)

    def construct(self, x: Tensor) -> Tensor:
        return self.net(x)


class PatchDiscriminator(nn.Cell):
    """PatchGAN: image (B, C, H, W) -> map of logits (B, 1, H', W'), one per overlapping patch.

    C64 (no norm) - C128 - C256 - C512 for ``layers = 3`` and ``width = 64``: 4x4 convs, the
    first ``layers`` with stride 2, then one stride-1 conv and a stride-1 conv to one channel;
    instance norm after every conv but the first and the last, LeakyReLU(0.2). ``layers = 3``
    sees 70x70 patches, 2 sees 34x34, 1 sees 16x16.
    """

    def __init__(self, channels: int = 3, width: int = 64, layers: int = 3) -> None:
        super().__init__()
        for name, value in (("channels", channels), ("width", width), ("layers", layers)):
            check_positive_int(name, value)
        cells = [_conv(channels, width, 4, stride=2, padding=1), LeakyReLU(0.2)]
        ch = width
        for n in range(1, layers + 1):
            out = width * min(2 ** n, 8)
            stride = 2 if n < layers else 1
            cells += [_conv(ch, out, 4, stride=stride, padding=1), InstanceNorm(),
                      LeakyReLU(0.2)]
            ch = out
        cells.append(_conv(ch, 1, 4, stride=1, padding=1))
        self.net = nn.SequentialCell(cells)

    def construct(self, x: Tensor) -> Tensor:
        return self.net(x)
