"""gantrain's FID Inception against pytorch-fid itself: same weights -> same features, logits and
FID. Optional: skipped unless torch, torchvision's Python sources and pytorch-fid are installed.

Nothing is downloaded. pytorch-fid's own ``fid_inception_v3()`` builds the reference graph (its
FIDInceptionA/C/E_1/E_2 patches over torchvision's Inception3); its weight download
(``load_state_dict_from_url``) is replaced by a state dict of random weights, which is then
converted with ``gantrain eval convert-weights`` exactly as the real file would be.

How to run (.ci/run does this after the suite; keep torch out of a shared dev venv):

    python3 -m venv venv-torch
    venv-torch/bin/pip install "torch==2.13.0+cpu" "mindspore==2.10.0" "numpy<2" pillow tqdm \
        pytest scipy
    venv-torch/bin/pip install --no-deps torchvision==0.28.0 pytorch-fid==0.3.0 clean-fid==0.1.35
    PYTHONPATH=. venv-torch/bin/python -m pytest -q tests/test_inception_reference.py

``+cpu`` matters: a plain ``torch`` requirement resolves to the registry's CUDA build (GBs).

Why ``--no-deps`` and :func:`_import_torchvision`: the registry's torchvision wheels are CUDA
builds. Next to the CPU torch wheel their compiled extension ``_C.so`` does not load, and
``import torchvision`` then fails in ``torchvision/_meta_registrations.py`` ("operator
torchvision::nms does not exist"), which registers shape functions for those C++ detection ops.
pytorch-fid uses only torchvision's pure-Python Inception classes, which need none of these ops,
so when the plain import fails the module that registers them is replaced by an empty one and
the import retried; the Inception classes come from torchvision's real, unmodified source.
"""

from __future__ import annotations

import importlib
import sys
import types

import numpy as np
import pytest


def _import_torchvision():
    try:
        return importlib.import_module("torchvision")
    except RuntimeError as e:
        if "torchvision::" not in str(e):
            raise
    for name in [m for m in sys.modules if m == "torchvision" or m.startswith("torchvision.")]:
        del sys.modules[name]
    sys.modules["torchvision._meta_registrations"] = types.ModuleType(
        "torchvision._meta_registrations")
    return importlib.import_module("torchvision")


torch = pytest.importorskip("torch")
try:
    _import_torchvision()
except ImportError:
    pytest.skip("torchvision is not installed (pip install --no-deps torchvision)",
                allow_module_level=True)
pfid = pytest.importorskip("pytorch_fid.inception")
fid_score = pytest.importorskip("pytorch_fid.fid_score")

from gantrain.cli.main import main  # noqa: E402
from gantrain.metrics.frechet import frechet_distance, frechet_from_stats  # noqa: E402
from gantrain.metrics.inception.extractor import InceptionExtractor  # noqa: E402
from gantrain.metrics.inception.preprocess import pil_bicubic  # noqa: E402
from gantrain.metrics.inception.weights import load_inception, sha256_file  # noqa: E402

pytestmark = pytest.mark.slow
RTOL = 1e-4  # |ours - reference| <= RTOL * max|reference|, per output


def _random_state_dict(seed: int = 0) -> dict:
    """torchvision Inception3 (1008 logits) with random weights of a sane scale: He-normal
    convolutions and BatchNorm statistics/affines near identity, so activations stay O(1)
    through all 94 layers and a relative comparison is meaningful."""
    torch.manual_seed(seed)
    net = pfid._inception_v3(num_classes=1008, aux_logits=False, weights=None)
    with torch.no_grad():
        for m in net.modules():
            if isinstance(m, torch.nn.Conv2d):
                torch.nn.init.kaiming_normal_(m.weight, nonlinearity="relu")
            elif isinstance(m, torch.nn.BatchNorm2d):
                m.running_mean.uniform_(-0.1, 0.1)
                m.running_var.uniform_(0.5, 1.5)
                m.weight.uniform_(0.8, 1.2)
                m.bias.uniform_(-0.1, 0.1)
            elif isinstance(m, torch.nn.Linear):
                torch.nn.init.normal_(m.weight, std=0.02)
                torch.nn.init.normal_(m.bias, std=0.1)
    return net.state_dict()


@pytest.fixture(scope="module")
def nets(tmp_path_factory):
    """(reference pytorch-fid InceptionV3, its fc, gantrain extractor) with the same weights."""
    state = _random_state_dict()
    pth = tmp_path_factory.mktemp("w") / "random_fid_inception.pth"
    torch.save(state, pth)
    ckpt = pth.with_suffix(".ckpt")
    assert main(["eval", "convert-weights", str(pth), str(ckpt)]) == 0
    original = pfid.load_state_dict_from_url
    pfid.load_state_dict_from_url = lambda *a, **k: state
    try:
        ref = pfid.InceptionV3([pfid.InceptionV3.BLOCK_INDEX_BY_DIM[2048]]).eval()
    finally:
        pfid.load_state_dict_from_url = original
    net, info = load_inception(ckpt)
    assert info.source_sha256 == sha256_file(pth) and not info.reference
    return ref, (state["fc.weight"], state["fc.bias"]), InceptionExtractor(net, batch=4,
                                                                            progress=False)


