"""Building blocks shared by the reference models: argument checks, activations, conditional
BatchNorm and the projection discriminator head."""

from __future__ import annotations

from mindspore import Tensor, nn, ops
from mindspore.common.initializer import Normal

from ..blocks.spectral_norm import spectral_norm

ACTIVATIONS = ("relu", "leaky_relu", "elu", "silu")  # for hidden layers of conv nets


# --- argument checks -------------------------------------------------------------------------

def check_choice(name: str, value: object, allowed: tuple) -> None:
    """Raise ValueError naming the argument, its value and the allowed values."""
    if isinstance(value, bool) or value not in allowed:
        raise ValueError(
            f"{name}={value!r} is not supported; allowed values: {', '.join(map(repr, allowed))}"
        )


def check_positive_int(name: str, value: object, minimum: int = 1) -> None:
    """Raise ValueError unless ``value`` is an int >= ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"{name}={value!r} is invalid; allowed values: int >= {minimum}")


def check_head_args(num_classes: int, projection: bool, aux_classifier: bool) -> None:
    """Validate the conditioning arguments of a discriminator head."""
    check_positive_int("num_classes", num_classes, minimum=0)
    if aux_classifier and num_classes == 0:
        raise ValueError("aux_classifier=True requires num_classes > 0; got num_classes=0")
    if num_classes > 0 and not (projection or aux_classifier):
        raise ValueError(
            f"num_classes={num_classes} with projection=False and aux_classifier=False would "
            "ignore the labels; allowed: projection=True and/or aux_classifier=True"
        )


# --- small blocks ------------------------------------------------------------------------------

def make_activation(name: str, allowed: tuple[str, ...] = ACTIVATIONS) -> nn.Cell:
    """Activation Cell by name (one of ``allowed``); LeakyReLU uses slope 0.2 as in DCGAN."""
    check_choice("activation", name, allowed)
    if name == "relu":
        return nn.ReLU()
    if name == "leaky_relu":
        return LeakyReLU(0.2)
    if name == "elu":
        return nn.ELU()
    if name == "tanh":
        return nn.Tanh()
    return nn.SiLU()


class LeakyReLU(nn.Cell):
    """``x if x > 0 else slope * x``, computed as ``x * select(x > 0, 1, slope)``.

    The values of ``nn.LeakyReLU`` bit for bit, and its gradient everywhere but at exact
    zeros, where this one gives ``slope`` as PyTorch does (``nn.LeakyReLU``'s
    ``maximum(slope * x, x)`` splits the tie: ``(1 + slope) / 2``). Exact zeros do reach D
    (DiffAugment's cutout and zero padding meet zero-initialised biases). It is faster on CPU:
    its backward pass is one multiply by the saved factor instead of a MaximumGrad kernel; the
    default DCGAN's steps ran x1.18 faster idle (docs/performance.md, "Levers per offender").
    No Parameters, so checkpoints are unaffected.
    """

    def __init__(self, slope: float) -> None:
        super().__init__()
        self.slope = slope

    def construct(self, x: Tensor) -> Tensor:
        return x * ops.select(x > 0, ops.ones_like(x), ops.fill(x.dtype, x.shape, self.slope))


class ConditionalBatchNorm2d(nn.Cell):
    """BatchNorm whose scale and shift are looked up per class (de Vries et al., 2017).

    ``construct(x, y)``: x (B, C, H, W), y (B,) int32. Scales start at 1, shifts at 0, so at
    initialisation it equals plain BatchNorm.
    """

    def __init__(self, num_features: int, num_classes: int) -> None:
        super().__init__()
        self.num_features = num_features
        self.bn = nn.BatchNorm2d(num_features, affine=False)
        self.gamma = nn.Embedding(num_classes, num_features, embedding_table="ones")
        self.beta = nn.Embedding(num_classes, num_features, embedding_table="zeros")

    def construct(self, x: Tensor, y: Tensor) -> Tensor:
        shape = (-1, self.num_features, 1, 1)
        gamma = ops.reshape(self.gamma(y), shape)
        beta = ops.reshape(self.beta(y), shape)
        return self.bn(x) * gamma + beta


class _BatchNorm(nn.Cell):
    """Plain BatchNorm2d with the (x, y) call signature of ConditionalBatchNorm2d."""

    def __init__(self, num_features: int) -> None:
        super().__init__()
        self.bn = nn.BatchNorm2d(num_features)

    def construct(self, x: Tensor, y: Tensor = None) -> Tensor:
        return self.bn(x)


class _NoNorm(nn.Cell):
    """Identity with the (x, y) call signature of ConditionalBatchNorm2d."""

    def construct(self, x: Tensor, y: Tensor = None) -> Tensor:
        return x


def generator_norm(norm: str, num_features: int, num_classes: int = 0) -> nn.Cell:
    """A norm Cell called as ``norm(x, y)``: conditional BN when ``num_classes > 0``."""
    if norm == "none":
        return _NoNorm()
    if num_classes > 0:
        return ConditionalBatchNorm2d(num_features, num_classes)
    return _BatchNorm(num_features)


class ProjectionHead(nn.Cell):
    """Discriminator output layer on pooled/flattened features ``h`` of shape (B, F).

    Unconditional: ``logit = linear(h)``. With ``projection`` (Miyato & Koyama, 2018, Eq. 3):
    ``logit = linear(h) + sum(embed(y) * h, axis=1)``. With ``aux_classifier`` it also returns
    ``class_logits = linear_cls(h)`` of shape (B, num_classes), for an ACGAN loss. With
    ``spectral`` every weight (including the class embedding) is spectrally normalized.
    """

    def __init__(self, features: int, num_classes: int = 0, projection: bool = True,
                 aux_classifier: bool = False, spectral: bool = False,
                 weight_init: object = None) -> None:
        super().__init__()
        check_head_args(num_classes, projection, aux_classifier)
        self.use_projection = num_classes > 0 and projection
        self.aux_classifier = aux_classifier
        init = weight_init if weight_init is not None else Normal(0.02)
        self.linear = maybe_spectral_norm(
            nn.Dense(features, 1, weight_init=init, bias_init="zeros"), spectral)
        if self.use_projection:
            self.embed = maybe_spectral_norm(
                nn.Embedding(num_classes, features, embedding_table=init), spectral)
        if aux_classifier:
            self.classifier = maybe_spectral_norm(
                nn.Dense(features, num_classes, weight_init=init, bias_init="zeros"), spectral)

    def construct(self, h: Tensor, y: Tensor = None):
        logit = ops.reshape(self.linear(h), (-1,))  # (B, 1) -> (B,)
        if self.use_projection:
            logit = logit + ops.reduce_sum(self.embed(y) * h, 1)
        if self.aux_classifier:
            return logit, self.classifier(h)
        return logit


def maybe_spectral_norm(layer: nn.Cell, spectral: bool) -> nn.Cell:
    return spectral_norm(layer) if spectral else layer


# --- DCGAN ---------------------------------------------------------------------------------------
