"""Optimizers and learning-rate schedules, described as data and built per player.

A player builds its optimizer only after it has given its parameters unique names, so each
optimizer spec is a small object with ``build(params)``. The learning rate lives in a Parameter
that the player's jitted step overwrites with ``lr * schedule(t)`` before each update.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from mindspore import Parameter, Tensor, nn, ops
from mindspore import dtype as mstype


class LRSchedule:
    """Multiplier of the base learning rate as a function of the update count ``t`` (a Tensor)."""

    def factor(self, t: Tensor) -> Tensor:  # pragma: no cover - interface
        raise NotImplementedError


@dataclass(frozen=True)
class LinearDecay(LRSchedule):
    """Constant until ``start`` updates, then linear to 0 at ``total`` (CycleGAN's schedule)."""

    start: int
    total: int

    def __post_init__(self) -> None:
        if not 0 <= self.start < self.total:
            raise ValueError(
                f"LinearDecay needs 0 <= start < total, got {self.start}, {self.total}"
            )

    def factor(self, t: Tensor) -> Tensor:
        t = ops.cast(t, mstype.float32)
        frac = (t - self.start) / float(self.total - self.start)
        return 1.0 - ops.clamp(frac, 0.0, 1.0)


@dataclass(frozen=True)
class CosineDecay(LRSchedule):
    """Half-cosine from 1 to ``floor`` over ``total`` updates (Loshchilov & Hutter 2017)."""

    total: int
    floor: float = 0.0

    def factor(self, t: Tensor) -> Tensor:
        frac = ops.clamp(ops.cast(t, mstype.float32) / float(self.total), 0.0, 1.0)
        return self.floor + (1.0 - self.floor) * 0.5 * (1.0 + ops.cos(frac * 3.141592653589793))


@dataclass(frozen=True)
class Optimizer:
    """Base of the optimizer specs: ``build(params)`` returns a MindSpore optimizer."""

    lr: float
    schedule: LRSchedule | None = None

    def build(self, params: Sequence[Parameter]) -> nn.Optimizer:  # pragma: no cover
        raise NotImplementedError

    def upgrade_state(self, stored: dict[str, Tensor], owner: str) -> dict[str, Tensor]:
        """A checkpoint's entries with the optimizer state an earlier gantrain wrote renamed to
        what :meth:`build` makes now; ``owner`` is the player prefixing the counters."""
        return stored

    def __post_init__(self) -> None:
        if not self.lr > 0:
            raise ValueError(f"{type(self).__name__}: lr must be > 0, got {self.lr}")


class _NoMomentumAdam(nn.Adam):
    """``nn.Adam`` with ``beta1 = 0``: the first moment is the gradient itself.

    ``nn.Adam``'s argument check refuses beta1 = 0, but its fused kernel computes
    ``m += (g - m) * (1 - beta1)``, which is exactly ``g`` at 0, and the bias correction
    ``1 - beta1_power`` is 1 from the first update on. One kernel per parameter instead of
    ``mint.optim.Adam``'s dozen element-wise ops (docs/mindspore-notes.md, item 15)."""

    def __init__(self, params: list[Parameter], lr: float, beta2: float, eps: float,
                 weight_decay: float) -> None:
        super().__init__(params, learning_rate=lr, beta1=0.5, beta2=beta2, eps=eps,
                         weight_decay=weight_decay)
        self.beta1 = Tensor(0.0, mstype.float32)  # read by construct and by the kernel


@dataclass(frozen=True)
class Adam(Optimizer):
    """Adam (Kingma & Ba 2015), as ``nn.Adam``'s fused kernel computes it: the bias corrections
    scale the step size and ``eps`` is added to the uncorrected ``sqrt(v)`` (the paper's
    "efficient" form; PyTorch adds it to the corrected one, which differs only while
    ``beta2 ** t`` is not negligible). ``beta1 = 0`` (WGAN-GP's setting) is supported."""

    betas: tuple[float, float] = (0.9, 0.999)
    eps: float = 1e-8
    weight_decay: float = 0.0

    def build(self, params: Sequence[Parameter]) -> nn.Optimizer:
        b1, b2 = (float(b) for b in self.betas)
        if not (0.0 <= b1 < 1.0 and 0.0 < b2 < 1.0):
            raise ValueError(f"Adam: betas must be in [0, 1) x (0, 1), got {self.betas}")
        if b1 == 0.0:
            return _NoMomentumAdam(list(params), self.lr, b2, self.eps, self.weight_decay)
        return nn.Adam(
            list(params), learning_rate=self.lr, beta1=b1, beta2=b2, eps=self.eps,
            weight_decay=self.weight_decay,
        )

    def upgrade_state(self, stored: dict[str, Tensor], owner: str) -> dict[str, Tensor]:
        """Until 2026-12-07 beta1 = 0 ran ``mint.optim.Adam``, whose state is ``exp_avg.*``,
        ``exp_avg_sq.*`` and a step count. The moments carry over as they are; ``nn.Adam``'s
        counters follow from the step count."""
        step_key = f"{owner}.state_step"
        if self.betas[0] != 0.0 or step_key not in stored:
            return stored
        renames = {"exp_avg.": "moment1.", "exp_avg_sq.": "moment2."}
        out: dict[str, Tensor] = {}
        for name, value in stored.items():
            old = next((o for o in renames if name.startswith(o)), None)
            out[renames[old] + name[len(old):] if old else name] = value
        step = int(out.pop(step_key).asnumpy().reshape(-1)[0])
        out[f"{owner}.global_step"] = Tensor([step], mstype.int32)
        out[f"{owner}.beta1_power"] = Tensor(0.0 if step else 1.0, mstype.float32)
        out[f"{owner}.beta2_power"] = Tensor(float(self.betas[1]) ** step, mstype.float32)
        out[f"{owner}.learning_rate"] = Tensor(self.lr, mstype.float32)  # reset every step
        return out


@dataclass(frozen=True)
class SGD(Optimizer):
    """Plain SGD, or heavy-ball / Nesterov momentum when ``momentum > 0``."""

    momentum: float = 0.0
    nesterov: bool = False

    def build(self, params: Sequence[Parameter]) -> nn.Optimizer:
        if self.momentum > 0:
            return nn.Momentum(
                list(params), learning_rate=self.lr, momentum=self.momentum,
                use_nesterov=self.nesterov,
            )
        return nn.SGD(list(params), learning_rate=self.lr)


@dataclass(frozen=True)
class RMSProp(Optimizer):
    """RMSProp (Tieleman & Hinton 2012); the original WGAN optimizer."""

    decay: float = 0.9
    eps: float = 1e-8

    def build(self, params: Sequence[Parameter]) -> nn.Optimizer:
        return nn.RMSProp(list(params), learning_rate=self.lr, decay=self.decay, epsilon=self.eps)


def lr_parameter(optimizer: nn.Cell) -> Parameter:
    """The Parameter holding the (single) learning rate of a built ``nn`` optimizer."""
    lr = getattr(optimizer, "learning_rate", None)
    if isinstance(lr, Parameter):
        return lr
    raise TypeError(f"cannot find the learning-rate Parameter of {type(optimizer).__name__}")
