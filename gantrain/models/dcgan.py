"""DCGAN generator and discriminator (Radford et al., 2016, "Unsupervised Representation Learning
with Deep Convolutional Generative Adversarial Networks", ICLR) for 28x28, 32x32 and 64x64 images.

The generator maps z to a ``size0 x size0`` feature map with a Dense layer (equivalent to DCGAN's
first 1x1 -> 4x4 transposed convolution), then doubles the resolution with 4x4 stride-2 transposed
convolutions down to ``channels`` and ends with tanh, so samples lie in [-1, 1]. The discriminator
mirrors it with 4x4 stride-2 convolutions and LeakyReLU and ends with one Dense layer on the
flattened features, returning one raw logit per image, shape ``(B,)``.

Channel widths, for ``width = w``:

* 28: G 7x7x2w -> 14x14xw -> 28x28xC;         D 28 -> 14x14xw -> 7x7x2w
* 32: G 4x4x4w -> 8x8x2w -> 16x16xw -> 32x32; D 32 -> 16x16xw -> 8x8x2w -> 4x4x4w
* 64: G 4x4x8w -> ... -> 32x32xw -> 64x64;    D 64 -> 32x32xw -> ... -> 4x4x8w

Class conditioning (``num_classes > 0``): the generator concatenates a learned class embedding
to z (``cond="concat"``, Mirza & Osindero 2014) or uses class-conditional BatchNorm
(``cond="cbn"``, de Vries et al. 2017); the discriminator is a projection discriminator (Miyato &
Koyama, 2018, "cGANs with Projection Discriminator", ICLR) and can also return class logits for
an auxiliary-classifier loss (Odena et al., 2017, ACGAN). Conditional nets are called as
``G(z, y)`` / ``D(x, y)`` with int32 labels of shape ``(B,)``.

The small building blocks (activation factory, conditional BatchNorm, the projection head) live
in ``models.layers`` and are shared with ``models.sngan``.
"""

from __future__ import annotations

from mindspore import Tensor, nn, ops
from mindspore.common.initializer import Normal

from .layers import (
    ACTIVATIONS,
    ProjectionHead,
    check_choice,
    check_head_args,
    check_positive_int,
    generator_norm,
    make_activation,
    maybe_spectral_norm,
)

__all__ = ["Discriminator", "Generator"]

SIZES = (28, 32, 64)
G_NORMS = ("batch", "none")
D_NORMS = ("none", "batch", "spectral")
G_CONDS = ("concat", "cbn")
# size -> (resolution of the first / last feature map, number of stride-2 layers)
GEOMETRY = {28: (7, 2), 32: (4, 3), 64: (4, 4)}


def _check_common(size: int, width: int, channels: int, activation: str, num_classes: int) -> None:
    check_choice("size", size, SIZES)
    check_positive_int("width", width)
    check_positive_int("channels", channels)
    check_choice("activation", activation, ACTIVATIONS)
    check_positive_int("num_classes", num_classes, minimum=0)


class _Refine(nn.Cell):
    """``n`` blocks of 3x3 stride-1 conv -> norm -> activation at one resolution (none: the
    identity, with no parameters)."""

    def __init__(self, ch: int, n: int, norm: str, activation: str, num_classes: int,
                 init_std: float) -> None:
        super().__init__()
        self.convs = nn.CellList([
            nn.Conv2d(ch, ch, 3, stride=1, pad_mode="pad", padding=1, has_bias=norm == "none",
                      weight_init=Normal(init_std), bias_init="zeros") for _ in range(n)])
        self.norms = nn.CellList([generator_norm(norm, ch, num_classes) for _ in range(n)])
        self.acts = nn.CellList([make_activation(activation) for _ in range(n)])
        self.n = n

    def construct(self, x: Tensor, y: Tensor = None) -> Tensor:
        for i in range(self.n):
            x = self.acts[i](self.norms[i](self.convs[i](x), y))
        return x


class _UpBlock(nn.Cell):
    """4x4 stride-2 transposed conv (doubles H and W) -> norm -> activation, then ``refine``
    stride-1 blocks at the new resolution."""

    def __init__(self, in_ch: int, out_ch: int, norm: str, activation: str, num_classes: int,
                 init_std: float, refine: int = 0) -> None:
        super().__init__()
        self.deconv = nn.Conv2dTranspose(in_ch, out_ch, 4, stride=2, pad_mode="pad", padding=1,
                                         has_bias=norm == "none", weight_init=Normal(init_std),
                                         bias_init="zeros")
        self.norm = generator_norm(norm, out_ch, num_classes)
        self.act = make_activation(activation)
        self.refine = _Refine(out_ch, refine, norm, activation, num_classes, init_std)

    def construct(self, x: Tensor, y: Tensor = None) -> Tensor:
        return self.refine(self.act(self.norm(self.deconv(x), y)), y)


