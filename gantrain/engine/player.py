"""A player: one model (or a group of Cells trained together) with its loss, optimizer and step.

Building the step creates ONE ``ms.value_and_grad(loss_fn, None, optimizer.parameters,
has_aux=True)`` and ONE ``@ms.jit`` function that computes loss, aux and gradients, passes the
gradients through the player's transforms, and updates with ``ops.depend(loss, optimizer(grads))``.
Each player has its own compiled step, so its optimizer state never meets another player's in a
graph, and a step changes only the player's own trainable parameters. The same step, not
compiled (:meth:`Player.body`), is what :mod:`.fused` calls to put several players' steps, over
several iterations, into one compiled call.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import mindspore as ms
from mindspore import Parameter, Tensor, nn, ops
from mindspore import dtype as mstype

from . import dist, runtime
from .optim import LRSchedule, Optimizer, lr_parameter
from .transforms import Chain, GradientTransform, global_norm

LossFn = Callable[..., tuple[Tensor, Any]]
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class PostUpdate(nn.Cell):
    """Runs inside the step right after the optimizer: ``construct(params, token) -> token``.

    ``token`` orders the work after the update (read parameters through ``ops.depend``).
    Used for WGAN weight clipping and EMA.
    """

    def init(self, params: Sequence[Parameter], prefix: str) -> None:
        """Create state for ``params``; ``prefix`` makes state names unique per player."""

    def state(self) -> list[Parameter]:
        return []

    def construct(self, params, token):
        return token


def _check_loss_fn(loss_fn: Any, player: str) -> None:
    if not callable(loss_fn):
        raise TypeError(f"player {player}: loss_fn must be callable, got {type(loss_fn).__name__}")
    if getattr(loss_fn, "__name__", "") == "<lambda>":
        # The graph compiler fails on lambdas with "Parse Lambda Function Fail"
        # (docs/mindspore-notes.md, item 13).
        raise TypeError(
            f"player {player}: loss_fn is a lambda, which MindSpore's graph compiler cannot "
            "parse; define it with def"
        )


def _own_optimizer_names(optimizer: nn.Cell, params: Sequence[Parameter], player: str) -> None:
    """Prefix the optimizer's own counters (``global_step``, ``learning_rate``,
    ``beta1_power``, ...) with the player's name. Every optimizer calls them the same, and one
    graph may not hold two Parameters of one name (docs/mindspore-notes.md, item 8), which
    several players' steps in one compiled call (:mod:`.fused`) would. Moments are already
    unique (``moment1.<param>``). Checkpoints written before this read back by their bare
    names (:func:`~gantrain.engine.checkpoint.load_parameters`)."""
    trainable = {p.name for p in params}
    state = list(optimizer.get_parameters()) + [lr_parameter(optimizer)]
    for p in {id(p): p for p in state}.values():
        if p.name in trainable or any(p.name.endswith("." + t) for t in trainable):
            continue
        if not p.name.startswith(f"{player}."):
            p.name = f"{player}.{p.name}"


def _counter(name: str) -> Parameter:
    return Parameter(Tensor(0, mstype.int64), name=name, requires_grad=False)


def prefix_parameters(nets: Mapping[str, nn.Cell], prefix: str) -> None:
    """Give every parameter of ``nets`` a name unique to this player (docs/mindspore-notes.md,
    item 8).

    MindSpore rejects a graph in which two parameters share a name, and a discriminator step
    runs the generator too, so two nets with a sub-cell called ``fc`` would collide. Renaming
    is done once, on the nets themselves, before any optimizer exists; it is idempotent.
    """
    for key, net in nets.items():
        want = f"{prefix}." if len(nets) == 1 else f"{prefix}.{key}."
        params = net.parameters_dict()
        if params and not all(name.startswith(want) for name in params):
            net.update_parameters_name(want)


class Player:
    """One trainable party of a multi-model setup.

    Args:
        name: identifier used in logs, checkpoints and parameter names (``"D"``, ``"G"``).
        nets: the Cell(s) whose trainable parameters this player updates.
        loss_fn: ``loss_fn(*inputs) -> (loss, aux)``; only ``loss`` is differentiated. Make
            ``aux`` a dict of scalar Tensors to have them logged.
        optimizer: an optimizer spec such as ``gantrain.Adam(lr=2e-4, betas=(0.5, 0.999))``.
        transforms: gradient transforms applied, in order, before the update.
        accumulate: update every ``accumulate``-th call with the mean gradient of those calls.
        skip_nonfinite: skip the update (and count it in ``skipped``) when the loss or a
            gradient is NaN/inf, leaving weights and optimizer state unchanged.
        post_update: :class:`PostUpdate` cells run after each update (weight clipping, EMA).
    """

    def __init__(
        self,
        name: str,
        nets: nn.Cell | Mapping[str, nn.Cell],
        loss_fn: LossFn,
        optimizer: Optimizer,
        transforms: Sequence[GradientTransform] = (),
        accumulate: int = 1,
        skip_nonfinite: bool = True,
        post_update: Sequence[PostUpdate] = (),
    ) -> None:
        if not _NAME.match(name):
            raise ValueError(f"player name must be an identifier, got {name!r}")
        if isinstance(accumulate, bool) or not isinstance(accumulate, int) or accumulate < 1:
            raise ValueError(f"player {name}: accumulate must be an int >= 1, got {accumulate!r}")
        if not isinstance(optimizer, Optimizer):
            raise TypeError(
                f"player {name}: optimizer must be a gantrain optimizer spec such as "
                f"gantrain.Adam(lr=...), got {type(optimizer).__name__}"
            )
        self.name = name
        self.nets = dict(nets) if isinstance(nets, Mapping) else {name: nets}
        for key, net in self.nets.items():
            if not isinstance(net, nn.Cell):
                raise TypeError(f"player {name}: net {key!r} is {type(net).__name__}, not nn.Cell")
        _check_loss_fn(loss_fn, name)
        prefix_parameters(self.nets, name)
        params = self._trainable_parameters()
        self.spec = optimizer
        self.optimizer = optimizer.build(params)
        _own_optimizer_names(self.optimizer, params, name)
        self.transform = Chain(*transforms)
        self.transform.init(params, f"{name}.grad")
        self.post_update = nn.CellList(list(post_update))
        for i, post in enumerate(self.post_update):
            post.init(params, f"{name}.post{i}")
        self.accumulate = accumulate
        self.skip_nonfinite = skip_nonfinite
        self.updates = _counter(f"{name}.updates")
        self.skipped = _counter(f"{name}.skipped")
        self.grad_norm = Parameter(Tensor(0.0, mstype.float32), f"{name}.grad_norm", False)
        # multiplies the learning rate; lowered by the divergence guard after a rollback
        self.lr_scale = Parameter(Tensor(1.0, mstype.float32), f"{name}.lr_scale", False)
        if accumulate > 1:
            self.acc_count = _counter(f"{name}.acc_count")
            self.acc_grads = self.optimizer.parameters.clone(prefix=f"{name}.acc", init="zeros")
        self._objectives: dict[str, LossFn] = {"": loss_fn}
        self._bodies: dict[str, Callable[..., tuple[Tensor, Any]]] = {}
        self._steps: dict[str, Callable[..., tuple[Tensor, Any]]] = {}

    def _trainable_parameters(self) -> list[Parameter]:
        seen: dict[int, Parameter] = {}
        for net in self.nets.values():
            for p in net.trainable_params():
                seen.setdefault(id(p), p)
        if not seen:
            raise ValueError(f"player {self.name}: its nets have no trainable parameters")
        return list(seen.values())

    @property
    def parameters(self) -> tuple[Parameter, ...]:
        return tuple(self.optimizer.parameters)

    def state(self) -> list[Parameter]:
        """Every Parameter needed to resume this player exactly (weights, buffers, optimizer,
        transform and counter state), without duplicates."""
        groups = [p for net in self.nets.values() for p in net.get_parameters()]
        groups += list(self.optimizer.get_parameters())
        groups += self.transform.state()
        groups += [p for post in self.post_update for p in post.state()]
        groups += [self.updates, self.skipped, self.lr_scale]
        if self.accumulate > 1:
            groups += [self.acc_count, *self.acc_grads]
        unique: dict[int, Parameter] = {}
        for p in groups:
            unique.setdefault(id(p), p)
        return list(unique.values())

    def upgrade_checkpoint(self, stored: dict[str, Tensor]) -> dict[str, Tensor]:
        """This player's checkpoint entries, with state an earlier gantrain wrote under other
        names (e.g. its optimizer's) renamed to this build's."""
        return self.spec.upgrade_state(stored, self.name)

    def set_lr_schedule(self, schedule: LRSchedule | None) -> None:
        """Replace the learning-rate schedule of the optimizer spec; only before the first step
        compiles it (a run fits decaying schedules to its phase list this way)."""
        if self._bodies or self._steps:
            raise RuntimeError(f"player {self.name}: set_lr_schedule after its step compiled")
        self.spec = dataclasses.replace(self.spec, schedule=schedule)

    def objective(self, name: str, loss_fn: LossFn) -> Objective:
        """A second loss for the same parameters and optimizer, with its own compiled step
        (e.g. a lazy regularizer run every k iterations). Transforms and counters are shared."""
        if not _NAME.match(name) or name in self._objectives:
            raise ValueError(f"player {self.name}: objective name {name!r} is invalid or taken")
        _check_loss_fn(loss_fn, f"{self.name}_{name}")
        self._objectives[name] = loss_fn
        return Objective(self, name)

    def step(self, *inputs: Any) -> tuple[Tensor, Any]:
        """Run one training call of the main loss; compiles on the first call."""
        return self.run_objective("", *inputs)

    def run_objective(self, name: str, *inputs: Any) -> tuple[Tensor, Any]:
        step = self._steps.get(name)
        if step is None:
            step = self._steps[name] = runtime.jit(self._build(self._objectives[name], False))
        return step(*inputs)

    def body(self, name: str = "") -> Callable[..., tuple[Tensor, Any]]:
        """The training call of objective ``name`` ("" = the main loss) as a plain function
        for a graph that holds several steps (:mod:`.fused`): ``inputs -> (loss, aux)``,
        updating the parameters as a side effect.

        It computes what :meth:`step` computes, bit for bit, without a tensor-conditioned
        branch: the update always runs and a non-finite (or not yet due) one is undone with
        ``where``. Several branching steps in one graph once drifted from separate calls, for
        reasons we could not isolate (docs/mindspore-notes.md, item 30)."""
        body = self._bodies.get(name)
        if body is None:
            body = self._bodies[name] = self._build(self._objectives[name], branch_free=True)
        return body

    def _build(self, loss_fn: LossFn, branch_free: bool) -> Callable[..., tuple[Tensor, Any]]:
        for net in self.nets.values():  # the graph bakes in the training flag
            net.set_train(True)
        # Free variables only: the graph parser handles closures over Cells and Parameters.
        grad_fn = ms.value_and_grad(loss_fn, None, self.optimizer.parameters, has_aux=True)
        # mean loss and gradients over the data-parallel ranks; grad_fn itself in one process
        grad_fn = dist.reduce_gradients(grad_fn, self.optimizer.parameters)
        apply = self._update_fn()
        grad_norm, skipped, skip_nonfinite = self.grad_norm, self.skipped, self.skip_nonfinite
        one = Tensor(1, mstype.int64)

        def finite(loss, norm):
            if skip_nonfinite:
                return ops.logical_and(ops.isfinite(loss), ops.isfinite(norm))
            return ops.ones((), mstype.bool_)

        def measured(inputs):
            (loss, aux), grads = grad_fn(*inputs)
            norm = global_norm(grads)
            return ops.depend(loss, ops.assign(grad_norm, norm)), aux, grads, finite(loss, norm)

        if self.accumulate > 1:
            return self._accumulating(measured, apply, branch_free)
        if branch_free:
            undo = self._undo_fn(apply)

            def select_step(*inputs):
                loss, aux, grads, ok = measured(inputs)
                loss = ops.depend(loss, undo(grads, loss, ok))
                skip = ops.cast(ops.logical_not(ok), mstype.int64)
                return ops.depend(loss, ops.assign_add(skipped, skip)), aux

            return select_step

        def step(*inputs):
            loss, aux, grads, ok = measured(inputs)
            if ok:
                loss = ops.depend(loss, apply(grads, loss))
            else:
                loss = ops.depend(loss, ops.assign_add(skipped, one))
            return loss, aux

        return step

    def _update_fn(self) -> Callable[[tuple, Tensor], Tensor]:
        """``apply(grads, loss) -> token``: transforms, learning rate, optimizer, counters and
        post-update cells, in that order."""
        optimizer, transform, posts = self.optimizer, self.transform, self.post_update
        params = self.optimizer.parameters
        schedule, base_lr, lr = self.spec.schedule, float(self.spec.lr), lr_parameter(optimizer)
        updates, lr_scale = self.updates, self.lr_scale
        one = Tensor(1, mstype.int64)

        def apply(grads, loss):
            grads = transform(grads, loss)
            rate = base_lr * lr_scale
            if schedule is not None:
                rate = rate * schedule.factor(updates)
            ops.assign(lr, rate)
            token = optimizer(grads)
            token = ops.depend(ops.assign_add(updates, one), token)
            for post in posts:
                token = post(params, token)
            return token

        return apply

    def _undo_fn(self, apply: Callable[[tuple, Tensor], Tensor]) -> Callable[..., Tensor]:
        """``undo(grads, loss, ok) -> token``: ``apply``, then every Parameter it may write
        put back to its value before the call where ``ok`` is False."""
        written = [*self.optimizer.parameters, *self.optimizer.get_parameters(),
                   lr_parameter(self.optimizer), self.updates, *self.transform.state(),
                   *(p for post in self.post_update for p in post.state())]
        written = tuple({id(p): p for p in written}.values())

        def undo(grads, loss, ok):
            # values read before ``apply``; the auto-monad keeps them apart from its writes
            before = tuple(ops.stop_gradient(ops.identity(p)) for p in written)
            token = apply(grads, ops.depend(loss, before))
            for p, old in zip(written, before):
                kept = ops.where(ok, ops.depend(p, token), old)
                token = ops.depend(token, ops.assign(p, kept))
            return token

        return undo

    def _accumulating(self, measured, apply, branch_free: bool) -> Callable[..., tuple]:
        k, one = self.accumulate, Tensor(1, mstype.int64)
        acc_count, acc_grads, skipped = self.acc_count, self.acc_grads, self.skipped

        if branch_free:
            undo = self._undo_fn(apply)

            def select_step(*inputs):
                loss, aux, grads, ok = measured(inputs)
                for buf, g in zip(acc_grads, grads):
                    loss = ops.depend(loss, ops.assign(buf, ops.where(ok, buf + g, buf)))
                count = ops.depend(acc_count, loss) + ops.cast(ok, mstype.int64)
                due = ops.logical_and(ok, count >= k)
                mean = tuple(ops.depend(buf, loss) / k for buf in acc_grads)
                token = undo(mean, loss, due)
                for buf in acc_grads:
                    kept = ops.where(due, ops.zeros_like(buf), ops.depend(buf, token))
                    token = ops.depend(token, ops.assign(buf, kept))
                token = ops.depend(token, ops.assign(acc_count, ops.where(due, 0 * count, count)))
                skip = ops.cast(ops.logical_not(ok), mstype.int64)
                return ops.depend(loss, ops.assign_add(skipped, ops.depend(skip, token))), aux

            return select_step

        def accumulating_step(*inputs):
            loss, aux, grads, ok = measured(inputs)
            if ok:
                for buf, g in zip(acc_grads, grads):
                    loss = ops.depend(loss, ops.assign_add(buf, g))
                loss = ops.depend(loss, ops.assign_add(acc_count, one))
                if acc_count >= k:
                    mean = tuple(buf / k for buf in acc_grads)
                    token = apply(mean, loss)
                    for buf in acc_grads:
                        token = ops.depend(ops.assign(buf, ops.zeros_like(buf)), token)
                    loss = ops.depend(loss, ops.assign(acc_count, ops.zeros_like(acc_count)))
                    loss = ops.depend(loss, token)
            else:
                loss = ops.depend(loss, ops.assign_add(skipped, one))
            return loss, aux

        return accumulating_step

    def __repr__(self) -> str:
        nets = ", ".join(f"{k}: {type(v).__name__}" for k, v in self.nets.items())
        return f"Player({self.name!r}, nets={{{nets}}}, optimizer={self.spec})"


class Objective:
    """A named extra loss of a :class:`Player`, steppable by a schedule phase."""

    def __init__(self, player: Player, key: str) -> None:
        self.player, self.key = player, key
        self.name = f"{player.name}_{key}"

    def step(self, *inputs: Any) -> tuple[Tensor, Any]:
        return self.player.run_objective(self.key, *inputs)

    def body(self) -> Callable[..., tuple[Tensor, Any]]:
        return self.player.body(self.key)
