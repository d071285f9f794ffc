"""Class coverage of generated samples, from a classifier's predicted class probabilities.

A pretrained classifier labels each generated sample; mode collapse shows up as classes that
are never (or rarely) predicted and as a predicted-class histogram far from the data's class
distribution. Reported:

* ``histogram``: counts of the argmax class (ties go to the lowest class index);
* ``classes_covered``: classes predicted at least ``min_count`` times;
* ``kl``: KL(p_gen || p_data) between the normalized histogram and the data class frequencies
  (uniform if not given), the reverse KL used for mode counting on Stacked MNIST
  (Srivastava et al. 2017, Lin et al. 2018);
* ``inception_score``: the classifier-based analogue of the Inception Score (Salimans et al.
  2016), exp(E_x KL(p(y|x) || p(y))) with p(y) = E_x p(y|x). It lies in [1, C]: 1 when every
  sample gets the same prediction (or predictions carry no information), C when predictions are
  confident and the classes are balanced. Computed on the whole set (the original reports the
  mean over 10 splits, which gives slightly lower values).
"""

from __future__ import annotations

import numpy as np

#: Floor applied to data class frequencies inside the KL, so a class predicted for generated
#: samples but absent from the data adds a large finite penalty (p * log(p / 1e-12)) instead of
#: inf. Classes with p_gen = 0 contribute exactly 0 (0 log 0 = 0), so for data frequencies that
#: are all > 0 the epsilon has no effect at all.
KL_EPS = 1e-12


def _check_probs(probs: np.ndarray, atol: float = 1e-3) -> np.ndarray:
    p = np.asarray(probs, dtype=np.float64)
    if p.ndim != 2 or p.shape[0] < 1 or p.shape[1] < 1:
        raise ValueError(f"probs must be a non-empty 2-D (N, C) array, got shape {p.shape}")
    if not np.isfinite(p).all() or (p < 0).any():
        raise ValueError(f"probs (shape {p.shape}) must be finite and non-negative "
                         "(pass softmax probabilities, not logits)")
    sums = p.sum(axis=1)
    if not np.allclose(sums, 1.0, atol=atol):
        worst = float(sums[np.argmax(np.abs(sums - 1.0))])
        raise ValueError(f"each row of probs (shape {p.shape}) must sum to 1 within {atol}, "
                         f"found a row summing to {worst:.6g} (pass softmax probabilities)")
    return p


def _check_freq(freq: np.ndarray | None, c: int) -> np.ndarray:
    if freq is None:
        return np.full(c, 1.0 / c)
    q = np.asarray(freq, dtype=np.float64)
    if q.shape != (c,):
        raise ValueError(f"data_class_freq must have shape ({c},) to match probs' C, "
                         f"got shape {q.shape}")
    if not np.isfinite(q).all() or (q < 0).any() or q.sum() <= 0:
        raise ValueError(f"data_class_freq (shape {q.shape}) must be finite, non-negative and "
                         "not all zero")
    return q / q.sum()  # counts are accepted too


def kl_histogram(p: np.ndarray, q: np.ndarray, eps: float = KL_EPS) -> float:
    """KL(p || q) = sum_{p_i > 0} p_i log(p_i / max(q_i, eps)) for distributions ``p``, ``q``."""
    nz = p > 0
    return float((p[nz] * np.log(p[nz] / np.maximum(q[nz], eps))).sum())


def inception_score(probs: np.ndarray) -> float:
    """exp(E_x KL(p(y|x) || p(y))) over rows of ``probs`` (N, C) (Salimans et al. 2016)."""
    p = _check_probs(probs)
    marginal = p.mean(axis=0)
    # 0 log 0 = 0; wherever p(y|x) > 0 the marginal p(y) > 0 too, so no epsilon is needed.
    safe = np.where(p > 0, p, 1.0)
    per_sample = (p * (np.log(safe) - np.log(np.where(p > 0, marginal, 1.0)))).sum(axis=1)
    return float(np.exp(per_sample.mean()))


def class_report(
    probs: np.ndarray, data_class_freq: np.ndarray | None = None, min_count: int = 1
) -> dict:
    """Class-coverage summary of generated samples from their class probabilities.

    ``probs`` (N, C): each row a classifier's softmax output for one generated sample.
    ``data_class_freq`` (C,): class frequencies (or counts) of the real data; uniform if None.
    ``min_count``: a class is covered when predicted for at least this many samples.
    Returns {"histogram": (C,) int array, "classes_covered": int, "num_classes": int,
    "kl": float, "inception_score": float, "samples": int}; see the module docstring.
    """
    p = _check_probs(probs)
    n, c = p.shape
    q = _check_freq(data_class_freq, c)
    if min_count < 1:
        raise ValueError(f"min_count must be >= 1, got {min_count}")
    hist = np.bincount(p.argmax(axis=1), minlength=c)
    return {
        "histogram": hist,
        "classes_covered": int((hist >= min_count).sum()),
        "num_classes": c,
        "kl": kl_histogram(hist / n, q),
        "inception_score": inception_score(p),
        "samples": n,
    }
