"""DiffAugment: host-side draws, numpy references for each transform, identity parameters,
and differentiability under @ms.jit."""

import os

os.environ.setdefault("ONEDNN_MAX_CPU_ISA", "AVX2")  # before mindspore: fast oneDNN convs

import mindspore as ms  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from mindspore import Tensor, ops  # noqa: E402

from gantrain.blocks.augment import (  # noqa: E402
    POLICIES,
    DiffAugment,
    diff_augment,
    draw_augment_params,
    identity_augment_params,
    num_params,
    parse_policy,
)

ms.set_device("CPU")
ALL = "color,translation,cutout"


@pytest.fixture(autouse=True)
def _in_tmp_dir(tmp_path, monkeypatch):
    # MindSpore writes compile-debug files into the working directory on failure.
    monkeypatch.chdir(tmp_path)


def _images(shape=(4, 3, 8, 8), seed=0) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-1, 1, shape).astype(np.float32)


def _tensors(params):
    return tuple(Tensor(p) for p in params)


# --- numpy references, transcribed from the DiffAugment reference implementation --------------

def _ref_color(x, brightness, saturation, contrast):
    x = x + brightness[:, None, None, None]
    m = x.mean(axis=1, keepdims=True)
    x = (x - m) * saturation[:, None, None, None] + m
    m = x.mean(axis=(1, 2, 3), keepdims=True)
    return (x - m) * contrast[:, None, None, None] + m


def _ref_translation(x, dy, dx):
    # Reference: pad by 1 with zeros, index with clamp(i + shift + 1, 0, n + 1).
    b, _, h, w = x.shape
    pad = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    gi = np.clip(np.arange(h)[None, :] + dy[:, None] + 1, 0, h + 1)  # (B, H)
    gj = np.clip(np.arange(w)[None, :] + dx[:, None] + 1, 0, w + 1)  # (B, W)
    out = np.empty_like(x)
    for k in range(b):
        out[k] = pad[k][:, gi[k]][:, :, gj[k]]
    return out


def _ref_cutout(x, top, left):
    # Reference: centre = top + c // 2; mask[clamp(centre - c // 2 + arange(c))] = 0.
    b, _, h, w = x.shape
    ch, cw = int(h * 0.5 + 0.5), int(w * 0.5 + 0.5)
    mask = np.ones((b, h, w), np.float32)
    for k in range(b):
        rows = np.clip(top[k] + np.arange(ch), 0, h - 1)
        cols = np.clip(left[k] + np.arange(cw), 0, w - 1)
        mask[k][np.ix_(rows, cols)] = 0
    return x * mask[:, None]


# --- policy parsing and host draws --------------------------------------------------------------

def test_parse_policy_accepts_strings_and_sequences():
    assert parse_policy(ALL) == POLICIES
    assert parse_policy(" translation , color ") == ("translation", "color")
    assert parse_policy(["cutout"]) == ("cutout",)
    assert parse_policy("") == ()
    assert num_params(ALL) == 7


def test_unknown_policy_raises_naming_it_and_the_allowed_ones():
    with pytest.raises(ValueError, match=r"'flip'.*color, translation, cutout"):
        parse_policy("color,flip")
    with pytest.raises(ValueError, match="'flip'"):
        DiffAugment("flip")
    with pytest.raises(ValueError, match="'flip'"):
        draw_augment_params(np.random.default_rng(0), 2, (8, 8), "flip")


def test_draws_have_documented_shapes_ranges_and_are_reproducible():
    params = draw_augment_params(np.random.default_rng(5), 64, (32, 32), ALL)
    again = draw_augment_params(np.random.default_rng(5), 64, (32, 32), ALL)
    for a, b in zip(params, again):
        np.testing.assert_array_equal(a, b)
    assert [p.shape for p in params] == [(64,)] * 7
    assert [p.dtype for p in params] == [np.float32] * 3 + [np.int32] * 4
    brightness, saturation, contrast, dy, dx, top, left = params
    assert -0.5 <= brightness.min() and brightness.max() < 0.5
    assert 0 <= saturation.min() and saturation.max() < 2
    assert 0.5 <= contrast.min() and contrast.max() < 1.5
    assert -4 <= min(dy.min(), dx.min()) and max(dy.max(), dx.max()) <= 4  # 32 / 8
    assert -8 <= min(top.min(), left.min()) and max(top.max(), left.max()) <= 24  # box of 16


