"""Exponential moving average of a player's weights, updated inside its jitted step.

Generators sampled from an EMA of their weights give visibly better images (Karras et al. 2018,
"Progressive Growing of GANs", Sec. 4; Yazici et al. 2019, "The Unusual Effectiveness of Averaging
in GAN Training"). The averages live in Parameters named ``ema.<parameter name>`` and are updated
with ``ops.assign`` right after each optimizer update (docs/mindspore-notes.md, item 18: ~1.5 ms
for 0.8M parameters). Pass a net's buffers (BatchNorm running statistics) as ``buffers`` to
average them too: a BatchNorm generator sampled with averaged weights but the live statistics
mixes two different networks and gives visibly blurrier images.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from mindspore import Parameter, ParameterTuple, Tensor, ops
from mindspore import dtype as mstype

from .player import PostUpdate

PREFIX = "ema"


class EMA(PostUpdate):
    """``avg <- d * avg + (1 - d) * param`` with ``d = min(decay, (1 + n) / (10 + n))`` after
    update ``n`` (the warm-up of TensorFlow's ExponentialMovingAverage), so early averages are
    not dominated by the random initialization."""

    def __init__(self, decay: float = 0.999, warmup: bool = True,
                 buffers: Sequence[Parameter] = ()) -> None:
        super().__init__()
        if not 0.0 < decay < 1.0:
            raise ValueError(f"EMA decay must be in (0, 1), got {decay}")
        self.decay, self.warmup = float(decay), bool(warmup)
        self.buffers = list(buffers)

    def init(self, params: Sequence[Parameter], prefix: str) -> None:
        known = {id(p) for p in params}
        self.params = ParameterTuple(
            list(params) + [b for b in self.buffers if id(b) not in known])
        self.averages = self.params.clone(prefix=PREFIX, init="same")
        for a in self.averages:
            a.requires_grad = False
        self.count = Parameter(Tensor(0, mstype.int64), name=f"{PREFIX}.{prefix}.count",
                               requires_grad=False)

    def state(self) -> list[Parameter]:
        return [*self.averages, self.count]

    def construct(self, params, token):
        n = ops.cast(ops.depend(self.count, token), mstype.float32)
        d = self.decay
        if self.warmup:
            d = ops.minimum(d, (1.0 + n) / (10.0 + n))
        for avg, p in zip(self.averages, self.params):
            new = avg * d + ops.depend(p, token) * (1.0 - d)
            token = ops.depend(token, ops.assign(avg, new))
        token = ops.depend(token, ops.assign_add(self.count, Tensor(1, mstype.int64)))
        return token

    @contextmanager
    def swapped_in(self) -> Iterator[None]:
        """Temporarily put the averages into the live parameters (e.g. to sample), in place so
        compiled graphs see them, and restore the live values afterwards."""
        live = [p.value().copy() for p in self.params]
        for p, a in zip(self.params, self.averages):
            ops.assign(p, a)
        try:
            yield
        finally:
            for p, v in zip(self.params, live):
                ops.assign(p, v)
