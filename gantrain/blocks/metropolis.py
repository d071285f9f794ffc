"""Metropolis-Hastings sampling with the trained discriminator (Turner et al. 2019,
"Metropolis-Hastings Generative Adversarial Networks").

An independence sampler: the generator proposes ``x'`` and the chain moves from ``x`` to it
with probability

    alpha = min(1, (1/D(x) - 1) / (1/D(x') - 1)) = min(1, exp(l(x') - l(x))),

where ``D = sigmoid(l)`` is the discriminator's probability that a sample is real. For an
optimal D, ``l = log p_data / p_g`` and the chain's stationary distribution is the data's,
whatever G's; unlike rejection sampling it needs no bound on the ratio. Two details of the
paper make it work on a real D:

- **Calibration**: a D trained to the end of a run is over-confident, and the
  acceptance reads ``l`` as a log ratio on an absolute scale. ``l = a * logit + b`` is fitted by
  logistic regression of real (1) against generated (0) samples (Platt scaling); only the scale
  ``a`` enters ``alpha``. The paper compares several calibrators on a held-out set; logistic
  calibration is the simplest, and it also turns a hinge or Wasserstein critic's score (the
  paper wraps WGAN and Progressive GAN too) into a log-ratio estimate.
- **Initialisation at a real sample**, which avoids a burn-in: the chain starts where the target
  distribution has mass, and a chain that never accepted a proposal restarts from a generated
  sample so that every output is a generated one.

Only numpy here: ``draw(k)`` gives k proposals and ``score(x)`` their logits.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

BATCH = 1024  # samples scored at a time
CALIBRATION = 2000  # real and generated samples the calibration is fitted on


def fit_platt(real_logits: np.ndarray, fake_logits: np.ndarray, ridge: float = 1e-4,
              iterations: int = 100) -> tuple[float, float]:
    """``(a, b)`` of ``P(real | logit) = sigmoid(a * logit + b)``, fitted by Newton's method on
    the logits of real and of generated samples, each class weighted to half the total (the
    1:1 prior under which ``l`` is a log density ratio). ``ridge`` keeps the fit finite when
    the two sets do not overlap."""
    d = np.concatenate([real_logits, fake_logits]).astype(np.float64)
    y = np.concatenate([np.ones(len(real_logits)), np.zeros(len(fake_logits))])
    weight = np.where(y == 1, 0.5 / len(real_logits), 0.5 / len(fake_logits))
    features = np.stack([d, np.ones_like(d)], axis=1)
    penalty = np.diag([ridge, 0.0])

    def loss(w: np.ndarray) -> float:  # weighted logistic loss + ridge on a
        t = features @ w
        return float(weight @ (np.logaddexp(0, t) - y * t) + 0.5 * ridge * w[0] ** 2)

    w = np.zeros(2)  # p = 1/2 everywhere: Newton's method starts where it is well conditioned
    for _ in range(iterations):
        p = 1.0 / (1.0 + np.exp(-np.clip(features @ w, -500, 500)))
        grad = features.T @ (weight * (p - y)) + penalty @ w
        hess = features.T @ (features * (weight * p * (1 - p))[:, None]) + penalty
        step = np.linalg.solve(hess + 1e-12 * np.eye(2), grad)
        size, before = 1.0, loss(w)
        while loss(w - size * step) > before and size > 1e-6:  # damped: never uphill
            size /= 2
        w = w - size * step
        if np.abs(size * step).max() < 1e-10:
            break
    return float(w[0]), float(w[1])


def scored(score: Callable[[np.ndarray], np.ndarray], x: np.ndarray) -> np.ndarray:
    """``score`` over ``x`` in batches of :data:`BATCH`, as one float64 vector."""
    parts = [np.asarray(score(x[i:i + BATCH]), np.float64).reshape(-1)
             for i in range(0, len(x), BATCH)]
    return np.concatenate(parts)


def _chains(state: np.ndarray, logit: np.ndarray, draw: Callable[[int], np.ndarray],
            score: Callable[[np.ndarray], np.ndarray], scale: float, steps: int,
            rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, int]:
    """Run ``len(state)`` chains ``steps`` proposals each; the final states, which chains moved
    at least once, and how many proposals were accepted."""
    moved = np.zeros(len(state), bool)
    accepted = 0
    for _ in range(steps):
        proposal = draw(len(state))
        proposal_logit = scale * scored(score, proposal)
        # accept with probability min(1, exp(l' - l)); log(u) <= l' - l
        accept = np.log(rng.random(len(state))) <= proposal_logit - logit
        state[accept], logit[accept] = proposal[accept], proposal_logit[accept]
        moved |= accept
        accepted += int(accept.sum())
    return state, moved, accepted


def mh_sample(draw: Callable[[int], np.ndarray], score: Callable[[np.ndarray], np.ndarray],
              real: np.ndarray, n: int, rng: np.random.Generator, steps: int = 20,
              calibrate: int = CALIBRATION) -> tuple[np.ndarray, dict[str, float]]:
    """``n`` samples, each the end of an independent MH chain of ``steps`` proposals.

    Args:
        draw: ``k -> (k, ...)`` proposals from the generator.
        score: ``(k, ...) -> (k,)`` the discriminator's logits.
        real: real samples: the first ``calibrate`` fit the calibration against as many
            generated ones, and the chains start at random picks of all of them.
        n: samples (chains).
        rng: the proposals' acceptance draws and the chains' starting points.
        steps: proposals per chain (the paper's K).
        calibrate: real and generated samples the calibration is fitted on (0: none, ``a = 1``).

    Returns the samples and ``{"acceptance": share of proposals accepted, "restarted": share of
    chains restarted from a generated sample, "scale": the calibration's a}``.
    """
    if steps < 1:
        raise ValueError(f"MH chain length must be >= 1, got {steps}")
    if len(real) < 1:
        raise ValueError("MH needs real samples to start its chains, got none")
    scale = 1.0
    if calibrate > 0:
        k = min(calibrate, len(real))
        scale, _ = fit_platt(scored(score, real[:k]), scored(score, draw(k)))
    start = np.array(real[rng.integers(0, len(real), size=n)])
    state, moved, accepted = _chains(start, scale * scored(score, start), draw, score, scale,
                                     steps, rng)
    stuck = np.flatnonzero(~moved)
    if len(stuck):  # restart from a generated sample: the output must be a generated one
        again = draw(len(stuck))
        state[stuck], _, more = _chains(again, scale * scored(score, again), draw, score, scale,
                                        steps, rng)
        accepted += more
    proposals = steps * (n + len(stuck))
    return state, {"acceptance": accepted / proposals, "restarted": len(stuck) / n,
                   "scale": scale}
