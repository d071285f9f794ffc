"""MLP generator and discriminator for low-dimensional data such as the 2D mixtures."""

from __future__ import annotations

from mindspore import nn, ops

from .layers import check_choice, check_positive_int, make_activation

ACTIVATIONS = ("relu", "leaky_relu", "tanh", "elu", "maxout")
POOLINGS = ("concat", "set")


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


def _stack(d_in: int, width: int, depth: int, activation: str, pieces: int) -> list[nn.Cell]:
    """``depth`` hidden layers of ``width`` units."""
    for arg, value in (("width", width), ("depth", depth), ("d_in", d_in)):
        if value < 1:
            raise ValueError(f"{arg} must be >= 1, got {value}")
    check_choice("activation", activation, ACTIVATIONS)
    check_positive_int("pieces", pieces)
    if (activation == "maxout") != (pieces > 1):
        raise ValueError(f"pieces={pieces} with activation={activation!r}: maxout takes "
                         "pieces >= 2, every other activation pieces = 1")
    dims = [d_in] + [width] * depth
    return [layer for a, b in zip(dims[:-1], dims[1:])
            for layer in _hidden(a, b, activation, pieces)]


def _mlp(d_in: int, d_out: int, width: int, depth: int, activation: str,
         pieces: int = 1) -> nn.SequentialCell:
    """``depth`` hidden layers of ``width``, then a linear layer to ``d_out``."""
    if d_out < 1:
        raise ValueError(f"d_out must be >= 1, got {d_out}")
    return nn.SequentialCell(_stack(d_in, width, depth, activation, pieces)
                             + [nn.Dense(width, d_out)])


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
    maxout hidden layers, as the PacGAN 2D discriminator (200 units, 5 pieces).

    ``pack`` and ``shared`` are for PacGAN: the input is ``pack`` samples side by side
    (``in_dim = pack x`` one sample's size), and the first ``shared`` hidden layers read each
    sample alone, with the same weights for every sample, before the remaining ``depth -
    shared`` layers read the ``pack`` feature vectors together. A plain MLP reads the packed
    ``in_dim`` at once and must resolve the product of the data's modes in ``in_dim``
    dimensions (25^3 on the 2D grid packed by 3); the shared layers learn one sample's modes
    once and leave the joint layers to compare the samples.

    ``pooling`` says how the joint layers read the ``pack`` feature vectors: ``"concat"``
    (PacGAN's: side by side, one set of joint weights per position in the pack) or ``"set"``
    (their mean and their maximum, Zaheer et al. 2017's Deep Sets: the same for any order of
    the samples, so what the joint layers learn about one position serves all; the mean sees
    repeated modes within a pack, the maximum a single off-mode sample).

    ``sample_head`` (with ``shared``) adds a linear score of each sample's shared features,
    averaged over the pack, to the joint logit. A packed D scores m samples with one logit, so
    one bad sample among m moves it by about 1/m of what it moves an unpacked D: the per-sample
    term keeps that signal at full strength while the joint layers still judge the pack.
    """

    def __init__(
        self, in_dim: int = 2, width: int = 128, depth: int = 3, activation: str = "relu",
        pieces: int = 1, pack: int = 1, shared: int = 0, sample_head: bool = False,
        pooling: str = "concat",
    ) -> None:
        super().__init__()
        check_positive_int("pack", pack)
        if isinstance(shared, bool) or not isinstance(shared, int) or not 0 <= shared < depth:
            raise ValueError(f"shared={shared!r} must be an int in [0, depth) = [0, {depth}): "
                             "the last hidden layers read the samples together")
        if pack > 1 and not shared:  # a plain MLP reads the packed in_dim; pack would be unused
            raise ValueError(f"pack={pack} is read only with shared >= 1 (per-sample layers); "
                             "a plain MLP takes packed samples through in_dim alone")
        if shared and (pack < 2 or in_dim % pack):
            raise ValueError(f"shared={shared} needs pack >= 2 dividing in_dim; got pack={pack}, "
                             f"in_dim={in_dim}")
        if sample_head and not shared:
            raise ValueError("sample_head=True scores each sample's shared features; it needs "
                             "shared >= 1")
        check_choice("pooling", pooling, POOLINGS)
        if pooling != "concat" and not shared:
            raise ValueError(f"pooling={pooling!r} pools the shared features of the packed "
                             "samples; it needs shared >= 1")
        self.pack, self.shared, self.set_pooling = pack, shared, pooling == "set"
        self.sample_head = nn.Dense(width, 1) if sample_head else None
        if shared:
            self.per_sample = nn.SequentialCell(
                _stack(in_dim // pack, width, shared, activation, pieces))
            in_dim, depth = (2 if self.set_pooling else pack) * width, depth - shared
        self.net = _mlp(in_dim, 1, width, depth, activation, pieces)

    def construct(self, x):
        if self.shared:
            n, m = x.shape[0], self.pack
            h = self.per_sample(ops.reshape(x, (n * m, x.shape[1] // m)))  # (n*m, width)
            if self.set_pooling:
                per_pack = ops.reshape(h, (n, m, -1))
                x = ops.concat((per_pack.mean(1), ops.amax(per_pack, 1)), -1)  # (n, 2 * width)
            else:
                x = ops.reshape(h, (n, -1))
            if self.sample_head is not None:
                each = ops.reshape(self.sample_head(h), (n, m)).mean(-1)
                return self.net(x).squeeze(-1) + each
        return self.net(x).squeeze(-1)
