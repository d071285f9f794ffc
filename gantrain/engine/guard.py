"""Guard against divergence: roll back after repeated non-finite updates.

Players already skip an update whose loss or gradients are not finite (weights and optimizer
state stay as they were) and count it. :class:`DivergenceGuard` reads those counters every
``every`` iterations: when a window holds ``max_skips`` or more skips, training is not
recovering by itself, so it restores the last good checkpoint, scales the learning rates by
``lr_factor`` and goes on; after ``max_rollbacks`` it stops the run with a message.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from mindspore import Tensor, ops
from mindspore import dtype as mstype
from tqdm.auto import tqdm

from .hooks import JsonlWriter
from .loop import Hook, Loop
from .player import Player


class DivergenceError(RuntimeError):
    """Training kept producing non-finite values after every allowed rollback."""


class DivergenceGuard(Hook):
    """Roll back to the last checkpoint when non-finite updates pile up.

    Args:
        players: whose ``skipped`` counters to watch and whose learning rates to lower.
        restore: restores the last good checkpoint and returns its iteration, or None if
            there is none.
        every: iterations per check window (each check reads the counters: one host sync).
        max_skips: skipped updates within one window that trigger a rollback.
        lr_factor: learning-rate multiplier applied at each rollback (1.0 keeps it).
        max_rollbacks: rollbacks allowed before the run stops.
        writer: where rollback events are logged.
    """

    def __init__(self, players: Sequence[Player], restore: Callable[[], int | None],
                 every: int = 10, max_skips: int = 10, lr_factor: float = 0.5,
                 max_rollbacks: int = 3, writer: JsonlWriter | None = None) -> None:
        self.players, self.restore, self.every = list(players), restore, every
        self.max_skips, self.lr_factor, self.max_rollbacks = max_skips, lr_factor, max_rollbacks
        self.writer = writer
        self.rollbacks = 0
        self._seen: dict[str, int] = {}

    def _skips(self) -> dict[str, int]:
        return {p.name: int(p.skipped.asnumpy()) for p in self.players}

    def on_start(self, loop: Loop) -> None:
        self._seen = self._skips()

    def after_iteration(self, loop: Loop) -> None:
        now = self._skips()
        new = {k: now[k] - self._seen.get(k, 0) for k in now}
        self._seen = now
        bad = {k: v for k, v in new.items() if v >= self.max_skips}
        if not bad:
            return
        what = ", ".join(f"{k} skipped {v} updates" for k, v in bad.items())
        if self.rollbacks >= self.max_rollbacks:
            loop.request_stop("diverged")
            raise DivergenceError(
                f"non-finite losses or gradients at iteration {loop.iteration} ({what} in the "
                f"last {self.every} iterations) after {self.rollbacks} rollbacks; lower the "
                "learning rates, add gradient clipping (optim.*.clip_norm) or check the data"
            )
        # The checkpoint holds the learning-rate scale it was saved with; the cut must compound
        # over rollbacks to the same checkpoint, so it starts from the scale in use now.
        scales = [float(p.lr_scale.asnumpy()) for p in self.players]
        restored = self.restore()
        if restored is None:
            loop.request_stop("diverged")
            raise DivergenceError(
                f"non-finite losses or gradients at iteration {loop.iteration} ({what}) and no "
                "checkpoint to roll back to"
            )
        self.rollbacks += 1
        for p, scale in zip(self.players, scales):
            ops.assign(p.lr_scale, Tensor(scale * self.lr_factor, mstype.float32))
        self._seen = self._skips()
        message = (f"iteration {loop.iteration}: {what}; rolled back to iteration {restored}, "
                   f"learning rates x{self.lr_factor} (rollback {self.rollbacks}/"
                   f"{self.max_rollbacks})")
        tqdm.write(f"gantrain: {message}")
        if self.writer is not None:
            self.writer.write({"iteration": loop.iteration, "kind": "rollback",
                               "message": message})
