"""Optional TensorBoard event files beside ``metrics.jsonl`` (``train.tensorboard = true``).

Uses tensorboardX, a small, well-kept event-file writer with no TensorFlow or PyTorch
dependency (``pip install "gantrain[tensorboard]"``); writing the TFRecord/protobuf format by
hand would duplicate it. Every numeric value of every record becomes a scalar at the record's
iteration (``D/loss``, ``eval/modes``, ``fd``...), and sample grids become images.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

INSTALL = 'pip install "gantrain[tensorboard]"'


class TensorBoardWriter:
    """``write(record)`` like :class:`~gantrain.engine.hooks.JsonlWriter`, into event files
    under ``folder``; ``image(tag, png, step)`` adds a PNG."""

    def __init__(self, folder: str | Path) -> None:
        try:
            from tensorboardX import SummaryWriter
        except ImportError:
            raise ImportError(f"train.tensorboard = true needs tensorboardX: {INSTALL}") from None
        self.folder = Path(folder)
        self._make = SummaryWriter
        self._summary: Any = None  # made on the first write: the run folder may not exist yet

    @property
    def _writer(self) -> Any:
        if self._summary is None:
            self._summary = self._make(logdir=str(self.folder), flush_secs=10)
        return self._summary

    def write(self, record: dict[str, Any]) -> None:
        step = record.get("iteration")
        if not isinstance(step, int):
            return
        prefix = "" if record.get("kind") in (None, "eval") else f"{record['kind']}/"
        for key, value in record.items():
            if key == "iteration" or isinstance(value, bool):
                continue
            if isinstance(value, (int, float)) and math.isfinite(value):
                self._writer.add_scalar(prefix + key, float(value), step)
        self._writer.flush()

    def image(self, tag: str, png: str | Path, step: int) -> None:
        from PIL import Image

        pixels = np.asarray(Image.open(png).convert("RGB"))
        self._writer.add_image(tag, pixels, step, dataformats="HWC")
        self._writer.flush()

    def close(self) -> None:
        if self._summary is not None:
            self._summary.close()


class RecordWriters:
    """Writes each record to several writers (the metrics file first)."""

    def __init__(self, *writers: Any) -> None:
        self.writers = writers

    def write(self, record: dict[str, Any]) -> None:
        for writer in self.writers:
            writer.write(record)
