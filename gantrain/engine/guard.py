"""Guards against divergence: roll back after repeated non-finite updates, and warn about the
classic GAN failure signs.

Players already skip an update whose loss or gradients are not finite (weights and optimizer
state stay as they were) and count it. :class:`DivergenceGuard` reads those counters every
``every`` iterations: when a window holds ``max_skips`` or more skips, training is not
recovering by itself, so it restores the last good checkpoint, scales the learning rates by
``lr_factor`` and goes on; after ``max_rollbacks`` it stops the run with a message.

:class:`Watchdog` warns, without stopping, when the discriminator's loss sits near zero for a
long stretch (D wins outright, G gets no signal), when a gradient norm explodes, and when
samples from different noise look alike (mode collapse). Warnings go to the terminal (above the
progress bar) and to ``metrics.jsonl``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from mindspore import ops
from tqdm.auto import tqdm

from .hooks import JsonlWriter, step_scalars
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
        restored = self.restore()
        if restored is None:
            loop.request_stop("diverged")
            raise DivergenceError(
                f"non-finite losses or gradients at iteration {loop.iteration} ({what}) and no "
                "checkpoint to roll back to"
            )
        self.rollbacks += 1
        for p in self.players:
            ops.assign(p.lr_scale, p.lr_scale * self.lr_factor)
        self._seen = self._skips()
        message = (f"iteration {loop.iteration}: {what}; rolled back to iteration {restored}, "
                   f"learning rates x{self.lr_factor} (rollback {self.rollbacks}/"
                   f"{self.max_rollbacks})")
        tqdm.write(f"gantrain: {message}")
        if self.writer is not None:
            self.writer.write({"iteration": loop.iteration, "kind": "rollback",
                               "message": message})


def sample_diversity(samples: np.ndarray) -> float:
    """Mean distance between pairs of samples (consecutive pairs of a fixed batch)."""
    flat = samples.reshape(len(samples), -1).astype(np.float64)
    if len(flat) < 2:
        return float("nan")
    return float(np.linalg.norm(flat[1:] - flat[:-1], axis=1).mean())


class Watchdog(Hook):
    """Warn (once per episode) about failure signs read at the logging interval.

    Args:
        d_loss_floor / d_patience: warn when every D loss of ``d_patience`` consecutive checks is
            below the floor.
        grad_norm_limit: warn when a player's gradient norm exceeds it.
        writer: where warnings are logged.
    """

    def __init__(self, every: int = 100, d_loss_floor: float = 0.01, d_patience: int = 5,
                 grad_norm_limit: float = 1e3, writer: JsonlWriter | None = None) -> None:
        self.every, self.d_loss_floor, self.d_patience = every, d_loss_floor, d_patience
        self.grad_norm_limit, self.writer = grad_norm_limit, writer
        self._low_d = 0
        self.active: set[str] = set()
        self.warnings: list[str] = []

    def warn(self, loop: Loop, kind: str, message: str) -> None:
        """Emit a warning the first time ``kind`` appears; it re-arms once it clears."""
        if kind in self.active:
            return
        self.active.add(kind)
        self.warnings.append(message)
        tqdm.write(f"gantrain warning: {message}")
        if self.writer is not None:
            self.writer.write({"iteration": loop.iteration, "kind": "warning", "warning": kind,
                               "message": message})

    def clear(self, kind: str) -> None:
        self.active.discard(kind)

    def after_iteration(self, loop: Loop) -> None:
        scalars = step_scalars(loop)
        self.check_scalars(loop, scalars)

    def check_scalars(self, loop: Loop, scalars: dict[str, Any]) -> None:
        d_losses = [v for k, v in scalars.items() if k.startswith("D") and k.endswith("/loss")]
        if d_losses and max(abs(v) for v in d_losses) < self.d_loss_floor:
            self._low_d += 1
        else:
            self._low_d = 0
            self.clear("d_collapse")
        if self._low_d >= self.d_patience:
            self.warn(loop, "d_collapse",
                      f"discriminator loss below {self.d_loss_floor} for {self._low_d} checks "
                      f"(iteration {loop.iteration}): D wins outright and G gets no signal")
        for key, value in scalars.items():
            if key.endswith("/grad_norm"):
                kind = f"grad_norm:{key}"
                if np.isfinite(value) and value > self.grad_norm_limit:
                    self.warn(loop, kind, f"{key} = {value:.3g} at iteration {loop.iteration} "
                                          f"exceeds {self.grad_norm_limit:g}: gradients exploding")
                else:
                    self.clear(kind)

    def check_diversity(self, loop: Loop, fake: np.ndarray, real: np.ndarray,
                        ratio: float = 0.1) -> None:
        """Warn when samples from different noise are much closer to each other than real data
        points are (collapse to a few outputs)."""
        d_fake, d_real = sample_diversity(fake), sample_diversity(real)
        if np.isfinite(d_fake) and d_real > 0 and d_fake < ratio * d_real:
            self.warn(loop, "diversity",
                      f"samples from different noise are nearly identical at iteration "
                      f"{loop.iteration} (mean pair distance {d_fake:.3g} vs {d_real:.3g} for "
                      "real data): mode collapse")
        else:
            self.clear("diversity")
