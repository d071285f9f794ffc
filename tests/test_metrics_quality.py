"""Sample-quality metrics (FD, KID, PRDC, class coverage, Stacked MNIST) on known answers."""

from __future__ import annotations

import numpy as np
import pytest

from gantrain.data.stacked import stack_digits
from gantrain.metrics.classes import KL_EPS, class_report
from gantrain.metrics.frechet import frechet_distance, frechet_from_stats, gaussian_stats
from gantrain.metrics.kid import kernel_inception_distance, unbiased_mmd2
from gantrain.metrics.prdc import _sqdist_blocks, density_coverage, prdc, precision_recall
from gantrain.metrics.stacked import stacked_mnist_report


def _spd(rng: np.random.Generator, d: int) -> np.ndarray:
    a = rng.normal(size=(d, d))
    return a @ a.T / d + 0.1 * np.eye(d)


# ---------------------------------------------------------------- Fréchet distance


def test_fd_diagonal_gaussians_closed_form():
    rng = np.random.default_rng(0)
    mu1, mu2 = rng.normal(size=6), rng.normal(size=6)
    s1, s2 = rng.uniform(0.1, 3, size=6), rng.uniform(0.1, 3, size=6)
    expected = ((mu1 - mu2) ** 2).sum() + (s1 + s2 - 2 * np.sqrt(s1 * s2)).sum()
    got = frechet_from_stats(mu1, np.diag(s1), mu2, np.diag(s2))
    assert got == pytest.approx(expected, rel=1e-12)


def test_fd_singular_diagonal_covariances():
    # Variance on disjoint axes: S1 S2 = 0, so FD = |dmu|^2 + tr S1 + tr S2 = 9 + 1 + 1.
    s1, s2 = np.diag([1.0, 0.0]), np.diag([0.0, 1.0])
    got = frechet_from_stats(np.zeros(2), s1, np.array([3.0, 0.0]), s2)
    assert got == pytest.approx(11.0, abs=1e-12)


def test_fd_non_commuting_2x2_closed_form():
    # For 2x2 M with eigenvalues l1, l2 >= 0: Tr sqrt(M) = sqrt(Tr M + 2 sqrt(det M)).
    s1 = np.array([[2.0, 1.0], [1.0, 2.0]])
    s2 = np.array([[1.0, 0.0], [0.0, 4.0]])
    tr_sqrt = np.sqrt(np.trace(s1 @ s2) + 2 * np.sqrt(np.linalg.det(s1) * np.linalg.det(s2)))
    expected = 1.0 + np.trace(s1) + np.trace(s2) - 2 * tr_sqrt  # |mu1 - mu2|^2 = 1
    got = frechet_from_stats(np.zeros(2), s1, np.array([1.0, 0.0]), s2)
    assert got == pytest.approx(expected, rel=1e-12)
    assert got == pytest.approx(frechet_from_stats(np.array([1.0, 0.0]), s2, np.zeros(2), s1))


def test_fd_scaled_covariance():
    # S2 = c^2 S1  =>  (S1 S2)^(1/2) = c S1  =>  FD = |dmu|^2 + (1 - c)^2 tr S1.
    s1 = _spd(np.random.default_rng(1), 10)
    got = frechet_from_stats(np.zeros(10), s1, np.full(10, 0.5), 9.0 * s1)
    assert got == pytest.approx(2.5 + 4.0 * np.trace(s1), rel=1e-10)


def test_fd_identical_and_symmetric():
    rng = np.random.default_rng(2)
    a, b = rng.normal(size=(300, 20)), rng.normal(size=(200, 20)) * 1.5 + 0.3
    assert frechet_distance(a, a) == pytest.approx(0.0, abs=1e-9)
    assert frechet_distance(a, b) == pytest.approx(frechet_distance(b, a), rel=1e-9)
    few = rng.normal(size=(10, 50))  # N < D: rank-deficient covariance
    assert frechet_distance(few, few) == pytest.approx(0.0, abs=1e-9)
    assert np.isfinite(frechet_distance(few, rng.normal(size=(12, 50))))


