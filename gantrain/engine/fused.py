"""Many scheduler iterations in one compiled call (``train.iterations_per_call = k``).

Small models spend most of an iteration outside arithmetic: each player's step is its own
graph launch (docs/mindspore-notes.md, item 25). :class:`FusedSchedule` first builds, on the
host, the inputs of k iterations, in the order and from the same RNG and loader that k single
iterations would use. It then runs every step of those k iterations, in schedule order, inside
ONE ``@ms.jit`` function that calls each target's :meth:`~gantrain.Player.body`. MindSpore
orders the parameter updates of consecutive bodies as written (its automatic side-effect
ordering), so the numbers are those of k single iterations, bit for bit
(``tests/test_fused.py``).

What cannot be fused is a phase whose inputs depend on the steps before it:
- one that reads ``ctx.outputs``, what an earlier phase returned (CycleGAN's fakes);
- one whose input builder reads the models on the host, such as an actor-critic rollout that
  runs the current policy.
Their inputs would be built before those steps ran. Such a phase says ``Phase(fusable=False)``
and is refused. Reading ``ctx.outputs`` while inputs are built ahead raises a clear error.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import mindspore as ms
from mindspore import Tensor

from . import runtime
from .context import StepContext
from .schedule import Schedule


class NotYetRun(dict):
    """``ctx.outputs`` while a fused call's inputs are built: no step has run yet."""

    def _refuse(self, key: Any = None) -> Any:
        raise RuntimeError(
            f"a phase's inputs read ctx.outputs[{key!r}] (what an earlier step returned), "
            "which does not exist yet when several iterations run in one compiled call; mark "
            "that phase Phase(fusable=False) and use iterations_per_call = 1")

    __getitem__ = get = _refuse

    def __contains__(self, key: object) -> bool:
        self._refuse(key)
        return False


def _graph_input(args: tuple, phase: str) -> Any:
    """One call's arguments as a graph input that does not recompile per call: Tensors and
    ``ms.mutable`` containers stay as they are, inside one ``ms.mutable`` tuple."""
    for a in args:
        if not isinstance(a, (Tensor, dict, tuple, list)):
            raise TypeError(f"phase {phase}: fused calls need Tensor inputs (or ms.mutable "
                            f"containers of them); got {type(a).__name__}")
    return ms.mutable(tuple(args))


class FusedSchedule:
    """Runs up to ``k`` iterations of ``schedule`` per compiled call.

    One graph is compiled per distinct sequence of steps in a call. With lazy phases
    (``every > 1``) that do not divide ``k``, or a shorter last call, there are a few of them.
    """

    def __init__(self, schedule: Schedule, k: int) -> None:
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ValueError(f"iterations per call must be an int >= 1, got {k!r}")
        refused = [p.name for p in schedule.phases if not p.fusable]
        if refused and k > 1:
            raise ValueError(f"phases {refused} build their inputs from earlier steps, so they "
                             "cannot share a compiled call; use iterations_per_call = 1")
        self.schedule, self.k = schedule, k
        self._graphs: dict[tuple[int, ...], Callable[..., tuple]] = {}

    def run(self, ctx: StepContext, iterations: int) -> dict[str, Any]:
        """Run ``iterations`` (1 to ``k``) iterations from ``ctx.iteration`` in one call;
        ``ctx.iteration`` ends advanced by that many. Returns each phase's last output."""
        if not 1 <= iterations <= self.k:
            raise ValueError(f"iterations must be in [1, {self.k}], got {iterations}")
        phases = self.schedule.phases
        calls: list[int] = []
        args: list[Any] = []
        for _ in range(iterations):
            ctx.outputs = NotYetRun()
            for i, phase in enumerate(phases):
                if not phase.due(ctx.iteration):
                    continue
                for _ in range(phase.repeats):
                    calls.append(i)
                    args.append(_graph_input(tuple(phase.inputs(ctx)), phase.name))
            ctx.iteration += 1
        pattern = tuple(calls)
        graph = self._graphs.get(pattern)
        if graph is None:
            graph = self._graphs[pattern] = self._compile(pattern)
        results = graph(ms.mutable(tuple(args)))
        return {phases[i].name: out for i, out in zip(calls, results)}

    def _compile(self, pattern: tuple[int, ...]) -> Callable[..., tuple]:
        bodies = tuple(self.schedule.phases[i].target.body() for i in pattern)
        count = len(bodies)

        # the loop is unrolled when the graph compiles: `bodies` is a constant tuple
        @runtime.jit
        def fused(args):
            outs = ()
            for i in range(count):
                outs = outs + (bodies[i](*args[i]),)
            return outs

        return fused
