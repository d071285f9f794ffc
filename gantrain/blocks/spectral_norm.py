"""Spectral normalization of a layer's weight (Miyato et al., 2018, "Spectral Normalization for
Generative Adversarial Networks", ICLR).

The wrapped layer computes with ``W / sigma(W)``, where ``sigma`` is the largest singular value of
the weight reshaped to a matrix with one row per output unit. ``sigma`` is estimated by one (or a
few) steps of power iteration per training forward pass, warm-started from the previous estimate,
so the estimate converges as training proceeds. MindSpore 2.10 has no built-in for this.

Why a wrapper Cell and not a weight hook: MindSpore has no parametrization hooks, and a compiled
graph (``@ms.jit``) only sees in-place writes to Parameters (``ops.assign``), never host-side
``set_data``. So the raw weight stays the wrapped layer's trainable Parameter, the power-iteration
vector ``u`` lives in a non-trainable Parameter updated with ``ops.assign``, and the wrapper calls
the layer's own primitive with the normalized weight.

No randomness is drawn at run time: ``u`` is initialised once, on construction, through MindSpore's
initializer (so ``ms.set_seed`` controls it like every other weight), which keeps exact resume
possible: ``u`` is saved and restored with the checkpoint like any Parameter.
"""

from __future__ import annotations

import numpy as np
from mindspore import Parameter, Tensor, nn, ops
from mindspore.common.initializer import Normal, initializer

__all__ = ["SpectralNorm", "spectral_norm"]

# Supported layer kinds, with the name of the weight Parameter on the wrapped layer.
_WEIGHT_ATTR = {
    "dense": "weight",  # (out, in)
    "conv": "weight",  # (out, in / group, kh, kw)
    "deconv": "weight",  # (in, out / group, kh, kw): rows are the *second* axis, as in PyTorch
    "embedding": "embedding_table",  # (vocab, dim): one row per class vector
}
_SUPPORTED = "nn.Dense, nn.Conv2d, nn.Conv2dTranspose, nn.Embedding"


def _layer_kind(layer: nn.Cell) -> str:
    # Conv2dTranspose is not a subclass of Conv2d in MindSpore, but check it first anyway.
    if isinstance(layer, nn.Conv2dTranspose):
        return "deconv"
    if isinstance(layer, nn.Conv2d):
        return "conv"
    if isinstance(layer, nn.Dense):
        return "dense"
    if isinstance(layer, nn.Embedding):
        return "embedding"
    raise ValueError(
        f"layer={type(layer).__name__} is not supported by SpectralNorm; "
        f"allowed layer types: {_SUPPORTED}"
    )


def _check_deconv(layer: nn.Conv2dTranspose) -> None:
    """Reject transposed-conv settings this wrapper does not reproduce."""
    if layer.output_padding not in (0, (0, 0)):
        raise ValueError(
            f"output_padding={layer.output_padding!r} is not supported by SpectralNorm; "
            "allowed values: 0"
        )
    if layer.data_format != "NCHW":
        raise ValueError(
            f"data_format={layer.data_format!r} is not supported by SpectralNorm; "
            "allowed values: 'NCHW'"
        )


def _deconv_length(length: int, kernel: int, stride: int, dilation: int, pad_total: int,
                   pad_mode: str) -> int:
    """Output length of a transposed convolution, as ``nn.Conv2dTranspose`` computes it."""
    kernel = kernel + (kernel - 1) * (dilation - 1)
    if pad_mode == "same":
        return length * stride
    if pad_mode == "valid":
        return length * stride + max(kernel - stride, 0)
    return length * stride - pad_total + kernel - stride


def _l2_normalize(x: Tensor, eps: float) -> Tensor:
    """``x / max(||x||, eps)`` for a vector, as ``torch.nn.functional.normalize``."""
    norm = ops.sqrt(ops.reduce_sum(x * x))
    return x / ops.maximum(norm, eps)


