"""``gantrain eval RUN``: score a GAN run's generator, 2D runs by mode coverage and image runs
with a feature classifier, each number beside the real-vs-real baseline."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ...config.strict import ConfigError
from ...data.registry import build_data
from ...engine import checkpoint
from ...metrics.report import plain
from ..evaluation import EvalOptions, score_samples
from .config import GANConfig
from .sample import GANSampleOptions, draw_samples


def evaluate(ckpt: Path, config: GANConfig, out: Path, options: EvalOptions) -> dict[str, Any]:
    """The GAN recipe's ``gantrain eval``: score the generator of checkpoint ``ckpt`` on
    ``options.n`` samples; writes the report to ``out`` and returns it (with a printable
    ``table``). ``drs``/``dot``/``mh``/``truncation`` score what ``gantrain sample`` draws with
    those options instead of the plain generator's samples."""
    o = options
    if o.n < 2:
        raise ConfigError(f"--n must be >= 2, got {o.n}")
    drawn = GANSampleOptions(n=o.n, seed=o.seed, ema=o.ema, truncation=o.truncation, drs=o.drs,
                             dot=o.dot, mh=o.mh)
    fake, how = draw_samples(ckpt, config, drawn)
    data = build_data(config.data.dataset, config.data.args, config.data.batch_size, config.seed)
    report, table, _ = score_samples(fake, data, o.classifier, o.metrics, o.seed)
    report.update({"checkpoint": str(checkpoint.resolve(ckpt)), "ema": o.ema, "drawn": how})
    Path(out).write_text(json.dumps(report, indent=1, default=plain))
    report["path"], report["table"] = str(out), table
    return report