def test_fd_sample_estimate_converges_to_closed_form():
    rng = np.random.default_rng(3)
    d = 8
    mu1, mu2, s1, s2 = rng.normal(size=d), rng.normal(size=d), _spd(rng, d), _spd(rng, d)
    a = rng.multivariate_normal(mu1, s1, size=20000)
    b = rng.multivariate_normal(mu2, s2, size=20000)
    assert frechet_distance(a, b) == pytest.approx(frechet_from_stats(mu1, s1, mu2, s2), rel=0.02)
    mu, sigma = gaussian_stats(a)
    assert mu.shape == (d,) and sigma.shape == (d, d)
    np.testing.assert_allclose(sigma, s1, atol=0.05)


def test_fd_bad_inputs():
    x = np.zeros((5, 3))
    with pytest.raises(ValueError, match=r"feats_a .*\(5,\)"):
        frechet_distance(np.zeros(5), x)
    with pytest.raises(ValueError, match=r"same feature dimension.*\(5, 3\).*\(5, 4\)"):
        frechet_distance(x, np.zeros((5, 4)))
    with pytest.raises(ValueError, match="feats_b.*at least 2 rows"):
        frechet_distance(x, np.zeros((1, 3)))
    with pytest.raises(ValueError, match="NaN"):
        frechet_distance(x, np.full((5, 3), np.nan))
    with pytest.raises(ValueError, match=r"sigma2 .*\(3, 3\)"):
        frechet_from_stats(np.zeros(3), np.eye(3), np.zeros(3), np.eye(2))


# ---------------------------------------------------------------- KID


def _poly(x: np.ndarray, y: np.ndarray) -> float:
    return (float(np.dot(x, y)) / len(x) + 1.0) ** 3


def _brute_mmd2(x: np.ndarray, y: np.ndarray) -> float:
    m, n = len(x), len(y)
    xx = sum(_poly(x[i], x[j]) for i in range(m) for j in range(m) if i != j) / (m * (m - 1))
    yy = sum(_poly(y[i], y[j]) for i in range(n) for j in range(n) if i != j) / (n * (n - 1))
    xy = sum(_poly(x[i], y[j]) for i in range(m) for j in range(n)) / (m * n)
    return xx + yy - 2 * xy


def test_kid_matches_brute_force_unbiased_estimator():
    rng = np.random.default_rng(4)
    x, y = rng.normal(size=(5, 3)), rng.normal(size=(4, 3)) + 0.7
    assert unbiased_mmd2(x, y) == pytest.approx(_brute_mmd2(x, y), rel=1e-12)
    # One subset of the full (equal-size) sets: a permutation, and the U-statistic is
    # permutation invariant, so KID equals the brute-force value with zero spread.
    x6, y6 = rng.normal(size=(6, 3)), rng.normal(size=(6, 3))
    mean, std = kernel_inception_distance(x6, y6, subsets=1, subset_size=6)
    assert mean == pytest.approx(_brute_mmd2(x6, y6), rel=1e-12) and std == 0.0


def test_kid_point_masses_by_hand():
    # d = 1, X = {0}, Y = {1}: k(0,0) = 1, k(1,1) = 2^3 = 8, k(0,1) = 1  =>  MMD^2 = 1 + 8 - 2.
    mean, std = kernel_inception_distance(np.zeros((10, 1)), np.ones((10, 1)), subsets=3)
    assert mean == pytest.approx(7.0, rel=1e-12) and std == pytest.approx(0.0, abs=1e-12)


def test_kid_same_distribution_is_near_zero():
    rng = np.random.default_rng(5)
    a, b = rng.normal(size=(2000, 16)), rng.normal(size=(2000, 16))
    mean, std = kernel_inception_distance(a, b, subsets=20, subset_size=500)
    assert std > 0 and abs(mean) < std


def test_kid_grows_with_shift():
    rng = np.random.default_rng(6)
    a, b = rng.normal(size=(1000, 16)), rng.normal(size=(1000, 16))
    results = [kernel_inception_distance(a, b + s, subsets=10, subset_size=300) for s in
               (0.5, 1.0, 2.0)]
    means = [m for m, _ in results]
    assert means[0] > 3 * results[0][1]  # clearly positive already at the smallest shift
    assert means[0] < means[1] < means[2]


def test_kid_subset_size_clipped_and_seeded():
    rng = np.random.default_rng(7)
    a, b = rng.normal(size=(50, 4)), rng.normal(size=(30, 4))
    clipped = kernel_inception_distance(a, b, subsets=5, subset_size=1000, seed=3)
    assert clipped == kernel_inception_distance(a, b, subsets=5, subset_size=30, seed=3)
    assert clipped != kernel_inception_distance(a, b, subsets=5, subset_size=30, seed=4)


