"""``gantrain eval RUN`` for ALI / BiGAN runs: the generator's samples, scored as a GAN's, and
how well ``x -> E -> G`` keeps what an example is.

Reconstructions are of examples the run did not train on (:func:`held_out_examples`). With a
feature classifier both ``x`` and ``G(E(x))`` are classified, and the report gives the share
whose predicted classes agree (``class_match``: the encoder and generator kept the digit), the
classifier's accuracy on the reconstructions and, as its ceiling, on the inputs. 2D runs report
the mixture metrics, the squared errors and the share of reconstructions in their input's mode
(``mode_match``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from ...blocks import latents
from ...config.strict import ConfigError
from ...data.registry import build_data
from ...engine import checkpoint
from ...metrics.classifier import FeatureExtractor
from ...metrics.report import METRICS, plain
from ..evaluation import EvalOptions, score_samples
from ..sampling import load_player_nets
from .config import ALIConfig
from .examples import evaluation_examples, held_out_examples
from .run import Autoencoder, build_nets, reconstruction_errors


def class_agreement(extractor: FeatureExtractor, x: np.ndarray, rec: np.ndarray,
                    labels: np.ndarray | None) -> dict[str, float]:
    """The share of examples whose reconstruction the classifier puts in the input's predicted
    class, and its accuracy on inputs and reconstructions when ``labels`` are known."""
    pred_x = extractor(x)[1].argmax(1)
    pred_rec = extractor(rec)[1].argmax(1)
    out = {"class_match": float((pred_x == pred_rec).mean())}
    if labels is not None:
        out["input_accuracy"] = float((pred_x == labels).mean())
        out["recon_accuracy"] = float((pred_rec == labels).mean())
    return out


def evaluate_run(ckpt: Path, config: ALIConfig, out: Path, classifier: str | Path | None,
                 n: int = 10000, metrics: tuple[str, ...] = METRICS[:4], ema: bool = True,
                 seed: int = 0, recon: int = 1000,
                 truncation: float | None = None) -> dict[str, Any]:
    """Score checkpoint ``ckpt``: ``n`` samples of G (from noise truncated at ``truncation``
    when given) and ``recon`` reconstructions. Writes the report to ``out`` and returns it
    (with a printable ``table``)."""
    if n < 2 or recon < 2:
        raise ConfigError(f"--n and the reconstructions must be >= 2, got {n} and {recon}")
    G, E, _ = build_nets(config)
    averaged = ema and config.gan.ema_decay is not None
    load_player_nets(ckpt, "GE", {"G": G, "E": E}, ema=averaged)
    auto = Autoencoder(G, E, config.gan.z_dim)
    z = latents.normal(np.random.default_rng([seed, 1]), n, config.gan.z_dim, truncation)
    fake = auto.samples(z)
    data = build_data(config.data.dataset, config.data.args, config.data.batch_size, config.seed)
    report, table, extractor = score_samples(fake, data, classifier, metrics, seed)
    if extractor is None:  # a 2D mixture: squared errors and the modes kept
        x, source = evaluation_examples(config, data, recon, seed + 1)
        report["reconstruction"] = {"examples": len(x), "source": source,
                                    **reconstruction_errors(x, auto.reconstruct(x), data.mixture)}
    else:
        held, source = held_out_examples(config, recon)
        rec = auto.reconstruct(held.x)
        report["reconstruction"] = {
            "examples": len(held), "source": source, **reconstruction_errors(held.x, rec),
            **class_agreement(extractor, held.x, rec, held.y)}
    table += "\n" + format_reconstruction(report["reconstruction"])
    report.update({"checkpoint": str(checkpoint.resolve(ckpt)), "ema": averaged})
    Path(out).write_text(json.dumps(report, indent=1, default=plain))
    report["path"], report["table"] = str(out), table
    return report


def format_reconstruction(r: dict[str, Any]) -> str:
    """One line on G(E(x)) for the printed report."""
    line = (f"reconstructions of {r['examples']} {r['source']}: squared error "
            f"{r['recon_mse']:.4f} (another example's {r['recon_mse_shuffled']:.4f})")
    if "class_match" in r:
        line += f"; class kept {100 * r['class_match']:.1f}%"
    if "mode_match" in r:
        line += f"; mode kept {100 * r['mode_match']:.1f}%"
    if "recon_accuracy" in r:
        line += (f", classifier accuracy {100 * r['recon_accuracy']:.1f}% on them "
                 f"({100 * r['input_accuracy']:.1f}% on the inputs)")
    return line


def evaluate(ckpt: Path, config: ALIConfig, out: Path, options: EvalOptions) -> dict[str, Any]:
    """The ALI recipe's ``gantrain eval``: :func:`evaluate_run` with the command's options."""
    for name in ("drs", "dot", "mh"):
        if getattr(options, name) is not None:
            raise ConfigError(f"`gantrain eval` of ALI runs has no --{name} (`gantrain sample "
                              "--drs` draws from an ALI run whose D scores x alone)")
    o = options
    return evaluate_run(ckpt, config, out, o.classifier, o.n, o.metrics, o.ema, o.seed,
                        truncation=o.truncation)
