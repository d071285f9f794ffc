"""Inception Score with the standard 10 splits (Salimans et al. 2016, "Improved Techniques for
Training GANs").

IS = exp(E_x KL(p(y|x) || p(y))), computed on each of ``splits`` consecutive equal parts of the
samples with that part's own marginal p(y); the mean and the (population) standard deviation
over the parts are reported, as the original code does. As in that code (and torch-fidelity's
"logits_unbiased"), p(y|x) is the softmax of pool3 @ W^T over the 2015 graph's 1008 classes,
*without* the logit bias: the original took only the MatMul's weight from the graph.
"""

from __future__ import annotations

import numpy as np


def unbiased_logits(pool3: np.ndarray, fc_weight: np.ndarray) -> np.ndarray:
    """(N, 2048) pool3 features @ (1008, 2048) weights^T -> (N, 1008) logits without bias."""
    return np.asarray(pool3, np.float64) @ np.asarray(fc_weight, np.float64).T


def inception_score(logits: np.ndarray, splits: int = 10) -> tuple[float, float]:
    """(mean, std) of the Inception Score over ``splits`` parts of ``logits`` (N, C).

    Part i is rows [i N // splits, (i + 1) N // splits), as in Salimans et al.'s code.
    """
    z = np.asarray(logits, dtype=np.float64)
    if z.ndim != 2 or not np.isfinite(z).all():
        raise ValueError(f"logits must be a finite 2-D (N, C) array, got shape {z.shape}")
    if not 1 <= splits <= len(z):
        raise ValueError(f"splits must be in [1, N={len(z)}], got {splits}")
    log_p = z - z.max(axis=1, keepdims=True)
    log_p -= np.log(np.exp(log_p).sum(axis=1, keepdims=True))  # log softmax, stable
    scores = []
    for i in range(splits):
        part = log_p[i * len(z) // splits:(i + 1) * len(z) // splits]
        log_marginal = np.log(np.exp(part).mean(axis=0))
        kl = (np.exp(part) * (part - log_marginal)).sum(axis=1)
        scores.append(np.exp(kl.mean()))
    return float(np.mean(scores)), float(np.std(scores))