def test_kid_bad_inputs():
    x = np.zeros((5, 3))
    with pytest.raises(ValueError, match=r"feats_b .*\(5, 3, 1\)"):
        kernel_inception_distance(x, np.zeros((5, 3, 1)))
    with pytest.raises(ValueError, match="same feature dimension"):
        kernel_inception_distance(x, np.zeros((5, 2)))
    with pytest.raises(ValueError, match="subset_size"):
        kernel_inception_distance(x, x, subset_size=1)


# ---------------------------------------------------------------- precision/recall/density/coverage


def _brute_prdc(real, fake, k_pr, k_dc):
    d_rr = np.linalg.norm(real[:, None] - real[None], axis=2)
    d_ff = np.linalg.norm(fake[:, None] - fake[None], axis=2)
    d_fr = np.linalg.norm(fake[:, None] - real[None], axis=2)  # (M, N)
    r_pr = np.sort(d_rr, axis=1)[:, k_pr]
    r_dc = np.sort(d_rr, axis=1)[:, k_dc]
    f_pr = np.sort(d_ff, axis=1)[:, k_pr]
    return {
        "precision": (d_fr <= r_pr[None]).any(axis=1).mean(),
        "recall": (d_fr <= f_pr[:, None]).any(axis=0).mean(),
        "density": (d_fr <= r_dc[None]).sum() / (k_dc * len(fake)),
        "coverage": (d_fr <= r_dc[None]).any(axis=0).mean(),
    }


def test_prdc_matches_brute_force_and_is_chunk_invariant():
    rng = np.random.default_rng(8)
    real, fake = rng.normal(size=(60, 3)), rng.normal(size=(50, 3)) * 1.3 + 0.4
    expected = _brute_prdc(real, fake, 3, 5)
    for chunk in (7, 1024):
        got = prdc(real, fake, chunk_size=chunk)
        for key, value in expected.items():
            assert got[key] == pytest.approx(value, abs=1e-12), (key, chunk)
    assert precision_recall(real, fake) | density_coverage(real, fake) == prdc(real, fake)


def test_prdc_identical_sets():
    x = np.random.default_rng(9).normal(size=(500, 8))
    got = prdc(x, x)
    assert got["precision"] == got["recall"] == got["coverage"] == 1.0
    # Each real ball holds its centre and its k = 5 neighbours: density = (k + 1) / k.
    assert got["density"] == pytest.approx(6 / 5, abs=1e-12)


def test_prdc_independent_samples_same_distribution():
    rng = np.random.default_rng(10)
    got = prdc(rng.normal(size=(2000, 2)), rng.normal(size=(2000, 2)))
    assert got["density"] == pytest.approx(1.0, abs=0.05)  # E[density] = 1 (Naeem et al.)
    assert min(got["precision"], got["recall"], got["coverage"]) > 0.9


def test_prdc_disjoint_sets():
    rng = np.random.default_rng(11)
    got = prdc(rng.normal(size=(300, 4)), rng.normal(size=(300, 4)) + 1000.0)
    assert got == {"precision": 0.0, "recall": 0.0, "density": 0.0, "coverage": 0.0}


def test_prdc_fake_covers_half_the_modes():
    rng = np.random.default_rng(12)
    centre = np.array([100.0, 0.0])
    real = np.concatenate([rng.normal(size=(1000, 2)), rng.normal(size=(1000, 2)) + centre])
    exact = prdc(real, real[:1000])  # fakes are the real samples of mode 0
    assert exact["precision"] == 1.0 and exact["recall"] == 0.5 and exact["coverage"] == 0.5
    assert exact["density"] == pytest.approx(6 / 5, abs=1e-12)  # memorized: centre + 5 nbrs
    fresh = prdc(real, rng.normal(size=(2000, 2)))  # new samples of mode 0
    assert fresh["precision"] > 0.95
    assert 0.45 < fresh["recall"] <= 0.5 and 0.45 < fresh["coverage"] <= 0.5


def test_prdc_distance_blocks_are_bounded():
    rng = np.random.default_rng(13)
    a, b = rng.normal(size=(2500, 3)), rng.normal(size=(40, 3))
    shapes = [d2.shape for _, d2 in _sqdist_blocks(a, b, 1024)]
    assert shapes == [(1024, 40), (1024, 40), (452, 40)]


