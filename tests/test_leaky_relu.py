"""gantrain's LeakyReLU: nn.LeakyReLU's values, PyTorch's gradient at 0, and a faster backward."""

from __future__ import annotations

import mindspore as ms
import numpy as np
from mindspore import Tensor, nn

from gantrain.models.layers import LeakyReLU, make_activation


def _grad(cell, x):
    def total(t):
        return cell(t).sum()

    return ms.jit(ms.grad(total))(x).asnumpy()


def test_values_equal_nn_leaky_relu_bit_for_bit():
    x = np.random.default_rng(0).standard_normal((4, 8, 5, 5)).astype(np.float32) * 3
    x[0, 0, 0, :3] = [0.0, -0.0, 1e-30]
    ours, theirs = LeakyReLU(0.2)(Tensor(x)).asnumpy(), nn.LeakyReLU(0.2)(Tensor(x)).asnumpy()
    assert np.array_equal(ours, theirs)


def test_gradient_is_one_above_zero_and_slope_at_and_below():
    x = Tensor(np.array([-2.0, -1e-20, 0.0, 1e-20, 3.0], np.float32))
    np.testing.assert_array_equal(_grad(LeakyReLU(0.2), x),
                                  np.array([0.2, 0.2, 0.2, 1.0, 1.0], np.float32))
    # away from the tie it is nn.LeakyReLU's gradient
    y = Tensor(np.array([-2.0, 3.0, -0.5], np.float32))
    np.testing.assert_array_equal(_grad(LeakyReLU(0.2), y), _grad(nn.LeakyReLU(0.2), y))


def test_make_activation_builds_it():
    assert isinstance(make_activation("leaky_relu"), LeakyReLU)