def _reference(ref, fc, images_uint8: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """pytorch-fid's pipeline: uint8 -> [0, 1] (its ToTensor), grey -> RGB, InceptionV3."""
    x = torch.from_numpy(images_uint8.astype(np.float32) / 255.0)
    if x.shape[1] == 1:
        x = x.repeat(1, 3, 1, 1)
    with torch.no_grad():
        pool = ref(x)[0][:, :, 0, 0]
        logits = pool @ fc[0].T + fc[1]
    return pool.double().numpy(), logits.double().numpy()


def _assert_close(ours: np.ndarray, reference: np.ndarray, what: str) -> None:
    err = np.abs(ours - reference).max() / np.abs(reference).max()
    print(f"{what}: max |diff| / max |ref| = {err:.2e}")
    assert err <= RTOL, f"{what}: relative difference {err:.2e} > {RTOL}"


def _images(rng, n: int, c: int, h: int, w: int) -> np.ndarray:
    return rng.integers(0, 256, (n, c, h, w), dtype=np.uint8)


def test_features_and_logits_match_pytorch_fid_at_299(nets):
    ref, fc, ours = nets
    x = _images(np.random.default_rng(0), 4, 3, 299, 299)
    pool, logits = ours(x)
    ref_pool, ref_logits = _reference(ref, fc, x)
    assert pool.shape == (4, 2048) and logits.shape == (4, 1008)
    assert ref_pool.std() > 1e-2  # the random network does not collapse to a constant
    _assert_close(pool, ref_pool, "pool3 299x299")
    _assert_close(logits, ref_logits, "logits 299x299")


@pytest.mark.parametrize("shape", [(3, 32, 32), (1, 28, 28), (3, 320, 360)])
def test_resize_path_matches_pytorch_fid(nets, shape):
    """Upsampling (CIFAR, MNIST grey), and non-square downsampling (no antialias, as torch)."""
    ref, fc, ours = nets
    x = _images(np.random.default_rng(1), 4, *shape)
    pool, logits = ours(x)
    ref_pool, ref_logits = _reference(ref, fc, x)
    _assert_close(pool, ref_pool, f"pool3 {shape}")
    _assert_close(logits, ref_logits, f"logits {shape}")


def test_float_images_are_quantised_like_saved_pngs(nets):
    """[-1, 1] floats give the features of their uint8 rounding (what a saved PNG holds)."""
    _, _, ours = nets
    u = _images(np.random.default_rng(2), 4, 3, 32, 32)
    x = (u.astype(np.float32) / 127.5 - 1.0) + np.float32(0.001)  # off-grid, rounds back
    np.testing.assert_array_equal(ours(x)[0], ours(u)[0])


def test_fid_matches_pytorch_fid(nets):
    """FID on network features, and on random sets where N > D keeps sqrtm well-posed."""
    ref, fc, ours = nets
    rng = np.random.default_rng(3)
    a, b = _images(rng, 8, 3, 32, 32), _images(rng, 8, 3, 32, 32) // 2
    fa, fb = ours(a)[0], ours(b)[0]
    ra, rb = _reference(ref, fc, a)[0], _reference(ref, fc, b)[0]
    expected = fid_score.calculate_frechet_distance(
        ra.mean(0), np.cov(ra, rowvar=False), rb.mean(0), np.cov(rb, rowvar=False))
    ours_fid = frechet_distance(fa, fb)
    print(f"FID of 8 vs 8 images: ours {ours_fid:.6f}, pytorch-fid {expected:.6f}")
    assert ours_fid == pytest.approx(expected, rel=1e-3)

    x, y = rng.normal(size=(400, 64)), rng.normal(0.3, 1.5, size=(300, 64))
    stats = [(v.mean(0), np.cov(v, rowvar=False)) for v in (x, y)]
    expected = fid_score.calculate_frechet_distance(*stats[0], *stats[1])
    assert frechet_from_stats(*stats[0], *stats[1]) == pytest.approx(expected, rel=1e-9)


def test_pil_bicubic_is_clean_fids_resize():
    """``--resize pil-bicubic`` is clean-fid's "clean" resizer (optional: clean-fid, no deps)."""
    resize = pytest.importorskip("cleanfid.resize").build_resizer("clean")
    x = _images(np.random.default_rng(4), 2, 3, 32, 40)
    expected = np.stack([resize(img.transpose(1, 2, 0)).transpose(2, 0, 1) for img in x])
    np.testing.assert_array_equal(pil_bicubic(x), expected)
