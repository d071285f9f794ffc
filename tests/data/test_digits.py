"""The procedural digit dataset: shape, balance, determinism, centring, learnable labels."""

from __future__ import annotations

import numpy as np
import pytest

from gantrain.data.digits import embedded_digits


@pytest.fixture(scope="module")
def digits():
    return embedded_digits(n=1000, seed=0)


def test_shape_dtype_range_and_labels(digits):
    assert digits.x.shape == (1000, 1, 28, 28)
    assert digits.x.dtype == np.float32
    assert digits.y.dtype == np.int32
    assert digits.num_classes == 10
    assert digits.x.min() == -1.0 and digits.x.max() == 1.0
    assert np.array_equal(np.bincount(digits.y, minlength=10), np.full(10, 100))


def test_classes_balanced_when_n_not_a_multiple_of_ten():
    counts = np.bincount(embedded_digits(n=23, seed=1).y, minlength=10)
    assert counts.sum() == 23 and counts.max() - counts.min() <= 1


def test_same_seed_is_bit_identical_other_seed_differs():
    a, b = embedded_digits(n=50, seed=7), embedded_digits(n=50, seed=7)
    assert a.x.tobytes() == b.x.tobytes() and np.array_equal(a.y, b.y)
    c = embedded_digits(n=50, seed=8)
    assert not np.array_equal(a.x, c.x)


def test_digits_are_centred_like_mnist(digits):
    ink = (digits.x[:, 0] + 1) / 2
    ys, xs = np.indices(ink.shape[1:])
    mass = ink.sum(axis=(1, 2))
    cy = (ink * ys).sum(axis=(1, 2)) / mass
    cx = (ink * xs).sum(axis=(1, 2)) / mass
    assert abs(cy.mean() - 14) < 0.5 and abs(cx.mean() - 14) < 0.5
    assert cy.std() < 1.5 and cx.std() < 1.5
    rows = (ink > 0.3).any(axis=2)
    height = 28 - rows[:, ::-1].argmax(axis=1) - rows.argmax(axis=1)
    assert 17 <= np.median(height) <= 22  # MNIST digits are ~20 px tall
    assert ink[:, 0, :].max() < 0.5 and ink[:, :, 0].max() < 0.5  # top/left border stays dark
    assert 0.05 < ink.mean() < 0.25  # MNIST: ~0.13


def test_labels_match_the_drawn_digit(digits):
    """A nearest-class-mean classifier fit on one seed must work on another seed."""
    train = digits.x.reshape(len(digits), -1)
    means = np.stack([train[digits.y == k].mean(axis=0) for k in range(10)])
    test = embedded_digits(n=500, seed=1)
    flat = test.x.reshape(len(test), -1)
    predicted = ((flat[:, None, :] - means[None]) ** 2).sum(axis=-1).argmin(axis=1)
    assert (predicted == test.y).mean() > 0.6  # chance is 0.1


def test_other_sizes():
    big = embedded_digits(n=20, size=48, seed=2)
    assert big.x.shape == (20, 1, 48, 48)
    assert big.x.max() == 1.0


@pytest.mark.parametrize("kwargs", [{"n": 0}, {"size": 4}])
def test_rejects_bad_arguments(kwargs):
    with pytest.raises(ValueError):
        embedded_digits(**kwargs)
