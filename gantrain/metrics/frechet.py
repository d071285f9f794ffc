"""Fréchet distance between Gaussian fits of two feature sets (FID when the features are Inception).

Heusel et al. 2017, "GANs Trained by a Two Time-Scale Update Rule Converge to a Local Nash
Equilibrium": fit a Gaussian N(mu, S) to each feature set and report the squared 2-Wasserstein
(Fréchet) distance between the two Gaussians,

    FD = ||mu1 - mu2||^2 + Tr(S1 + S2 - 2 (S1 S2)^(1/2)).

Only the *trace* of (S1 S2)^(1/2) is needed, so no general (non-symmetric) matrix square root is
computed. S1 S2 is similar to the symmetric PSD matrix A = S1^(1/2) S2 S1^(1/2)
(S1 S2 = S1^(1/2) A S1^(-1/2) when S1 is invertible; by continuity otherwise), so both have the
same non-negative eigenvalues and Tr (S1 S2)^(1/2) = sum_i sqrt(eig_i(A)). Everything uses
symmetric eigendecompositions in float64, with tiny negative eigenvalues (round-off, or rank
deficiency when N <= D) clipped to 0. Pure numpy: no scipy.
"""

from __future__ import annotations

import numpy as np

from .checks import as_features


def _check_stats(name: str, mu: np.ndarray, sigma: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    mu = np.asarray(mu, dtype=np.float64)
    sigma = np.asarray(sigma, dtype=np.float64)
    if mu.ndim != 1:
        raise ValueError(f"mu{name} must be 1-D (D,), got shape {mu.shape}")
    d = mu.shape[0]
    if sigma.shape != (d, d):
        raise ValueError(f"sigma{name} must have shape ({d}, {d}) to match mu{name}, "
                         f"got shape {sigma.shape}")
    if not (np.isfinite(mu).all() and np.isfinite(sigma).all()):
        raise ValueError(f"mu{name} / sigma{name} contain NaN or inf")
    return mu, sigma


def gaussian_stats(feats: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean (D,) and unbiased covariance (D, D) of ``feats`` (N, D), N >= 2, in float64.

    These are the sufficient statistics for :func:`frechet_from_stats`; cache the real-data pair
    once and reuse it for every evaluation of a generator.
    """
    x = as_features("feats", feats)
    return x.mean(axis=0), np.cov(x, rowvar=False, ddof=1).reshape(x.shape[1], x.shape[1])


def _sym_sqrt(s: np.ndarray) -> np.ndarray:
    """Principal square root of a symmetric PSD matrix via eigh, negative eigenvalues -> 0."""
    w, v = np.linalg.eigh((s + s.T) / 2)
    return (v * np.sqrt(np.clip(w, 0.0, None))) @ v.T


def trace_sqrt_product(sigma1: np.ndarray, sigma2: np.ndarray) -> float:
    """Tr((S1 S2)^(1/2)) for symmetric PSD S1, S2, as sum sqrt(eig(S1^(1/2) S2 S1^(1/2)))."""
    r1 = _sym_sqrt(np.asarray(sigma1, dtype=np.float64))
    a = r1 @ np.asarray(sigma2, dtype=np.float64) @ r1
    eig = np.linalg.eigvalsh((a + a.T) / 2)  # symmetrize away round-off before eigvalsh
    return float(np.sqrt(np.clip(eig, 0.0, None)).sum())


def frechet_from_stats(
    mu1: np.ndarray, sigma1: np.ndarray, mu2: np.ndarray, sigma2: np.ndarray
) -> float:
    """Fréchet distance ||mu1-mu2||^2 + Tr(S1 + S2 - 2 (S1 S2)^(1/2)) (Heusel et al. 2017).

    ``mu*`` are (D,) means, ``sigma*`` (D, D) covariances. The result is >= 0 mathematically; a
    round-off negative (~1e-12 for identical statistics) is returned as 0.
    """
    mu1, sigma1 = _check_stats("1", mu1, sigma1)
    mu2, sigma2 = _check_stats("2", mu2, sigma2)
    if mu1.shape != mu2.shape:
        raise ValueError(
            f"mu1 and mu2 must have the same feature dimension, got {mu1.shape} and {mu2.shape}"
        )
    diff = mu1 - mu2
    fd = diff @ diff + np.trace(sigma1) + np.trace(sigma2) - 2 * trace_sqrt_product(sigma1, sigma2)
    return max(float(fd), 0.0)


def frechet_distance(feats_a: np.ndarray, feats_b: np.ndarray) -> float:
    """Fréchet distance between Gaussian fits of ``feats_a`` (N, D) and ``feats_b`` (M, D).

    With Inception-v3 pool features this is FID (Heusel et al. 2017). Note the estimator is
    biased upwards for finite N (Binkowski et al. 2018), so compare runs at equal sample counts.
    """
    a = as_features("feats_a", feats_a)
    b = as_features("feats_b", feats_b)
    if a.shape[1] != b.shape[1]:
        raise ValueError(
            f"feats_a and feats_b must have the same feature dimension D, got shapes "
            f"{a.shape} and {b.shape}"
        )
    return frechet_from_stats(*gaussian_stats(a), *gaussian_stats(b))
