"""Discriminator rejection sampling (Azadi et al. 2019, "Discriminator Rejection Sampling").

A discriminator trained with the standard GAN loss estimates, through its logit ``D~(x)``, the
log density ratio ``log p_data(x) / p_g(x)`` (up to how close to optimal it is). Rejection
sampling with acceptance ``p_data / (M p_g) = exp(D~(x) - D~*)``, ``D~* = max D~``, would then
draw from the data distribution; DRS makes that practical (their Algorithm 1): it estimates
``D~*`` on a burn-in set (and raises it when a larger logit shows up), and accepts with
probability ``sigmoid(F(x))``,

    F(x) = D~(x) - D~* - log(1 - exp(D~(x) - D~* - eps)) - gamma,

where the log term keeps F finite near the maximum and ``gamma`` shifts the acceptance: a high
``gamma`` keeps only samples D rates as most real. ``gamma = 0`` is exact rejection sampling
(``sigmoid(F) = exp(D~ - D~*)``); the paper sets ``gamma`` to a percentile of F over the
candidates, which keeps more of them when D is far from optimal.

Only numpy here: ``draw(k)`` gives k candidates and ``score(x)`` their logits, so any recipe
can use it with its own generator and critic.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

EPS = 1e-6
# GAN losses whose optimal D logit is log p_data / p_g, which DRS relies on
DENSITY_RATIO_LOSSES = ("nonsaturating", "minimax")


def check_density_ratio_loss(loss: str, flag: str = "--drs") -> None:
    """Refuse (ValueError) a run whose D was trained with a loss whose logit is not a log
    density ratio; ``flag`` names the sampling option that needs one."""
    if loss not in DENSITY_RATIO_LOSSES:
        raise ValueError(f"{flag} needs a D whose logit estimates log p_data/p_g (gan.loss "
                          f"{' or '.join(DENSITY_RATIO_LOSSES)}); this run used {loss!r}")


def drs_f(logits: np.ndarray, max_logit: float, gamma: float, eps: float = EPS) -> np.ndarray:
    """``F(x)`` of Azadi et al. 2019, Sec. 3.2, for logits no larger than ``max_logit``."""
    d = np.asarray(logits, dtype=np.float64) - max_logit
    return d - np.log1p(-np.exp(d - eps)) - gamma


def acceptance(logits: np.ndarray, max_logit: float, gamma: float) -> np.ndarray:
    """The probability of keeping each candidate, ``sigmoid(F(x))``."""
    f = drs_f(logits, max_logit, gamma)
    return 1.0 / (1.0 + np.exp(-f))


def rejection_sample(draw: Callable[[int], np.ndarray], score: Callable[[np.ndarray], np.ndarray],
                     n: int, rng: np.random.Generator, percentile: float | None = 80.0,
                     burn_in: int = 10_000, batch: int = 1024, max_candidates: int | None = None
                     ) -> tuple[np.ndarray, float]:
    """``n`` samples kept by DRS, and the share of candidates that were kept.

    Args:
        draw: ``k -> (k, ...)`` candidates from the generator.
        score: ``(k, ...) -> (k,)`` the critic's logits for them.
        n: samples to keep.
        rng: the accept/reject coin flips.
        percentile: ``gamma`` is this percentile of ``F`` (computed with ``gamma = 0``) over
            the burn-in candidates; higher keeps fewer samples, those D rates most real.
            ``None``: ``gamma = 0``, exact rejection sampling for an optimal D.
        burn_in: candidates used to estimate the maximum logit and ``gamma``.
        batch: candidates drawn and scored at a time.
        max_candidates: give up after this many (default ``1000 * n + burn_in``), with a
            ValueError saying how many were kept.
    """
    if percentile is not None and not 0 <= percentile <= 100:
        raise ValueError(f"DRS percentile must be in [0, 100], got {percentile}")
    first = draw(burn_in)
    logits = np.asarray(score(first), dtype=np.float64).reshape(-1)
    max_logit = float(logits.max())
    gamma = 0.0
    if percentile is not None:
        gamma = float(np.percentile(drs_f(logits, max_logit, 0.0), percentile))
    limit = max_candidates if max_candidates is not None else 1000 * n + burn_in
    kept, seen, total = [], 0, 0
    candidates, candidate_logits = first, logits
    while True:
        max_logit = max(max_logit, float(candidate_logits.max()))
        keep = rng.random(len(candidates)) < acceptance(candidate_logits, max_logit, gamma)
        kept.append(candidates[keep])
        total += int(keep.sum())
        seen += len(candidates)
        if total >= n:
            return np.concatenate(kept)[:n], total / seen
        if seen >= limit:
            raise ValueError(f"discriminator rejection sampling kept {total} of {seen} "
                             f"candidates, fewer than the {n} asked for; lower the percentile")
        candidates = draw(batch)
        candidate_logits = np.asarray(score(candidates), dtype=np.float64).reshape(-1)
