"""Warnings about the classic GAN failure signs, without stopping the run.

:class:`Watchdog` warns when the discriminator's loss sits near zero for a long stretch (D wins
outright, G gets no signal), when a gradient norm explodes, and when samples from different
noise look alike (mode collapse). Warnings go to the terminal (above the progress bar) and to
``metrics.jsonl``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from tqdm.auto import tqdm

from ..engine.hooks import JsonlWriter, step_scalars
from ..engine.loop import Hook, Loop


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
