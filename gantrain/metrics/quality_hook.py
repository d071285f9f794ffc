"""Quality metrics during training: every N iterations, score a fixed noise batch with the
feature classifier, log it to ``metrics.jsonl``, and optionally keep the best checkpoint.

Once per run it also logs the real-vs-real baseline (a second, disjoint real subset of the same
size scored against the first), so a curve can be read against what a perfect generator would
score with this many samples: FD and KID are biased upwards at small sample sizes.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ..config.strict import ConfigError
from ..data.dataset import ArrayDataset
from ..engine.hooks import JsonlWriter
from ..engine.loop import Hook, Loop
from .classifier import load_classifier
from .report import quality_report

LOWER_IS_BETTER = {"fd": True, "kid": True, "precision": False, "recall": False,
                   "density": False, "coverage": False}


class QualityHook(Hook):
    """FD, KID, precision/recall, density/coverage and class coverage every ``every``
    iterations on ``samples`` images from ``generate(z, y)`` against a fixed real subset.

    Args:
        generate: ``(z, y) -> images`` (a run passes its EMA-aware sampler).
        real: the training images and labels.
        writer: where each record goes.
        run_dir: the run folder; the best checkpoint is copied to ``checkpoints/best``.
        save: ``save(loop) -> checkpoint folder``, called when ``keep_best`` improves.
    """

    def __init__(self, generate: Callable[[np.ndarray, np.ndarray], np.ndarray],
                 real: ArrayDataset, writer: JsonlWriter, run_dir: str | Path,
                 save: Callable[[Loop], Path], *, every: int, classifier: str, samples: int,
                 z_dim: int, num_classes: int = 0, seed: int = 0, keep_best: str = "") -> None:
        if not classifier:
            raise ConfigError("train.eval_every > 0 needs train.eval_classifier, a folder from "
                              "`gantrain eval train-classifier`")
        if keep_best and keep_best not in LOWER_IS_BETTER:
            raise ConfigError(f"train.keep_best must be one of {sorted(LOWER_IS_BETTER)}, "
                              f"got {keep_best!r}")
        self.generate, self.writer, self.save = generate, writer, save
        self.dir, self.every, self.keep_best = Path(run_dir), every, keep_best
        self.extractor, _ = load_classifier(classifier)
        rng = np.random.default_rng([seed, 2])  # apart from training's RNG
        self.z = rng.standard_normal((samples, z_dim))
        self.y = np.arange(samples) % max(num_classes, 1)
        idx = rng.permutation(len(real))[: min(samples, len(real))]
        self.real_feats, _ = self.extractor(real.x[idx])
        other = rng.permutation(len(real))
        other = other[~np.isin(other, idx)][: len(idx)]
        # the same size as the generated set, or no baseline: FD/KID depend on the count
        self.baseline = None
        if len(other) == samples:
            self.baseline = quality_report(self.real_feats, self.extractor(real.x[other])[0],
                                           None, ("fd", "kid", "prdc"), None)
        self.freq = None
        if real.y is not None and real.num_classes:
            self.freq = np.bincount(real.y, minlength=real.num_classes) / len(real.y)
        self.best: float | None = None

    def on_start(self, loop: Loop) -> None:
        if self.baseline is not None:
            self.writer.write({"iteration": loop.iteration, "kind": "quality_baseline",
                               **self.baseline})

    def after_iteration(self, loop: Loop) -> None:
        fake = self.generate(self.z, self.y)
        feats, probs = self.extractor(fake)
        metrics = ("fd", "kid", "prdc", "classes")
        report = quality_report(self.real_feats, feats, probs, metrics, self.freq)
        classes = report.pop("classes")
        record: dict[str, Any] = {"iteration": loop.iteration, "kind": "quality", **report,
                                  "classes_covered": classes["classes_covered"],
                                  "class_kl": classes["kl"]}
        self.writer.write(record)
        if self.keep_best:
            self._maybe_keep(loop, float(report[self.keep_best]))

    def _maybe_keep(self, loop: Loop, value: float) -> None:
        lower = LOWER_IS_BETTER[self.keep_best]
        if self.best is not None and (value >= self.best if lower else value <= self.best):
            return
        self.best = value
        path = self.save(loop)
        best = self.dir / "checkpoints" / "best"
        tmp = best.with_name(".best.tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.copytree(path, tmp)
        (tmp / "BEST").write_text(f"{self.keep_best} = {value} at iteration {loop.iteration}\n")
        shutil.rmtree(best, ignore_errors=True)
        tmp.rename(best)
