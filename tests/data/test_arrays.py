"""Images from .npy/.npz arrays: layouts, value ranges, labels, resizing, bad files."""

from __future__ import annotations

import numpy as np
import pytest

from gantrain.data.arrays import load_array
from gantrain.data.errors import DatasetError


@pytest.fixture
def uint8_nhwc():
    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, (6, 8, 10, 3), dtype=np.uint8)
    images[0] = 0
    images[1] = 255
    return images


def test_uint8_nhwc_npz_with_labels(tmp_path, uint8_nhwc):
    path = tmp_path / "set.npz"
    np.savez(path, x=uint8_nhwc, y=np.array([0, 1, 2, 0, 1, 4], np.int64))
    ds = load_array(path, labels_key="y")
    assert ds.x.shape == (6, 3, 8, 10) and ds.x.dtype == np.float32
    assert np.all(ds.x[0] == -1.0) and np.all(ds.x[1] == 1.0)
    assert np.allclose((ds.x + 1) * 127.5, uint8_nhwc.transpose(0, 3, 1, 2), atol=1e-4)
    assert ds.y.dtype == np.int32 and ds.y.tolist() == [0, 1, 2, 0, 1, 4]
    assert ds.num_classes == 5 and ds.name == "set"


def test_nchw_is_kept(tmp_path, uint8_nhwc):
    nchw = uint8_nhwc.transpose(0, 3, 1, 2)
    np.save(tmp_path / "a.npy", nchw)
    ds = load_array(tmp_path / "a.npy")
    assert ds.x.shape == (6, 3, 8, 10) and ds.y is None
    assert np.allclose((ds.x + 1) * 127.5, nchw, atol=1e-4)


def test_grayscale_nhw_gets_a_channel(tmp_path):
    np.save(tmp_path / "g.npy", np.full((4, 5, 7), 255, np.uint8))
    ds = load_array(tmp_path / "g.npy")
    assert ds.x.shape == (4, 1, 5, 7) and np.all(ds.x == 1.0)


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ([0.0, 0.5, 1.0], [-1.0, 0.0, 1.0]),  # [0, 1] floats
        ([-1.0, 0.0, 0.5], [-1.0, 0.0, 0.5]),  # already [-1, 1]
        ([0.0, 127.5, 255.0], [-1.0, 0.0, 1.0]),  # [0, 255] floats
    ],
)
def test_float_ranges_are_detected(tmp_path, values, expected):
    images = np.array(values, np.float64).reshape(1, 1, 3).repeat(2, axis=0)
    np.save(tmp_path / "f.npy", images)  # (2, 1, 3): two 1x3 grayscale images
    ds = load_array(tmp_path / "f.npy")
    assert ds.x.dtype == np.float32
    assert np.allclose(ds.x.reshape(2, -1)[0], expected)


def test_wider_integer_types_in_byte_range(tmp_path):
    np.save(tmp_path / "i.npy", np.array([[[0, 255]]], np.int32))
    assert load_array(tmp_path / "i.npy").x.ravel().tolist() == [-1.0, 1.0]


def test_single_array_npz_and_default_keys(tmp_path, uint8_nhwc):
    np.savez(tmp_path / "one.npz", uint8_nhwc)
    assert load_array(tmp_path / "one.npz").x.shape == (6, 3, 8, 10)
    np.savez(tmp_path / "two.npz", images=uint8_nhwc, labels=np.zeros(6, np.int8))
    assert load_array(tmp_path / "two.npz").x.shape == (6, 3, 8, 10)
    np.savez(tmp_path / "pick.npz", a=uint8_nhwc, b=uint8_nhwc[:, :, :, :1])
    assert load_array(tmp_path / "pick.npz", key="b").x.shape == (6, 1, 8, 10)


def test_ambiguous_npz_needs_key(tmp_path, uint8_nhwc):
    np.savez(tmp_path / "amb.npz", a=uint8_nhwc, b=uint8_nhwc)
    with pytest.raises(DatasetError, match=r"amb\.npz: holds arrays \['a', 'b'\]; pass key="):
        load_array(tmp_path / "amb.npz")


def test_missing_key_lists_available(tmp_path, uint8_nhwc):
    np.savez(tmp_path / "k.npz", x=uint8_nhwc)
    with pytest.raises(DatasetError, match=r"k\.npz: no array 'imgs'; it holds \['x'\]"):
        load_array(tmp_path / "k.npz", key="imgs")
    with pytest.raises(DatasetError, match=r"k\.npz: no array 'y'"):
        load_array(tmp_path / "k.npz", labels_key="y")