def test_prdc_bad_inputs():
    real, fake = np.zeros((5, 2)), np.zeros((10, 2))
    with pytest.raises(ValueError, match=r"k_pr.*real of shape \(5, 2\)"):
        prdc(real, fake, k_pr=5)
    with pytest.raises(ValueError, match=r"k .*fake of shape \(3, 2\)"):
        precision_recall(fake, np.zeros((3, 2)), k=3)
    density_coverage(fake, np.zeros((2, 2)), k=5)  # only real radii: fake may be tiny
    with pytest.raises(ValueError, match=r"same feature dimension.*\(5, 2\).*\(10, 3\)"):
        prdc(real, np.zeros((10, 3)))
    with pytest.raises(ValueError, match=r"fake .*\(10,\)"):
        prdc(real, np.zeros(10))


# ---------------------------------------------------------------- class coverage


def test_classes_uniform_confident_predictions():
    probs = np.tile(np.eye(4), (5, 1))  # 5 confident samples of each of 4 classes
    rep = class_report(probs)
    assert rep["histogram"].tolist() == [5, 5, 5, 5]
    assert rep["classes_covered"] == 4 and rep["num_classes"] == 4 and rep["samples"] == 20
    assert rep["kl"] == pytest.approx(0.0, abs=1e-12)
    assert rep["inception_score"] == pytest.approx(4.0, rel=1e-12)


def test_classes_all_one_class():
    probs = np.zeros((7, 4))
    probs[:, 2] = 1.0
    rep = class_report(probs)
    assert rep["histogram"].tolist() == [0, 0, 7, 0] and rep["classes_covered"] == 1
    assert rep["inception_score"] == pytest.approx(1.0, rel=1e-12)
    assert rep["kl"] == pytest.approx(np.log(4), rel=1e-12)  # KL(delta || uniform_4)


def test_classes_mixed_predictions_by_hand():
    # p(y) = (0.75, 0.25); KL(onehot || p) = log(4/3), KL(half/half || p) = log(4/3) / 2,
    # mean over 2 + 2 samples = 0.75 log(4/3)  =>  IS = (4/3)^0.75. Ties go to class 0.
    probs = np.array([[1.0, 0.0], [1.0, 0.0], [0.5, 0.5], [0.5, 0.5]])
    rep = class_report(probs)
    assert rep["inception_score"] == pytest.approx((4 / 3) ** 0.75, rel=1e-12)
    assert rep["histogram"].tolist() == [4, 0] and rep["classes_covered"] == 1
    assert rep["kl"] == pytest.approx(np.log(2), rel=1e-12)
    assert class_report(np.full((3, 5), 0.2))["inception_score"] == pytest.approx(1.0)


def test_classes_data_frequencies_and_min_count():
    probs = np.eye(3)[[0, 0, 1, 1]]  # histogram (2, 2, 0): p = (1/2, 1/2, 0)
    rep = class_report(probs, data_class_freq=np.array([1, 1, 2]))  # counts -> (1/4, 1/4, 1/2)
    assert rep["kl"] == pytest.approx(np.log(2), rel=1e-12)  # 2 * 0.5 log(0.5 / 0.25)
    skewed = np.eye(3)[[0] * 5 + [1]]  # histogram (5, 1, 0)
    assert class_report(skewed)["classes_covered"] == 2
    assert class_report(skewed, min_count=2)["classes_covered"] == 1
    # A class the data never has: large but finite penalty from the documented epsilon.
    rep = class_report(np.eye(2)[[0, 0]], data_class_freq=np.array([0.0, 1.0]))
    assert rep["kl"] == pytest.approx(-np.log(KL_EPS), rel=1e-12)


def test_classes_bad_inputs():
    with pytest.raises(ValueError, match=r"probs .*sum to 1"):
        class_report(np.array([[2.0, -1.0], [3.0, 0.5]]) + 1.0)  # logits, not probabilities
    with pytest.raises(ValueError, match=r"probs .*\(4,\)"):
        class_report(np.full(4, 0.25))
    with pytest.raises(ValueError, match=r"data_class_freq .*\(3,\).*\(2,\)"):
        class_report(np.eye(3), data_class_freq=np.ones(2))
    with pytest.raises(ValueError, match="min_count"):
        class_report(np.eye(3), min_count=0)