class Generator(nn.Cell):
    """DCGAN generator: ``G(z)`` or ``G(z, y)`` -> images (B, channels, size, size) in [-1, 1].

    Args:
        z_dim: length of the latent vector z, shape (B, z_dim).
        channels: image channels (1 for MNIST, 3 for CIFAR-10 / CelebA).
        size: image side, one of 28, 32, 64.
        width: channels of the last hidden layer; earlier layers use 2x, 4x, 8x this.
        norm: "batch" (DCGAN) or "none".
        activation: hidden activation ("relu" in DCGAN).
        num_classes: > 0 makes the generator class-conditional.
        cond: how labels enter when conditional: "concat" (embedding concatenated to z) or
            "cbn" (class-conditional BatchNorm; needs norm="batch").
        embed_dim: size of the label embedding for cond="concat".
        init_std: std of the N(0, std) weight init (0.02 in DCGAN).
        refine: 3x3 stride-1 conv blocks added at every hidden resolution (0 in DCGAN): depth
            without more upsampling, for the 28x28 generator's two upsampling layers above all.
    """

    def __init__(self, z_dim: int = 100, channels: int = 1, size: int = 28, width: int = 64,
                 norm: str = "batch", activation: str = "relu", num_classes: int = 0,
                 cond: str = "concat", embed_dim: int = 50, init_std: float = 0.02,
                 refine: int = 0) -> None:
        super().__init__()
        _check_common(size, width, channels, activation, num_classes)
        check_positive_int("z_dim", z_dim)
        check_choice("norm", norm, G_NORMS)
        check_choice("cond", cond, G_CONDS)
        check_positive_int("embed_dim", embed_dim)
        check_positive_int("refine", refine, minimum=0)
        if num_classes > 0 and cond == "cbn" and norm != "batch":
            raise ValueError(f"cond='cbn' needs norm='batch'; got norm={norm!r}")
        start, n_up = GEOMETRY[size]
        widths = [width * 2 ** (n_up - 1 - i) for i in range(n_up)]  # e.g. 64: [8w, 4w, 2w, w]
        self.start = start
        self.widths0 = widths[0]
        self.concat_label = num_classes > 0 and cond == "concat"
        norm_classes = num_classes if cond == "cbn" else 0
        in_dim = z_dim
        if self.concat_label:
            # N(0, 1) like z, so labels and noise enter the first layer at the same scale.
            self.label_embed = nn.Embedding(num_classes, embed_dim, embedding_table=Normal(1.0))
            in_dim = z_dim + embed_dim
        self.fc = nn.Dense(in_dim, widths[0] * start * start, weight_init=Normal(init_std),
                           bias_init="zeros", has_bias=norm == "none")
        self.norm0 = generator_norm(norm, widths[0], norm_classes)
        self.act0 = make_activation(activation)
        self.refine0 = _Refine(widths[0], refine, norm, activation, norm_classes, init_std)
        self.blocks = nn.CellList([
            _UpBlock(widths[i], widths[i + 1], norm, activation, norm_classes, init_std, refine)
            for i in range(n_up - 1)
        ])
        self.to_image = nn.Conv2dTranspose(widths[-1], channels, 4, stride=2, pad_mode="pad",
                                           padding=1, has_bias=True,
                                           weight_init=Normal(init_std), bias_init="zeros")
        self.tanh = nn.Tanh()

    def construct(self, z: Tensor, y: Tensor = None) -> Tensor:
        if self.concat_label:
            z = ops.concat((z, self.label_embed(y)), 1)
        h = ops.reshape(self.fc(z), (-1, self.widths0, self.start, self.start))
        h = self.refine0(self.act0(self.norm0(h, y)), y)
        for block in self.blocks:
            h = block(h, y)
        return self.tanh(self.to_image(h))


class DownBlock(nn.Cell):
    """4x4 stride-2 conv (halves H and W) -> optional norm -> activation."""

    def __init__(self, in_ch: int, out_ch: int, norm: str, activation: str,
                 init_std: float) -> None:
        super().__init__()
        conv = nn.Conv2d(in_ch, out_ch, 4, stride=2, pad_mode="pad", padding=1,
                         has_bias=norm != "batch", weight_init=Normal(init_std),
                         bias_init="zeros")
        self.conv = maybe_spectral_norm(conv, norm == "spectral")
        if norm == "batch":
            self.norm = nn.BatchNorm2d(out_ch)
        else:
            self.norm = nn.Identity()
        self.act = make_activation(activation)

    def construct(self, x: Tensor) -> Tensor:
        return self.act(self.norm(self.conv(x)))


class Discriminator(nn.Cell):
    """DCGAN discriminator: ``D(x)`` or ``D(x, y)`` -> logits (B,) (raw, no sigmoid).

    Args:
        channels, size, width: as for :class:`Generator` (width = channels of the first conv).
        norm: "none", "batch" (DCGAN; never on the first layer) or "spectral" (SN-DCGAN,
            Miyato et al. 2018: spectral norm on every weight, no BatchNorm).
        activation: hidden activation ("leaky_relu", slope 0.2, in DCGAN).
        num_classes: > 0 makes it a projection discriminator taking labels y (B,) int32.
        projection: use the projection term when conditional.
        aux_classifier: also return class logits (B, num_classes): ``D(x, y) -> (logit, cls)``.
        init_std: std of the N(0, std) weight init.
    """

    def __init__(self, channels: int = 1, size: int = 28, width: int = 64, norm: str = "none",
                 activation: str = "leaky_relu", num_classes: int = 0, projection: bool = True,
                 aux_classifier: bool = False, init_std: float = 0.02) -> None:
        super().__init__()
        _check_common(size, width, channels, activation, num_classes)
        check_choice("norm", norm, D_NORMS)
        check_head_args(num_classes, projection, aux_classifier)
        end, n_down = GEOMETRY[size]
        widths = [width * 2 ** i for i in range(n_down)]  # e.g. 64: [w, 2w, 4w, 8w]
        first_norm = "spectral" if norm == "spectral" else "none"  # no BN on the input layer
        blocks = [DownBlock(channels, widths[0], first_norm, activation, init_std)]
        blocks += [DownBlock(widths[i - 1], widths[i], norm, activation, init_std)
                   for i in range(1, n_down)]
        self.blocks = nn.SequentialCell(blocks)
        self.flatten = nn.Flatten()
        self.head = ProjectionHead(widths[-1] * end * end, num_classes, projection,
                                   aux_classifier, spectral=norm == "spectral",
                                   weight_init=Normal(init_std))

    def construct(self, x: Tensor, y: Tensor = None):
        return self.head(self.flatten(self.blocks(x)), y)