def test_keys_on_npy_are_rejected(tmp_path, uint8_nhwc):
    np.save(tmp_path / "p.npy", uint8_nhwc)
    with pytest.raises(DatasetError, match=r"p\.npy: labels_key='y' given, but a \.npy file"):
        load_array(tmp_path / "p.npy", labels_key="y")


@pytest.mark.parametrize(
    "shape", [(10,), (4, 784), (2, 3, 4, 5, 6), (2, 8, 8, 4), (2, 5, 8, 8)]
)
def test_wrong_shape_names_file_shape_and_expectation(tmp_path, shape):
    np.save(tmp_path / "w.npy", np.zeros(shape, np.uint8))
    with pytest.raises(DatasetError) as info:
        load_array(tmp_path / "w.npy")
    message = str(info.value)
    assert "w.npy" in message and str(shape) in message
    assert "(N, C, H, W) or (N, H, W, C) with C in {1, 3}" in message


def test_bad_labels(tmp_path, uint8_nhwc):
    path = tmp_path / "l.npz"
    np.savez(path, x=uint8_nhwc, y=np.zeros(5, np.int64))
    with pytest.raises(DatasetError, match=r"l\.npz\['y'\]: labels have shape \(5,\), expected"):
        load_array(path, labels_key="y")
    np.savez(path, x=uint8_nhwc, y=np.zeros(6, np.float32))
    with pytest.raises(DatasetError, match=r"labels are float32, expected an integer"):
        load_array(path, labels_key="y")
    np.savez(path, x=uint8_nhwc, y=-np.ones(6, np.int64))
    with pytest.raises(DatasetError, match=r"negative label -1"):
        load_array(path, labels_key="y")


@pytest.mark.parametrize(
    ("images", "match"),
    [
        (np.full((2, 4, 4), 300, np.int32), r"values span \[300, 300\]"),
        (np.full((2, 4, 4), -3.0), r"values span \[-3\.0, -3\.0\]"),
        (np.full((2, 4, 4), np.nan), r"contains NaN or infinite"),
        (np.zeros((2, 4, 4), bool), r"dtype bool"),
        (np.zeros((0, 4, 4), np.uint8), r"holds no images"),
    ],
)
def test_bad_values_are_named(tmp_path, images, match):
    np.save(tmp_path / "v.npy", images)
    with pytest.raises(DatasetError, match=r"v\.npy: " + match):
        load_array(tmp_path / "v.npy")


def test_resize_to_size(tmp_path):
    images = np.zeros((3, 1, 28, 28), np.float32)
    images[:, :, :, 14:] = 1.0  # [0, 1] floats: right half white
    np.save(tmp_path / "r.npy", images)
    ds = load_array(tmp_path / "r.npy", size=32)
    assert ds.x.shape == (3, 1, 32, 32)
    assert -1.0 <= ds.x.min() and ds.x.max() <= 1.0
    assert np.allclose(ds.x[:, :, :, :12], -1.0) and np.allclose(ds.x[:, :, :, 20:], 1.0)
    wide = load_array(tmp_path / "r.npy", size=(8, 16))
    assert wide.x.shape == (3, 1, 8, 16)


def test_corrupt_and_missing_files(tmp_path, uint8_nhwc):
    (tmp_path / "junk.npy").write_bytes(b"\x93NUMPY garbage")
    with pytest.raises(DatasetError, match=r"junk\.npy: not a readable \.npy file"):
        load_array(tmp_path / "junk.npy")
    np.savez_compressed(tmp_path / "cut.npz", x=uint8_nhwc)
    data = (tmp_path / "cut.npz").read_bytes()
    (tmp_path / "cut.npz").write_bytes(data[: len(data) // 2])
    with pytest.raises(DatasetError, match=r"cut\.npz: "):
        load_array(tmp_path / "cut.npz")
    with pytest.raises(DatasetError, match=r"absent\.npz: no such file"):
        load_array(tmp_path / "absent.npz")
    with pytest.raises(DatasetError, match=r"data\.csv: unsupported suffix '\.csv'"):
        load_array(tmp_path / "data.csv")


def test_pickled_object_arrays_are_refused(tmp_path):
    np.save(tmp_path / "obj.npy", np.array([{"a": 1}], dtype=object), allow_pickle=True)
    with pytest.raises(DatasetError, match=r"obj\.npy: not a readable \.npy file"):
        load_array(tmp_path / "obj.npy")