# ---------------------------------------------------------------- Stacked MNIST


def _digits(modes: np.ndarray) -> np.ndarray:
    return np.stack([modes // 100, modes // 10 % 10, modes % 10], axis=1)


def test_stacked_all_modes_equally():
    rep = stacked_mnist_report(_digits(np.tile(np.arange(1000), 3)))
    assert rep["modes"] == 1000 and rep["total_modes"] == 1000 and rep["samples"] == 3000
    assert rep["kl"] == pytest.approx(0.0, abs=1e-12)


def test_stacked_ten_modes_gives_log_100():
    rep = stacked_mnist_report(_digits(np.repeat(np.arange(10) * 111, 26)))
    assert rep["modes"] == 10
    assert rep["kl"] == pytest.approx(np.log(100), rel=1e-12)  # log(1000 / 10)


def test_stacked_unequal_histogram_by_hand():
    rep = stacked_mnist_report(_digits(np.array([7, 7, 7, 420])))  # p = (3/4, 1/4)
    assert rep["modes"] == 2 and rep["histogram"][7] == 3 and rep["histogram"][420] == 1
    assert rep["kl"] == pytest.approx(0.75 * np.log(750) + 0.25 * np.log(250), rel=1e-12)


def test_stack_digits_channels_and_modes():
    labels = np.arange(200) % 10  # balanced digits
    images = np.broadcast_to(labels[:, None, None, None], (200, 1, 4, 5)).astype(np.float32)
    x, modes = stack_digits(images, labels, n=20000, seed=0)
    assert x.shape == (20000, 3, 4, 5) and x.dtype == np.float32 and modes.shape == (20000,)
    # Each channel is the image of its digit (pixel value = digit here).
    np.testing.assert_array_equal(x[:, :, 2, 3].astype(np.int64), _digits(modes))
    rep = stacked_mnist_report(_digits(modes))  # 20 samples per mode on average
    assert rep["modes"] == 1000 and rep["kl"] < 0.05  # KL ~ (1000 - 1) / (2 * 20000)
    again, _ = stack_digits(images, labels, n=50, seed=0)
    np.testing.assert_array_equal(again, x[:50])
    assert not np.array_equal(stack_digits(images, labels, n=50, seed=1)[1], modes[:50])


def test_stacked_bad_inputs():
    with pytest.raises(ValueError, match=r"images .*\(10, 28, 28\)"):
        stack_digits(np.zeros((10, 28, 28)), np.zeros(10, dtype=int), n=5, seed=0)
    with pytest.raises(ValueError, match="labels .*0..9"):
        stack_digits(np.zeros((2, 1, 3, 3)), np.array([3, 10]), n=5, seed=0)
    with pytest.raises(ValueError, match=r"labels .*\(2,\).*\(3,\)"):
        stack_digits(np.zeros((2, 1, 3, 3)), np.array([3, 1, 2]), n=5, seed=0)
    with pytest.raises(ValueError, match=r"channel_predictions .*\(4, 2\)"):
        stacked_mnist_report(np.zeros((4, 2), dtype=int))
    with pytest.raises(ValueError, match="channel_predictions .*integer"):
        stacked_mnist_report(np.zeros((4, 3)))


def test_stacked_modes_count_only_confident_samples():
    pred = _digits(np.array([7, 7, 420, 999]))
    rep = stacked_mnist_report(pred, confident=np.array([True, True, True, False]))
    assert rep["modes"] == 2 and rep["samples"] == 4 and rep["confident"] == 0.75
    assert rep["kl"] == pytest.approx(np.log(1000) + (2 / 3) * np.log(2 / 3)
                                      + (1 / 3) * np.log(1 / 3))
    none = stacked_mnist_report(pred, confident=np.zeros(4, bool))
    assert none["modes"] == 0 and none["confident"] == 0 and none["kl"] == pytest.approx(
        np.log(1000))
    with pytest.raises(ValueError, match=r"confident must have shape \(4,\)"):
        stacked_mnist_report(pred, confident=np.ones(3, bool))


def test_confidence_threshold_lets_99_percent_of_real_channels_through():
    from gantrain.metrics.stacked import confidence_threshold

    conf = np.random.default_rng(0).uniform(0.5, 1.0, size=10_000)
    t = confidence_threshold(conf)
    assert (conf >= t).mean() == pytest.approx(0.99, abs=1e-3)
