"""IDX parsing and the MNIST / Fashion-MNIST readers, on small files written per test."""

from __future__ import annotations

import gzip
import struct
from pathlib import Path

import numpy as np
import pytest

from gantrain.data.errors import DatasetError
from gantrain.data.idx import fashion_mnist, mnist, read_idx

CODES = {np.uint8: 0x08, np.int8: 0x09, np.int16: 0x0B, np.int32: 0x0C,
         np.float32: 0x0D, np.float64: 0x0E}


def idx_bytes(array: np.ndarray) -> bytes:
    """Serialise ``array`` in the IDX format (big-endian header and data)."""
    header = bytes([0, 0, CODES[array.dtype.type], array.ndim])
    header += struct.pack(f">{array.ndim}I", *array.shape)
    return header + array.astype(array.dtype.newbyteorder(">")).tobytes()


def write_idx(path: Path, array: np.ndarray, gz: bool | None = None) -> Path:
    """Write an IDX file; gzip it when the name ends in .gz (or ``gz`` says so)."""
    data = idx_bytes(array)
    if gz if gz is not None else path.suffix == ".gz":
        data = gzip.compress(data)
    path.write_bytes(data)
    return path


def write_mnist(root: Path, split: str = "train", n: int = 12, gz: bool = True, seed: int = 0):
    """A tiny MNIST-layout split; returns the (images, labels) written."""
    rng = np.random.default_rng(seed)
    images = rng.integers(0, 256, (n, 28, 28), dtype=np.uint8)
    images[0] = 0
    images[1] = 255
    labels = (np.arange(n) % 10).astype(np.uint8)
    prefix = "train" if split == "train" else "t10k"
    suffix = ".gz" if gz else ""
    write_idx(root / f"{prefix}-images-idx3-ubyte{suffix}", images)
    write_idx(root / f"{prefix}-labels-idx1-ubyte{suffix}", labels)
    return images, labels


@pytest.mark.parametrize("gz", [False, True])
@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.int32, np.float32, np.float64])
def test_read_idx_round_trip(tmp_path, gz, dtype):
    array = (np.arange(24).reshape(2, 3, 4) * 3 - 5).astype(dtype)
    if dtype == np.uint8:
        array = np.arange(24, dtype=np.uint8).reshape(2, 3, 4)
    path = write_idx(tmp_path / "a.idx", array, gz=gz)
    read = read_idx(path)
    assert read.dtype == np.dtype(dtype) and read.dtype.isnative
    assert np.array_equal(read, array)


def test_read_idx_bad_magic_names_file(tmp_path):
    path = tmp_path / "bad.idx"
    path.write_bytes(b"\x01\x02\x08\x01" + b"\x00" * 8)
    with pytest.raises(DatasetError, match=r"bad\.idx: bad IDX magic number 0x01020801"):
        read_idx(path)


def test_read_idx_unknown_dtype_code(tmp_path):
    path = tmp_path / "code.idx"
    path.write_bytes(b"\x00\x00\x07\x01" + struct.pack(">I", 1) + b"\x00")
    with pytest.raises(DatasetError, match=r"code\.idx: .*dtype code"):
        read_idx(path)


def test_read_idx_truncated_data_says_sizes(tmp_path):
    path = tmp_path / "short.idx"
    path.write_bytes(idx_bytes(np.zeros((3, 4, 4), np.uint8))[:-5])
    with pytest.raises(DatasetError, match=r"short\.idx: truncated: 59 bytes.*\(3, 4, 4\).*64"):
        read_idx(path)


def test_read_idx_trailing_bytes(tmp_path):
    path = tmp_path / "long.idx"
    path.write_bytes(idx_bytes(np.zeros(4, np.uint8)) + b"junk")
    with pytest.raises(DatasetError, match=r"long\.idx: has trailing bytes"):
        read_idx(path)


def test_read_idx_truncated_header(tmp_path):
    path = tmp_path / "hdr.idx"
    path.write_bytes(b"\x00\x00\x08\x03" + b"\x00" * 5)
    with pytest.raises(DatasetError, match=r"hdr\.idx: truncated header"):
        read_idx(path)
    path.write_bytes(b"\x00\x00")
    with pytest.raises(DatasetError, match=r"hdr\.idx: only 2 bytes"):
        read_idx(path)


def test_read_idx_corrupt_gzip_names_file(tmp_path):
    path = tmp_path / "broken.gz"
    noise = np.random.default_rng(0).integers(0, 256, (50, 28, 28), dtype=np.uint8)
    path.write_bytes(gzip.compress(idx_bytes(noise))[:2000])
    with pytest.raises(DatasetError, match=r"broken\.gz: corrupt or truncated gzip"):
        read_idx(path)


