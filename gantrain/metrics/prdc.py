"""k-NN manifold metrics: improved precision/recall and density/coverage.

Both estimate each distribution's support as the union of balls around its samples, each ball's
radius being the distance to the sample's k-th nearest neighbour within its own set.

* Kynkaanniemi et al. 2019, "Improved Precision and Recall Metric for Assessing Generative
  Models": precision = fraction of fake samples inside the real support (fidelity); recall =
  fraction of real samples inside the fake support (diversity). Paper default k = 3.
* Naeem et al. 2020, "Reliable Fidelity and Diversity Metrics for Generative Models":
  density = (1 / kM) sum_j #{real balls containing fake_j} (expected value 1 when both sets
  come from the same distribution; > 1 when fakes cluster where reals are dense; unbounded) and
  coverage = fraction of real samples whose ball contains at least one fake (robust to real
  outliers, which inflate precision's support). Paper default k = 5.

Distances are Euclidean, computed as ||a||^2 + ||b||^2 - 2 a.b in float64 over row blocks of
``chunk_size`` rows, so memory is O(chunk_size * max(N, M)) rather than O(N * M). Everything is
compared as squared distances (same ordering, no sqrt). A point on a ball's boundary counts as
inside, matching "within the k-NN radius" since the k-th neighbour itself lies on it. BLAS
rounds the same dot product differently depending on block shape (and uses a symmetric kernel
for x @ x.T), so "on the boundary" is tested up to a round-off bound of the expansion,
d^2 <= r^2 + tol with tol = 4 (D + 2) eps max ||x||^2 (~1e-11 for unit-scale 128-d features).
Without it an exact copy of a ball's k-th neighbour (e.g. a memorized training sample) lands
on either side at random, which can lower density by up to 1 / (k + 1).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from .checks import as_features

DEFAULT_CHUNK = 1024


def _check_inputs(real: np.ndarray, fake: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    out = [as_features("real", real, 1), as_features("fake", fake, 1)]
    if out[0].shape[1] != out[1].shape[1]:
        raise ValueError(f"real and fake must have the same feature dimension D, got shapes "
                         f"{out[0].shape} and {out[1].shape}")
    # Translating both sets leaves distances unchanged but shrinks the norms, so less
    # cancellation in ||a||^2 + ||b||^2 - 2 a.b (features like Inception's are far from 0).
    shift = out[0].mean(axis=0)
    return out[0] - shift, out[1] - shift


def _roundoff_tol(real: np.ndarray, fake: np.ndarray) -> float:
    """Bound on the error of ||a||^2 + ||b||^2 - 2 a.b: each term is a D-length float64 sum."""
    max_sq = max(np.einsum("ij,ij->i", x, x).max() for x in (real, fake))
    return 4.0 * (real.shape[1] + 2) * np.finfo(np.float64).eps * float(max_sq)


def _check_k(name: str, k: int, **sets: np.ndarray) -> None:
    """The k-th neighbour *excluding the point itself* needs k <= N - 1 in every set."""
    for set_name, x in sets.items():
        if not 1 <= k < x.shape[0]:
            raise ValueError(f"{name} must satisfy 1 <= {name} < N (the k-th neighbour excludes "
                             f"the point itself), got {name}={k} with {set_name} of shape "
                             f"{x.shape}")


def _check_chunk(chunk_size: int) -> None:
    if chunk_size < 1:
        raise ValueError(f"chunk_size must be >= 1, got {chunk_size}")


def _sqdist_blocks(
    a: np.ndarray, b: np.ndarray, chunk_size: int
) -> Iterator[tuple[int, np.ndarray]]:
    """Yield (start, D2) where D2[i, j] = ||a[start+i] - b[j]||^2, for row blocks of ``a``.

    Every block is a view of one reused (min(chunk_size, len(a)), len(b)) float64 buffer, so
    only one block is ever alive: the caller may overwrite it, but it is only valid until the
    next iteration.
    """
    b_sq = np.einsum("ij,ij->i", b, b)
    buf = np.empty((min(chunk_size, a.shape[0]), b.shape[0]))
    for start in range(0, a.shape[0], chunk_size):
        rows = a[start:start + chunk_size]
        d2 = buf[:rows.shape[0]]
        np.matmul(rows, b.T, out=d2)
        d2 *= -2.0
        d2 += np.einsum("ij,ij->i", rows, rows)[:, None]
        d2 += b_sq[None, :]
        np.maximum(d2, 0.0, out=d2)  # cancellation can give tiny negatives
        yield start, d2


def _knn_sqradii(x: np.ndarray, ks: list[int], chunk_size: int = DEFAULT_CHUNK) -> np.ndarray:
    """Squared distance from each row of ``x`` (N, D) to its k-th nearest other row, per k.

    Returns (len(ks), N). The self-distance is set to exactly 0 so it is always the 0-th order
    statistic and the k-th order statistic is the k-th neighbour excluding the point itself.
    """
    n = x.shape[0]
    out = np.empty((len(ks), n))
    for start, d2 in _sqdist_blocks(x, x, chunk_size):
        rows = np.arange(d2.shape[0])
        d2[rows, start + rows] = 0.0
        d2.partition(ks, axis=1)  # in place: positions ks now hold those order statistics
        out[:, start:start + d2.shape[0]] = d2[:, ks].T
    return out


def _cross_pass(
    real: np.ndarray,
    fake: np.ndarray,
    chunk_size: int,
    real_r2_pr: np.ndarray | None = None,
    fake_r2_pr: np.ndarray | None = None,
    real_r2_dc: np.ndarray | None = None,
    k_dc: int = 0,
) -> dict[str, float]:
    """One blocked pass over fake x real distances computing the metrics whose radii are given.

    The ``*_r2_*`` are squared radii plus the round-off tolerance. real_r2_pr -> precision,
    fake_r2_pr -> recall, real_r2_dc (with its k_dc) -> density and coverage. Only boolean
    (chunk, N) temporaries are added to the distance block.
    """
    precise = 0  # fakes inside the real support
    recalled = np.zeros(real.shape[0], dtype=bool)  # real j inside some fake ball
    in_balls = 0  # (fake, real ball containing it) pairs
    covered = np.zeros(real.shape[0], dtype=bool)  # real ball j contains some fake
    for start, d2 in _sqdist_blocks(fake, real, chunk_size):
        if real_r2_pr is not None:
            precise += int((d2 <= real_r2_pr[None, :]).any(axis=1).sum())
        if fake_r2_pr is not None:
            recalled |= (d2 <= fake_r2_pr[start:start + d2.shape[0], None]).any(axis=0)
        if real_r2_dc is not None:
            inside = d2 <= real_r2_dc[None, :]
            in_balls += int(np.count_nonzero(inside))
            covered |= inside.any(axis=0)
    out: dict[str, float] = {}
    if real_r2_pr is not None:
        out["precision"] = precise / fake.shape[0]
    if fake_r2_pr is not None:
        out["recall"] = float(recalled.mean())
    if real_r2_dc is not None:
        out["density"] = in_balls / (k_dc * fake.shape[0])
        out["coverage"] = float(covered.mean())
    return out


def precision_recall(
    real: np.ndarray, fake: np.ndarray, k: int = 3, chunk_size: int = DEFAULT_CHUNK
) -> dict[str, float]:
    """Improved precision and recall (Kynkaanniemi et al. 2019) of ``fake`` (M, D) vs ``real``.

    precision = mean_j 1[exists i: ||fake_j - real_i|| <= r_k(real_i)]
    recall    = mean_i 1[exists j: ||real_i - fake_j|| <= r_k(fake_j)]
    with r_k the distance to the k-th nearest neighbour in the sample's own set.
    Requires 1 <= k < min(N, M). Returns {"precision", "recall"} in [0, 1].
    """
    real, fake = _check_inputs(real, fake)
    _check_k("k", k, real=real, fake=fake)
    _check_chunk(chunk_size)
    tol = _roundoff_tol(real, fake)
    real_r2 = _knn_sqradii(real, [k], chunk_size)[0] + tol
    fake_r2 = _knn_sqradii(fake, [k], chunk_size)[0] + tol
    return _cross_pass(real, fake, chunk_size, real_r2_pr=real_r2, fake_r2_pr=fake_r2)


def density_coverage(
    real: np.ndarray, fake: np.ndarray, k: int = 5, chunk_size: int = DEFAULT_CHUNK
) -> dict[str, float]:
    """Density and coverage (Naeem et al. 2020) of ``fake`` (M, D) vs ``real`` (N, D).

    density  = (1 / kM) sum_j sum_i 1[||fake_j - real_i|| <= r_k(real_i)]
    coverage = mean_i 1[exists j: ||fake_j - real_i|| <= r_k(real_i)]
    Only real k-NN radii are used, so only 1 <= k < N is required. For fake == real exactly,
    each real ball holds its centre plus its k neighbours, so density = (k + 1) / k (ties
    aside); for independent samples of one distribution its expectation is 1.
    """
    real, fake = _check_inputs(real, fake)
    _check_k("k", k, real=real)
    _check_chunk(chunk_size)
    real_r2 = _knn_sqradii(real, [k], chunk_size)[0] + _roundoff_tol(real, fake)
    return _cross_pass(real, fake, chunk_size, real_r2_dc=real_r2, k_dc=k)


def prdc(
    real: np.ndarray,
    fake: np.ndarray,
    k_pr: int = 3,
    k_dc: int = 5,
    chunk_size: int = DEFAULT_CHUNK,
) -> dict[str, float]:
    """Precision, recall (k = ``k_pr``), density and coverage (k = ``k_dc``) in one go.

    Same values as :func:`precision_recall` and :func:`density_coverage`, but both real radii
    come from one real x real pass and all four metrics from one fake x real pass.
    Returns {"precision", "recall", "density", "coverage"}.
    """
    real, fake = _check_inputs(real, fake)
    _check_k("k_pr", k_pr, real=real, fake=fake)
    _check_k("k_dc", k_dc, real=real)
    _check_chunk(chunk_size)
    tol = _roundoff_tol(real, fake)
    real_r2_pr, real_r2_dc = _knn_sqradii(real, [k_pr, k_dc], chunk_size) + tol
    fake_r2 = _knn_sqradii(fake, [k_pr], chunk_size)[0] + tol
    return _cross_pass(real, fake, chunk_size, real_r2_pr=real_r2_pr, fake_r2_pr=fake_r2,
                       real_r2_dc=real_r2_dc, k_dc=k_dc)