class SpectralNorm(nn.Cell):
    """Wrap ``layer`` so it computes with its weight divided by the weight's spectral norm.

    Args:
        layer: an ``nn.Dense``, ``nn.Conv2d``, ``nn.Conv2dTranspose`` (no ``output_padding``)
            or ``nn.Embedding``. Its weight stays the trainable Parameter (gradients reach it
            through the division by sigma); its bias and Dense activation are applied as usual.
        n_power_iterations: power-iteration steps per training forward pass (Miyato et al. use 1).
        eps: floor on vector norms in the power iteration, to avoid dividing by zero.

    In train mode (``set_train(True)``) each forward pass refines ``u`` and stores it with
    ``ops.assign``; in eval mode ``u`` is left untouched and sigma is computed from it. The weight
    is reshaped to a matrix with one row per output unit (for ``Conv2dTranspose``: per output
    channel, i.e. the weight's second axis, matching ``torch.nn.utils.spectral_norm``).
    """

    def __init__(self, layer: nn.Cell, n_power_iterations: int = 1, eps: float = 1e-12) -> None:
        super().__init__()
        kind = _layer_kind(layer)
        if isinstance(n_power_iterations, bool) or not isinstance(n_power_iterations, int) \
                or n_power_iterations < 1:
            raise ValueError(
                f"n_power_iterations={n_power_iterations!r} is invalid; allowed values: int >= 1"
            )
        if not eps > 0:
            raise ValueError(f"eps={eps!r} is invalid; allowed values: float > 0")
        if kind == "deconv":
            _check_deconv(layer)
        self.layer = layer
        self.kind = kind
        self.weight_attr = _WEIGHT_ATTR[kind]
        self.n_power_iterations = n_power_iterations
        self.eps = float(eps)
        rows = self._matrix_shape()[0]
        # Drawn through MindSpore's initializer so ms.set_seed governs it; normalised on the host
        # so that eval-mode sigma is meaningful even before the first training step.
        u0 = initializer(Normal(1.0), (rows,)).init_data().asnumpy().astype(np.float32)
        u0 /= max(float(np.linalg.norm(u0)), self.eps)
        self.weight_u = Parameter(Tensor(u0), name="weight_u", requires_grad=False)

    def _raw_weight(self) -> Parameter:
        return getattr(self.layer, self.weight_attr)

    def _matrix_shape(self) -> tuple[int, int]:
        shape = self._raw_weight().shape
        if self.kind == "deconv":
            rows = shape[1]
        else:
            rows = shape[0]
        return rows, int(np.prod(shape)) // rows

    def _weight_matrix(self) -> Tensor:
        """The raw weight as a (rows, cols) matrix, rows = output units."""
        w = self._raw_weight()
        if self.kind == "deconv":
            # (in, out/g, kh, kw) -> (out/g, in, kh, kw) so that rows are output channels.
            w = ops.transpose(w, (1, 0, 2, 3))
        return ops.reshape(w, (w.shape[0], -1))

    def _power_iteration(self, w_mat: Tensor) -> tuple[Tensor, Tensor]:
        """Return the (u, v) singular-vector estimates, without gradient."""
        u = self.weight_u
        if self.training:
            for _ in range(self.n_power_iterations):
                v = _l2_normalize(ops.matmul(u, w_mat), self.eps)  # (cols,) = W^T u
                u = _l2_normalize(ops.matmul(w_mat, v), self.eps)  # (rows,) = W v
        v = _l2_normalize(ops.matmul(u, w_mat), self.eps)
        return ops.stop_gradient(u), ops.stop_gradient(v)

    def normalized_weight(self) -> Tensor:
        """``W / sigma(W)`` in the wrapped layer's weight shape; updates ``u`` in train mode.

        Gradients flow to W through both the numerator and sigma = u^T W v (u, v held fixed),
        as in Miyato et al. (2018), Eq. 12.
        """
        w_mat = self._weight_matrix()
        u, v = self._power_iteration(w_mat)
        if self.training:
            u = ops.depend(u, ops.assign(self.weight_u, u))
        sigma = ops.reduce_sum(u * ops.matmul(w_mat, v))
        return self._raw_weight() / sigma

    def sigma(self) -> Tensor:
        """Current spectral-norm estimate ``||W^T u||`` from the stored ``u``; changes nothing."""
        wt_u = ops.matmul(self.weight_u, self._weight_matrix())  # (cols,)
        return ops.sqrt(ops.reduce_sum(wt_u * wt_u))

    def construct(self, x: Tensor) -> Tensor:
        w = self.normalized_weight()
        if self.kind == "dense":
            return self._dense(x, w)
        if self.kind == "conv":
            return self._conv(x, w)
        if self.kind == "deconv":
            return self._deconv(x, w)
        return ops.gather(w, x, 0)

    def _dense(self, x: Tensor, w: Tensor) -> Tensor:
        layer = self.layer
        out = ops.matmul(x, ops.transpose(w, (1, 0)))
        if layer.has_bias:
            out = out + layer.bias
        if layer.activation_flag:
            out = layer.activation(out)
        return out

    def _conv(self, x: Tensor, w: Tensor) -> Tensor:
        # Reuse the layer's configured Conv2D primitive: stride/pad/dilation/group stay in sync.
        layer = self.layer
        out = layer.conv2d(x, w)
        if layer.has_bias:
            out = layer.bias_add(out, layer.bias)
        return out

    def _deconv(self, x: Tensor, w: Tensor) -> Tensor:
        layer = self.layer
        n, _, h, wd = x.shape
        pad = layer.padding
        if isinstance(pad, int):
            pad = (pad, pad, pad, pad)
        h_out = _deconv_length(h, layer.kernel_size[0], layer.stride[0], layer.dilation[0],
                               pad[0] + pad[1], layer.pad_mode)
        w_out = _deconv_length(wd, layer.kernel_size[1], layer.stride[1], layer.dilation[1],
                               pad[2] + pad[3], layer.pad_mode)
        out = layer.conv2d_transpose(x, w, (n, layer.out_channels, h_out, w_out))
        if layer.has_bias:
            out = layer.bias_add(out, layer.bias)
        return out


def spectral_norm(layer: nn.Cell, n_power_iterations: int = 1, eps: float = 1e-12) -> SpectralNorm:
    """Return ``layer`` wrapped in :class:`SpectralNorm` (Miyato et al., 2018)."""
    return SpectralNorm(layer, n_power_iterations=n_power_iterations, eps=eps)
