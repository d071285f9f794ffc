"""Gradient penalties and weight clipping for discriminators.

The penalties differentiate through an input gradient (grad of grad). Under ``@ms.jit`` that
second-order gradient is right; in PyNative mode it silently comes back as zero for some layers
(docs/mindspore-notes.md, item 14). The functions here are meant to run inside a player's jitted
step, which is where :mod:`gantrain.gan` puts them; ``tests/test_penalties.py`` checks them
against finite differences under jit.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import mindspore as ms
from mindspore import Parameter, Tensor, ops

from ..engine.player import PostUpdate

DApply = Callable[[Tensor, Tensor], Tensor]  # (images, labels) -> logits of shape (B,)


def _per_sample_sq_norm(g: Tensor) -> Tensor:
    return ops.reshape(ops.square(g), (g.shape[0], -1)).sum(axis=1)


def make_gradient_penalty(d_apply: DApply) -> Callable[[Tensor, Tensor, Tensor, Tensor], Tensor]:
    """WGAN-GP penalty E[(||grad_x D(x_hat)||_2 - 1)^2] at x_hat = eps*real + (1-eps)*fake,
    eps ~ U[0, 1] per sample, drawn by the caller (Gulrajani et al. 2017, Algorithm 1)."""

    def d_sum(x, y):
        return d_apply(x, y).sum()

    grad_x = ms.grad(d_sum, grad_position=0)

    def penalty(real, fake, y, eps):
        x_hat = eps * real + (1.0 - eps) * fake
        norm = ops.sqrt(_per_sample_sq_norm(grad_x(x_hat, y)) + 1e-12)
        return ops.square(norm - 1.0).mean()

    return penalty


def make_r1(d_apply: DApply) -> Callable[[Tensor, Tensor], tuple[Tensor, Tensor]]:
    """R1 (or R2 on fakes): E[||grad_x D(x)||^2] on real data (Mescheder et al. 2018, eq. 9).

    Returns ``(penalty, logits)``: the output and its input gradient come from one call, since
    computing ``D(x)`` and ``grad D(x)`` separately on one tensor fails to compile in
    MindSpore 2.10 ("Graph cycle exists"). Multiply by gamma / 2 at the call site.
    """

    def d_out(x, y):
        logits = d_apply(x, y)
        return logits.sum(), logits

    value_and_grad_x = ms.value_and_grad(d_out, grad_position=0, has_aux=True)

    def penalty(x, y):
        (_, logits), g = value_and_grad_x(x, y)
        return _per_sample_sq_norm(g).mean(), logits

    return penalty


class ClipWeights(PostUpdate):
    """Clamp every updated parameter to [-limit, limit] after each update: the original
    WGAN's Lipschitz constraint (Arjovsky et al. 2017, Algorithm 1, c = 0.01)."""

    def __init__(self, limit: float = 0.01) -> None:
        super().__init__()
        if limit <= 0:
            raise ValueError(f"ClipWeights: limit must be > 0, got {limit}")
        self.limit = float(limit)

    def init(self, params: Sequence[Parameter], prefix: str) -> None:
        pass

    def construct(self, params, token):
        for p in params:
            token = ops.depend(
                ops.assign(p, ops.clamp(ops.depend(p, token), -self.limit, self.limit)), token
            )
        return token