# --- device transforms against the references ----------------------------------------------------

@pytest.mark.parametrize("policy, reference", [
    ("color", _ref_color),
    ("translation", _ref_translation),
    ("cutout", _ref_cutout),
])
def test_each_transform_matches_numpy_reference(policy, reference):
    x = _images((6, 3, 8, 6))
    params = draw_augment_params(np.random.default_rng(1), 6, (8, 6), policy)
    got = diff_augment(Tensor(x), _tensors(params), policy).asnumpy()
    np.testing.assert_allclose(got, reference(x, *params), rtol=1e-5, atol=1e-6)


def test_translation_and_cutout_by_hand_on_a_small_example():
    x = np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4) + 1
    dy, dx = np.array([1], np.int32), np.array([-1], np.int32)
    shifted = diff_augment(Tensor(x), _tensors((dy, dx)), "translation").asnumpy()[0, 0]
    # out[i, j] = x[i + 1, j - 1], zero where that falls outside.
    np.testing.assert_array_equal(shifted, [[0, 5, 6, 7], [0, 9, 10, 11], [0, 13, 14, 15],
                                            [0, 0, 0, 0]])
    top, left = np.array([-1], np.int32), np.array([2], np.int32)  # 2x2 box, half outside
    cut = diff_augment(Tensor(x), _tensors((top, left)), "cutout").asnumpy()[0, 0]
    np.testing.assert_array_equal(cut, [[1, 2, 0, 0], [5, 6, 7, 8], [9, 10, 11, 12],
                                        [13, 14, 15, 16]])


@pytest.mark.slow
def test_identity_params_give_identity_under_jit():
    x = _images((4, 3, 8, 8))
    aug = DiffAugment(ALL)
    params = _tensors(identity_augment_params(4, (8, 8), ALL))
    out = ms.jit(aug)(Tensor(x), *params)
    np.testing.assert_allclose(out.asnumpy(), x, rtol=1e-6, atol=1e-6)


def test_gradients_flow_to_images_under_jit():
    x = Tensor(_images((4, 3, 8, 8), seed=2))
    aug = DiffAugment(ALL)
    params = _tensors(draw_augment_params(np.random.default_rng(3), 4, (8, 8), ALL))

    def loss_fn(x, *p):
        return ops.reduce_sum(aug(x, *p) ** 2)

    loss, grad = ms.jit(ms.value_and_grad(loss_fn, grad_position=0))(x, *params)
    g = grad.asnumpy()
    assert g.shape == (4, 3, 8, 8)
    assert np.all(np.isfinite(g)) and np.abs(g).sum() > 0
    np.testing.assert_allclose(float(loss), (diff_augment(x, params, ALL).asnumpy() ** 2).sum(),
                               rtol=1e-5)


def test_geometric_gradient_is_two_x_on_surviving_pixels_and_zero_elsewhere():
    # For translation + cutout, d/dx sum(aug(x)^2) = 2x where the pixel survives, 0 elsewhere.
    policy = "translation,cutout"
    x = _images((3, 2, 8, 8), seed=5)
    dy, dx, top, left = draw_augment_params(np.random.default_rng(6), 3, (8, 8), policy)
    ids = np.arange(1, x.size + 1, dtype=np.float32).reshape(x.shape)  # unique pixel ids
    survivors = _ref_cutout(_ref_translation(ids, dy, dx), top, left)
    kept = np.isin(ids, survivors[survivors > 0])
    params = _tensors((dy, dx, top, left))

    def loss_fn(x, *p):
        return ops.reduce_sum(diff_augment(x, p, policy) ** 2)

    _, grad = ms.jit(ms.value_and_grad(loss_fn, grad_position=0))(Tensor(x), *params)
    np.testing.assert_allclose(grad.asnumpy(), np.where(kept, 2 * x, 0), rtol=1e-5, atol=1e-6)
    assert 0 < kept.mean() < 1


def test_function_form_works_under_jit_with_mutable_tuple():
    x = Tensor(_images((2, 1, 8, 8), seed=4))
    params = _tensors(draw_augment_params(np.random.default_rng(4), 2, (8, 8), ALL))

    @ms.jit
    def run(x, params):
        return diff_augment(x, params, ALL)

    out = run(x, ms.mutable(params)).asnumpy()
    np.testing.assert_allclose(out, diff_augment(x, params, ALL).asnumpy(), rtol=1e-5, atol=1e-6)
