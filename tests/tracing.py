"""Test helpers for exact-resume checks: a hook recording every phase's loss, and a hash of
every piece of state a run's checkpoint holds."""

from __future__ import annotations

import hashlib

from gantrain.engine.loop import Hook


class LossTrace(Hook):
    """Records ``(iteration, phase, loss)`` after every iteration."""

    def __init__(self) -> None:
        self.trace: list[tuple[int, str, float]] = []

    def after_iteration(self, loop) -> None:
        for phase, (loss, _) in loop.outputs.items():
            self.trace.append((loop.iteration, phase, float(loss.asnumpy())))


def fingerprint(run) -> dict[str, str]:
    """``player/parameter -> sha256`` of every Parameter of every player of ``run``."""
    return {f"{player}/{p.name}": hashlib.sha256(p.asnumpy().tobytes()).hexdigest()
            for player, params in run.checkpoint_state().items() for p in params}
