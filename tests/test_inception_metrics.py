"""Inception metrics without torch: IS splits, preprocessing, weight conversion checks, the
real-statistics cache and its refusals, and ``gantrain eval --features inception`` end to end
with random weights. (Equality with pytorch-fid itself: tests/test_inception_reference.py.)"""

from __future__ import annotations

import json
import warnings

import mindspore as ms
import numpy as np
import pytest

from gantrain.cli.main import main
from gantrain.config import ConfigError
from gantrain.metrics.classes import inception_score as whole_set_is
from gantrain.metrics.inception.preprocess import (
    bilinear_matrix,
    describe,
    pil_bicubic,
    quantize,
)
from gantrain.metrics.inception.score import inception_score
from gantrain.metrics.inception.stats import load_stats, make_stats, save_stats
from gantrain.metrics.inception.weights import (
    REFERENCE_SHA256,
    WeightsInfo,
    check_reference,
    convert_state_dict,
    load_inception,
)
from gantrain.models.inception import FIDInceptionV3

TORCH_BN = {"gamma": "weight", "beta": "bias", "moving_mean": "running_mean",
            "moving_variance": "running_var"}


def _softmax(z):
    e = np.exp(z - z.max(1, keepdims=True))
    return e / e.sum(1, keepdims=True)


def test_inception_score_uses_ten_splits_like_the_original():
    rng = np.random.default_rng(0)
    logits = rng.normal(0, 3, (105, 12))
    mean, std = inception_score(logits)
    parts = [whole_set_is(_softmax(logits[i * 105 // 10:(i + 1) * 105 // 10]))
             for i in range(10)]
    assert mean == pytest.approx(np.mean(parts), rel=1e-12)
    assert std == pytest.approx(np.std(parts), rel=1e-9)
    assert inception_score(np.zeros((20, 5))) == (pytest.approx(1.0), pytest.approx(0.0))
    confident = 60.0 * np.eye(10)[np.arange(100) % 10]  # every split holds all 10 classes
    assert inception_score(confident)[0] == pytest.approx(10.0, rel=1e-6)
    with pytest.raises(ValueError, match="splits"):
        inception_score(logits[:5])


def test_quantize_rounds_like_saving_a_png_and_makes_grey_rgb():
    x = np.array([-1.0, -0.999, 0.0, 0.5, 1.0, 1.2], np.float32).reshape(1, 1, 1, 6)
    q = quantize(x)
    expected = np.floor(np.clip((x + 1) / 2 * 255 + 0.5, 0, 255))  # torchvision save_image
    assert q.dtype == np.uint8 and q.shape == (1, 3, 1, 6)
    np.testing.assert_array_equal(q[:, 0], expected[:, 0])
    np.testing.assert_array_equal(q[:, 0], q[:, 2])
    with pytest.raises(ConfigError, match="C = 1 or 3"):
        quantize(np.zeros((2, 2, 8, 8), np.float32))


def test_bilinear_matrix_is_torch_half_pixel_interpolation():
    np.testing.assert_array_equal(bilinear_matrix(299), np.eye(299, dtype=np.float32))
    r = bilinear_matrix(2, 4)  # sources -0.25 (clamped), 0.25, 0.75, 1.25 (clamped at edge)
    np.testing.assert_allclose(r, [[1, 0], [0.75, 0.25], [0.25, 0.75], [0, 1]])
    np.testing.assert_allclose(bilinear_matrix(32).sum(1), 1.0, rtol=1e-6)


def test_pil_bicubic_is_an_antialiased_resize_to_299():
    flat = np.full((1, 3, 32, 32), 77, np.uint8)
    np.testing.assert_allclose(pil_bicubic(flat), 77.0, atol=1e-3)  # constants stay constant
    ramp = np.tile(np.linspace(0, 255, 400).astype(np.uint8), (1, 3, 400, 1))
    out = pil_bicubic(ramp)
    assert out.shape == (1, 3, 299, 299) and out.min() >= 0 and out.max() <= 255
    # antialiased: a 1-pixel checkerboard downsampled averages to grey instead of aliasing
    checker = ((np.indices((400, 400)).sum(0) % 2) * 255).astype(np.uint8)
    grey = pil_bicubic(np.broadcast_to(checker, (1, 3, 400, 400)))
    assert abs(grey[0, 0, 50:250, 50:250].mean() - 127.5) < 3 and grey[0, 0].std() < 30


def _torch_named(net: FIDInceptionV3) -> dict[str, np.ndarray]:
    out = {}
    for p in net.get_parameters():
        stem, _, leaf = p.name.rpartition(".")
        out[f"{stem}.{TORCH_BN[leaf]}" if stem.endswith(".bn") else p.name] = p.asnumpy()
    return out


@pytest.mark.slow
def test_convert_state_dict_renames_and_names_what_is_wrong():
    state = _torch_named(FIDInceptionV3())
    assert len(state) == 94 + 94 * 4 + 2 and state["fc.weight"].shape == (1008, 2048)
    converted = convert_state_dict({**state, "Mixed_5b.branch1x1.bn.num_batches_tracked": 0})
    np.testing.assert_array_equal(converted["Mixed_5b.branch1x1.bn.moving_variance"],
                                  state["Mixed_5b.branch1x1.bn.running_var"])
    wrong = {**state, "fc.weight": np.zeros((1000, 2048)), "fc.bias": np.zeros(1000)}
    with pytest.raises(ConfigError, match="torchvision's ImageNet Inception"):
        convert_state_dict(wrong)
    partial = {k: v for k, v in state.items() if not k.startswith("Mixed_7c")}
    with pytest.raises(ConfigError, match="missing Mixed_7c"):
        convert_state_dict({**partial, "AuxLogits.fc.weight": np.zeros(3)})


def test_non_reference_weights_warn_loudly_and_reference_ones_do_not():
    with pytest.warns(UserWarning, match="NOT pytorch-fid's"):
        check_reference(WeightsInfo("w.ckpt", "ab", "ab", False))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_reference(WeightsInfo("w.ckpt", "cd", REFERENCE_SHA256, True))


def test_missing_or_foreign_weight_files_are_clear_errors(tmp_path):
    with pytest.raises(ConfigError, match="does not exist"):
        load_inception(tmp_path / "nope.ckpt")
    foreign = tmp_path / "other.ckpt"
    ms.save_checkpoint([{"name": "w", "data": ms.Tensor(np.ones(3, np.float32))}], str(foreign))
    with pytest.raises(ConfigError, match="not FID Inception weights: missing"):
        load_inception(foreign)


def test_stats_round_trip_and_refuse_other_weights_or_preprocessing(tmp_path):
    feats = np.random.default_rng(0).normal(size=(40, 2048))
    stats = make_stats(feats, "aa", "digits", describe("bilinear"), keep=25)
    path = save_stats(stats, tmp_path / "s.npz")
    back = load_stats(path, "aa", describe("bilinear"))
    assert back.count == 40 and back.features.shape == (25, 2048) and back.dataset == "digits"
    np.testing.assert_allclose(back.sigma, np.cov(feats, rowvar=False))
    with pytest.raises(ConfigError, match="Inception weights aa, these features come from bb"):
        load_stats(path, "bb", describe("bilinear"))
    with pytest.raises(ConfigError, match="preprocessing"):
        load_stats(path, "aa", describe("pil-bicubic"))
    with pytest.raises(ConfigError, match="must end in .npz"):
        save_stats(stats, tmp_path / "s.txt")
    (tmp_path / "bad.npz").write_bytes(b"not a zip")
    with pytest.raises(ConfigError, match="not a gantrain statistics file"):
        load_stats(tmp_path / "bad.npz", "aa", describe("bilinear"))


TINY = [
    "--set", "data.args={n = 256, size = 28}", "--set", "data.batch_size=16",
    "--set", "generator.args.width=8", "--set", "discriminator.args.width=8",
    "--set", "train.steps=2", "--set", "train.progress=false", "--set", "train.grid=4",
]


@pytest.mark.slow
def test_eval_inception_end_to_end_with_cached_stats(in_tmp, capsys):
    """Random (non-reference) weights: the pipeline, eval.json and the refusals, not values."""
    net = FIDInceptionV3()
    ms.save_checkpoint(net, str(in_tmp / "w.ckpt"))
    assert main(["train", "dcgan_digits", "--name", "d", *TINY]) == 0
    with pytest.warns(UserWarning, match="NOT pytorch-fid's"):
        assert main(["eval", "stats", "digits", "--weights", "w.ckpt", "--out", "s.npz",
                     "--n", "12", "--keep", "12", "--batch", "12"]) == 0
    with pytest.warns(UserWarning, match="NOT pytorch-fid's"):
        assert main(["eval", "runs/d", "--features", "inception", "--weights", "w.ckpt",
                     "--n", "12", "--ref", "s.npz", "--batch", "12"]) == 0
    out = capsys.readouterr().out
    assert "fid" in out and "WARNING: not the reference" in out
    report = json.loads((in_tmp / "runs" / "d" / "eval.json").read_text())
    assert report["features"] == "inception" and report["real"]["count"] == 12
    assert report["weights"]["reference"] is False and len(report["weights"]["sha256"]) == 64
    assert report["preprocessing"]["resize"] == "bilinear"
    gen = report["generated"]
    assert set(gen) >= {"fid", "is", "is_std", "kid", "kid_std", "precision", "recall",
                        "density", "coverage"}
    assert gen["fid"] > 0 and 1.0 <= gen["is"] <= 1008
    with pytest.warns(UserWarning):
        code = main(["eval", "runs/d", "--features", "inception", "--weights", "w.ckpt",
                     "--n", "12", "--ref", "s.npz", "--resize", "pil-bicubic"])
    assert code == 2 and "recompute them or pass the matching --resize" in capsys.readouterr().err
    assert main(["eval", "runs/d", "--features", "inception"]) == 2
    assert "needs --weights" in capsys.readouterr().err