def test_read_idx_missing_file(tmp_path):
    with pytest.raises(DatasetError, match=r"nope\.idx: cannot read"):
        read_idx(tmp_path / "nope.idx")


@pytest.mark.parametrize("gz", [False, True])
def test_mnist_reads_raw_or_gz(tmp_path, gz):
    images, labels = write_mnist(tmp_path, gz=gz)
    ds = mnist(tmp_path)
    assert ds.x.shape == (12, 1, 28, 28) and ds.x.dtype == np.float32
    assert ds.y.dtype == np.int32 and np.array_equal(ds.y, labels)
    assert ds.num_classes == 10 and ds.name == "mnist-train"
    assert np.all(ds.x[0] == -1.0) and np.all(ds.x[1] == 1.0)
    assert np.allclose((ds.x[:, 0] + 1) * 127.5, images, atol=1e-4)


def test_mnist_test_split_and_limit(tmp_path):
    write_mnist(tmp_path, "test", n=15)
    ds = mnist(tmp_path, split="test", limit=4)
    assert len(ds) == 4 and ds.name == "mnist-test"
    with pytest.raises(DatasetError, match="unknown split 'val'"):
        mnist(tmp_path, split="val")


def test_mnist_missing_files_lists_expected_paths_and_urls(tmp_path):
    with pytest.raises(DatasetError) as info:
        mnist(tmp_path)
    message = str(info.value)
    assert "2 of 2 files missing" in message
    for base in ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"):
        assert str(tmp_path / base) in message and str(tmp_path / f"{base}.gz") in message
    assert "https://ossci-datasets.s3.amazonaws.com/mnist/" in message


def test_mnist_only_labels_missing(tmp_path):
    write_mnist(tmp_path)
    (tmp_path / "train-labels-idx1-ubyte.gz").unlink()
    with pytest.raises(DatasetError, match="1 of 2 files missing") as info:
        mnist(tmp_path)
    assert "train-labels-idx1-ubyte" in str(info.value)
    assert "train-images-idx3-ubyte:" not in str(info.value)


def test_mnist_corrupt_images_file_is_named(tmp_path):
    write_mnist(tmp_path)
    path = tmp_path / "train-images-idx3-ubyte.gz"
    path.write_bytes(gzip.compress(gzip.decompress(path.read_bytes())[:-100]))
    with pytest.raises(DatasetError, match=r"train-images-idx3-ubyte\.gz: truncated"):
        mnist(tmp_path)


def test_mnist_count_mismatch_names_both_files(tmp_path):
    write_mnist(tmp_path, n=12)
    write_idx(tmp_path / "train-labels-idx1-ubyte.gz", np.zeros(11, np.uint8))
    with pytest.raises(DatasetError, match=r"has 12 images but .*labels-idx1-ubyte\.gz has 11"):
        mnist(tmp_path)


def test_mnist_wrong_kind_of_file(tmp_path):
    write_mnist(tmp_path)
    write_idx(tmp_path / "train-labels-idx1-ubyte.gz", np.zeros((12, 2), np.uint8))
    with pytest.raises(DatasetError, match=r"ubyte\.gz: holds uint8 of shape \(12, 2\)"):
        mnist(tmp_path)
    write_idx(tmp_path / "train-labels-idx1-ubyte.gz", np.full(12, 10, np.uint8))
    with pytest.raises(DatasetError, match="label 10 out of range"):
        mnist(tmp_path)


def test_fashion_mnist_same_layout_own_urls(tmp_path):
    (tmp_path / "fm").mkdir()
    write_mnist(tmp_path / "fm", n=10)
    ds = fashion_mnist(tmp_path / "fm")
    assert ds.x.shape == (10, 1, 28, 28) and ds.name == "fashion_mnist-train"
    with pytest.raises(DatasetError, match="fashion-mnist.s3-website"):
        fashion_mnist(tmp_path, split="test")


def test_real_mnist_sample(mnist5k):  # skipped when ../shared/data/mnist5k is absent
    train, test = mnist(mnist5k), mnist(mnist5k, split="test")
    assert train.x.shape == (4000, 1, 28, 28) and test.x.shape == (1000, 1, 28, 28)
    assert set(np.unique(train.y)) == set(range(10))
    assert train.x.min() == -1.0 and train.x.max() == 1.0
    assert 0.08 < ((train.x + 1) / 2).mean() < 0.18  # MNIST's mean ink is ~0.13
