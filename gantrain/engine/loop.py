"""The training loop. It knows schedules, data and hooks, nothing about GANs.

Each iteration runs the schedule once. Step outputs stay on the device; hooks read them at their
own intervals, so the loop never forces a host sync per step. Ctrl-C and SIGTERM finish the
current iteration, run the end hooks (which save) and return.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from .context import BatchSource, StepContext
from .fused import FusedSchedule
from .schedule import Schedule


class Hook:
    """Called by the loop: ``on_start``, ``after_iteration`` when ``iteration % every == 0``
    (iteration counts completed iterations, so the first call is at ``every``), ``on_end``."""

    every: int = 1

    def on_start(self, loop: Loop) -> None:
        """Before the first iteration of this run (also after a resume)."""

    def after_iteration(self, loop: Loop) -> None:
        """After an iteration; ``loop.outputs`` holds each phase's last step output."""

    def on_end(self, loop: Loop) -> None:
        """After the last iteration, also when stopped by a signal or a time budget."""


class Loop:
    """Runs a :class:`Schedule` over a :class:`BatchSource` with hooks.

    Args:
        schedule: the phases to run each iteration.
        data: the batch stream the phases pull from.
        seed: seeds the host RNG that phases draw noise from.
        hooks: called in order, after the iterations in which their interval is reached.
        progress: show a tqdm bar (postfix values are set by hooks via ``loop.postfix``).
        agree: in a data-parallel job, ``agree(stop) -> stop`` is True on every rank when any
            rank wants to stop (a signal, its own clock for the time budget), so that all
            ranks stop after the same iteration and meet in the same collectives.
        iterations_per_call: run this many iterations per compiled call (:mod:`.fused`);
            hooks, stops and the time budget are then seen between calls, so intervals
            should be multiples of it.
    """

    def __init__(
        self,
        schedule: Schedule,
        data: BatchSource,
        seed: int = 0,
        hooks: Sequence[Hook] = (),
        progress: bool = True,
        agree: Callable[[bool], bool] | None = None,
        iterations_per_call: int = 1,
    ) -> None:
        self.schedule = schedule
        self.fused = FusedSchedule(schedule, iterations_per_call) if iterations_per_call != 1 \
            else None
        self.ctx = StepContext(data, np.random.default_rng(seed))
        self.hooks = list(hooks)
        self.progress = progress
        self.agree = agree
        self.outputs: dict[str, Any] = {}
        self.postfix: dict[str, str] = {}
        self.stop_reason = ""
        self.elapsed = 0.0  # seconds spent in run(), summed over resumes
        self._stop_requested = False

    @property
    def iteration(self) -> int:
        """Completed iterations."""
        return self.ctx.iteration

    def request_stop(self, reason: str) -> None:
        """Finish the current iteration, then stop (used by signal handlers and hooks)."""
        self._stop_requested = True
        self.stop_reason = reason

    def state_dict(self) -> dict[str, Any]:
        """Host-side loop state for an exact resume (device state lives in the players)."""
        return {
            "iteration": self.iteration,
            "elapsed": self.elapsed,
            "rng": self.ctx.rng.bit_generator.state,
            "data": self.ctx.data.state_dict(),
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.ctx.iteration = int(state["iteration"])
        self.elapsed = float(state["elapsed"])
        self.ctx.rng.bit_generator.state = state["rng"]
        self.ctx.data.load_state_dict(state["data"])

    def run(self, steps: int, time_budget: float | None = None) -> Loop:
        """Run until ``steps`` iterations in total are done, the time budget (seconds of this
        call) runs out, or a stop is requested. Returns self."""
        self._stop_requested, self.stop_reason = False, ""
        start = time.perf_counter()
        base_elapsed = self.elapsed
        with _stop_on_signals(self), self._bar(steps) as bar:
            for hook in self.hooks:
                hook.on_start(self)
            # with ``agree``, only an agreed answer may stop the loop (see below)
            stop = self._stop_requested if self.agree is None else False
            while self.iteration < steps and not stop:
                before = self.iteration
                if self.fused is None:
                    self.outputs = self.schedule.run_iteration(self.ctx)
                    self.ctx.iteration += 1
                else:
                    self.outputs = self.fused.run(self.ctx, min(self.fused.k, steps - before))
                self.elapsed = base_elapsed + time.perf_counter() - start
                for hook in self.hooks:
                    if self.iteration // hook.every > before // hook.every:
                        hook.after_iteration(self)
                if bar is not None:
                    bar.update(self.iteration - before)
                    if self.postfix:
                        bar.set_postfix(self.postfix, refresh=False)
                        self.postfix = {}
                if time_budget is not None and time.perf_counter() - start >= time_budget:
                    self.request_stop("time budget")
                stop = self._stop_requested
                if self.agree is not None:
                    # only the agreed answer counts: a signal landing after this call must not
                    # stop this rank one iteration before the others
                    stop = self.agree(stop)
                    if stop and not self._stop_requested:
                        self.request_stop("stopped by another worker")
            if not self.stop_reason:
                self.stop_reason = "steps"
            for hook in self.hooks:
                hook.on_end(self)
        return self

    @contextmanager
    def _bar(self, steps: int):
        if not self.progress:
            yield None
            return
        # disable=None: no bar when stderr is not a terminal (logs, CI), where every refresh
        # would otherwise be appended as a new line
        bar = tqdm(total=steps, initial=self.iteration, unit="it", dynamic_ncols=True,
                   disable=None)
        try:
            yield bar
        finally:
            bar.close()


@contextmanager
def _stop_on_signals(loop: Loop):
    """SIGINT/SIGTERM ask the loop to stop after the current iteration (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum, frame):
        if loop._stop_requested and signum == signal.SIGINT:
            raise KeyboardInterrupt  # a second Ctrl-C stops at once
        loop.request_stop(signal.Signals(signum).name)

    # A signal the parent set to be ignored (nohup, background jobs) stays ignored.
    watched = [s for s in (signal.SIGINT, signal.SIGTERM) if signal.getsignal(s) != signal.SIG_IGN]
    previous = {s: signal.signal(s, handler) for s in watched}
    try:
        yield
    finally:
        for s, h in previous.items():
            signal.signal(s, h)
