"""The alternating scheduler: the training scheme as data.

A :class:`Schedule` is a list of :class:`Phase` s, in the spirit of StyleGAN2-ADA's phase list:
each phase names what to step, how to build its inputs, how many times to repeat it per
iteration (WGAN's ``n_critic``) and every how many iterations it runs (lazy regularization).
Iteration counters count scheduler iterations, not optimizer steps.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from .context import StepContext


class Steppable(Protocol):
    """Anything a phase can run: a :class:`~gantrain.Player` or one of its objectives."""

    name: str

    def step(self, *inputs: Any) -> Any: ...

    def body(self) -> Callable[..., Any]:
        """``step`` as a plain function a larger graph can call (see :mod:`.fused`)."""
        ...


@dataclass(frozen=True)
class Phase:
    """One entry of the schedule.

    Args:
        target: what to step (usually a Player).
        inputs: builds the step's arguments on the host, once per repeat, from the context
            (fresh real batches via ``ctx.batch()``, noise via ``ctx.rng``).
        repeats: consecutive steps per iteration in which the phase runs.
        every: the phase runs on iterations ``0, every, 2*every, ...``.
        name: label in logs; defaults to the target's name.
        fusable: False when ``inputs`` depends on steps that ran before it (reads
            ``ctx.outputs``, or runs a model on the host): such a phase cannot share a
            compiled call with them (:mod:`.fused`).
    """

    target: Steppable
    inputs: Callable[[StepContext], tuple]
    repeats: int = 1
    every: int = 1
    name: str = ""
    fusable: bool = True

    def __post_init__(self) -> None:
        for field in ("repeats", "every"):
            value = getattr(self, field)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"Phase {field} must be an int >= 1, got {value!r}")
        if not self.name:
            object.__setattr__(self, "name", self.target.name)

    def due(self, iteration: int) -> bool:
        return iteration % self.every == 0


class Schedule:
    """Runs the phases in order; one call of :meth:`run_iteration` is one iteration."""

    def __init__(self, phases: Sequence[Phase]) -> None:
        if not phases:
            raise ValueError("a Schedule needs at least one Phase")
        names = [p.name for p in phases]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise ValueError(f"phase names must be unique; repeated: {dupes} (set Phase.name)")
        self.phases = tuple(phases)

    def run_iteration(self, ctx: StepContext) -> dict[str, Any]:
        """Run every phase due at ``ctx.iteration``; return each phase's last step output.

        Outputs are recorded in ``ctx.outputs`` as they come, so a later phase's input builder
        can read what an earlier phase of the same iteration returned (CycleGAN's D trains on
        the fakes G's step made).
        """
        outputs = ctx.outputs
        for phase in self.phases:
            if not phase.due(ctx.iteration):
                continue
            for _ in range(phase.repeats):
                outputs[phase.name] = phase.target.step(*phase.inputs(ctx))
        return outputs

    def updates_per_iteration(self) -> dict[str, float]:
        """Optimizer updates each player makes per iteration, on average: ``repeats / every``
        summed over the phases that step it (its objectives included), divided by its
        ``accumulate``. Decaying learning-rate schedules take their length from this."""
        rates: dict[str, float] = {}
        for phase in self.phases:
            player = getattr(phase.target, "player", phase.target)
            per_call = 1 / getattr(player, "accumulate", 1)
            rate = phase.repeats / phase.every * per_call
            rates[player.name] = rates.get(player.name, 0.0) + rate
        return rates

    def targets(self) -> list[Steppable]:
        """The distinct step targets, in phase order."""
        seen: dict[int, Steppable] = {}
        for phase in self.phases:
            seen.setdefault(id(phase.target), phase.target)
        return list(seen.values())
