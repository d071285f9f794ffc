"""Hooks the loop calls: metric logging to ``metrics.jsonl`` and periodic callbacks."""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mindspore import Tensor

from .loop import Hook, Loop


def _scalar(value: Any) -> float | None:
    if isinstance(value, Tensor) and value.size == 1:
        return float(value.asnumpy().reshape(()))
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return None


def step_scalars(loop: Loop) -> dict[str, float]:
    """Flatten the latest step outputs (loss and dict aux) and player counters to floats.

    This is where device values come to the host, so it runs only at log intervals.
    """
    record: dict[str, float] = {}
    for phase, out in loop.outputs.items():
        loss, aux = out if isinstance(out, tuple) and len(out) == 2 else (out, None)
        value = _scalar(loss)
        if value is not None:
            record[f"{phase}/loss"] = value
        if isinstance(aux, dict):
            for key, v in aux.items():
                value = _scalar(v)
                if value is not None:
                    record[f"{phase}/{key}"] = value
    for target in loop.schedule.targets():
        for counter in ("grad_norm", "skipped"):
            value = _scalar(getattr(target, counter, None))
            if value is not None:
                record[f"{target.name}/{counter}"] = value
    return record


class JsonlWriter:
    """Append-only JSON-lines file; each record is flushed so a killed run keeps its log."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    def write(self, record: dict[str, Any]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        clean = {k: (None if isinstance(v, float) and not math.isfinite(v) else v)
                 for k, v in record.items()}
        with self.path.open("a") as f:
            f.write(json.dumps(clean) + "\n")


class MetricsLogger(Hook):
    """Every ``every`` iterations: losses, aux scalars, grad norms, skips and iterations/s,
    to ``metrics.jsonl`` (when a writer is given) and to the progress bar."""

    def __init__(self, writer: JsonlWriter | None, every: int = 100) -> None:
        self.writer, self.every = writer, every
        self._last: tuple[int, float] | None = None

    def on_start(self, loop: Loop) -> None:
        self._last = (loop.iteration, time.perf_counter())

    def after_iteration(self, loop: Loop) -> None:
        now = time.perf_counter()
        record: dict[str, Any] = {"iteration": loop.iteration, "elapsed": round(loop.elapsed, 3)}
        if self._last is not None and loop.iteration > self._last[0]:
            record["it_per_s"] = round((loop.iteration - self._last[0]) / (now - self._last[1]), 2)
        self._last = (loop.iteration, now)
        record.update(step_scalars(loop))
        if self.writer is not None:
            self.writer.write(record)
        loop.postfix = {
            k.replace("/loss", ""): f"{v:.3f}" for k, v in record.items() if k.endswith("/loss")
        }


class Periodic(Hook):
    """Call ``fn(loop)`` every ``every`` iterations and, if ``at_end``, once more at the end
    (unless it just ran at that iteration)."""

    def __init__(self, fn: Callable[[Loop], None], every: int, at_end: bool = True) -> None:
        if every < 1:
            raise ValueError(f"Periodic: every must be >= 1, got {every}")
        self.fn, self.every, self.at_end = fn, every, at_end
        self._last_iteration = -1

    def after_iteration(self, loop: Loop) -> None:
        self.fn(loop)
        self._last_iteration = loop.iteration

    def on_end(self, loop: Loop) -> None:
        if self.at_end and loop.iteration != self._last_iteration:
            self.fn(loop)
            self._last_iteration = loop.iteration
