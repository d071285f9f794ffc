"""``gantrain eval RUN``: score a GAN run's generator, 2D runs by mode coverage and image runs
with a feature classifier, each number beside the real-vs-real baseline."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ...config.strict import ConfigError
from ...data.registry import build_data
from ...engine import checkpoint
from ...metrics.report import METRICS, plain
from ..evaluation import EvalOptions, score_samples
from .config import GANConfig
from .sample import GANSampleOptions, draw_samples


def evaluate_run(ckpt: Path, config: GANConfig, out: Path, classifier: str | Path | None,
                 n: int = 10000, metrics: tuple[str, ...] = METRICS[:4], ema: bool = True,
                 seed: int = 0, drs: float | None = None, dot: int | None = None,
                 mh: int | None = None) -> dict[str, Any]:
    """Score the generator of checkpoint ``ckpt``; writes the report to ``out`` and returns it
    (with a printable ``table``). ``drs``/``dot``/``mh`` score what ``gantrain sample`` draws with
    those options instead of the plain generator's samples."""
    if n < 2:
        raise ConfigError(f"--n must be >= 2, got {n}")
    options = GANSampleOptions(n=n, seed=seed, ema=ema, drs=drs, dot=dot, mh=mh)
    fake, how = draw_samples(ckpt, config, options)
    data = build_data(config.data.dataset, config.data.args, config.data.batch_size, config.seed)
    report, table, _ = score_samples(fake, data, classifier, metrics, seed)
    report.update({"checkpoint": str(checkpoint.resolve(ckpt)), "ema": ema, "drawn": how})
    Path(out).write_text(json.dumps(report, indent=1, default=plain))
    report["path"], report["table"] = str(out), table
    return report


def evaluate(ckpt: Path, config: GANConfig, out: Path, options: EvalOptions) -> dict[str, Any]:
    """The GAN recipe's ``gantrain eval``: :func:`evaluate_run` with the command's options."""
    o = options
    return evaluate_run(ckpt, config, out, o.classifier, o.n, o.metrics, o.ema, o.seed, o.drs,
                        o.dot, o.mh)
