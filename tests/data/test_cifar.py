"""CIFAR-10 from pickle and binary batches written per test (4 images per batch)."""

from __future__ import annotations

import os
import pickle
from pathlib import Path

import numpy as np
import pytest

from gantrain.data.cifar import cifar10
from gantrain.data.errors import DatasetError

PER_BATCH = 4
BATCHES = [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]


def batch_content(index: int) -> tuple[np.ndarray, np.ndarray]:
    """Deterministic (4, 3072) uint8 pixels and labels for batch ``index``.

    Pixel 0 of each image encodes (batch, image) so ordering can be checked.
    """
    rng = np.random.default_rng(index)
    data = rng.integers(0, 256, (PER_BATCH, 3072), dtype=np.uint8)
    data[:, 0] = index * 10 + np.arange(PER_BATCH)
    labels = (np.arange(PER_BATCH) + index) % 10
    return data, labels


def write_python_batches(folder: Path, names=BATCHES) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for index, name in enumerate(BATCHES):
        if name in names:
            data, labels = batch_content(index)
            batch = {b"batch_label": name.encode(), b"labels": labels.tolist(), b"data": data}
            (folder / name).write_bytes(pickle.dumps(batch, protocol=2))


def write_binary_batches(folder: Path, names=BATCHES) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for index, name in enumerate(BATCHES):
        if name in names:
            data, labels = batch_content(index)
            records = np.concatenate([labels[:, None].astype(np.uint8), data], axis=1)
            (folder / f"{name}.bin").write_bytes(records.tobytes())


def test_python_layout_train_concatenates_batches_in_order(tmp_path):
    write_python_batches(tmp_path / "cifar-10-batches-py")
    ds = cifar10(tmp_path)
    assert ds.x.shape == (20, 3, 32, 32) and ds.x.dtype == np.float32
    assert ds.num_classes == 10 and ds.y.dtype == np.int32 and ds.name == "cifar10-train"
    first_pixel = np.rint((ds.x[:, 0, 0, 0] + 1) * 127.5).astype(int)
    assert first_pixel.tolist() == [b * 10 + i for b in range(5) for i in range(4)]
    assert ds.y.tolist() == [(i + b) % 10 for b in range(5) for i in range(4)]
    assert -1.0 <= ds.x.min() and ds.x.max() <= 1.0


def test_channel_planes_map_to_nchw(tmp_path):
    write_python_batches(tmp_path / "cifar-10-batches-py")
    ds = cifar10(tmp_path, split="test")
    data, _ = batch_content(5)
    pixels = np.rint((ds.x + 1) * 127.5).astype(np.uint8)
    # Row-major 3072 bytes: 1024 red, then 1024 green, then 1024 blue, each 32x32 row-major.
    assert pixels[2, 1, 3, 5] == data[2, 1024 + 3 * 32 + 5]
    assert pixels[3, 2, 31, 31] == data[3, 3071]
    assert ds.name == "cifar10-test" and len(ds) == PER_BATCH


def test_binary_layout_matches_python_layout(tmp_path):
    write_python_batches(tmp_path / "py" / "cifar-10-batches-py")
    write_binary_batches(tmp_path / "bin" / "cifar-10-batches-bin")
    for split in ("train", "test"):
        a, b = cifar10(tmp_path / "py", split), cifar10(tmp_path / "bin", split)
        assert np.array_equal(a.x, b.x) and np.array_equal(a.y, b.y)


def test_root_may_be_the_batch_folder_itself(tmp_path):
    write_binary_batches(tmp_path / "cifar-10-batches-bin")
    write_python_batches(tmp_path / "cifar-10-batches-py")
    assert len(cifar10(tmp_path / "cifar-10-batches-bin")) == 20
    assert len(cifar10(tmp_path / "cifar-10-batches-py", "test")) == 4


def test_limit_stops_early(tmp_path):
    write_python_batches(tmp_path / "cifar-10-batches-py")
    ds = cifar10(tmp_path, limit=6)
    assert len(ds) == 6 and ds.y.tolist() == [0, 1, 2, 3, 1, 2]


def test_no_cifar_folder_explains_layouts(tmp_path):
    with pytest.raises(DatasetError) as info:
        cifar10(tmp_path)
    message = str(info.value)
    assert str(tmp_path / "cifar-10-batches-py") in message
    assert str(tmp_path / "cifar-10-batches-bin") in message
    assert "cifar-10-python.tar.gz" in message


def test_missing_batch_is_listed(tmp_path):
    write_python_batches(tmp_path / "cifar-10-batches-py", names=BATCHES[:2] + BATCHES[3:])
    with pytest.raises(DatasetError, match=r"missing data_batch_3 in .*cifar-10-batches-py"):
        cifar10(tmp_path)
    assert len(cifar10(tmp_path, "test")) == 4  # the test split is still complete


def test_truncated_binary_batch_is_named(tmp_path):
    folder = tmp_path / "cifar-10-batches-bin"
    write_binary_batches(folder)
    path = folder / "data_batch_2.bin"
    path.write_bytes(path.read_bytes()[:-10])
    with pytest.raises(DatasetError, match=r"data_batch_2\.bin: 12282 bytes is not .*3073-byte"):
        cifar10(tmp_path)


def test_binary_label_out_of_range(tmp_path):
    folder = tmp_path / "cifar-10-batches-bin"
    write_binary_batches(folder)
    raw = bytearray((folder / "test_batch.bin").read_bytes())
    raw[3073] = 200
    (folder / "test_batch.bin").write_bytes(bytes(raw))
    with pytest.raises(DatasetError, match=r"test_batch\.bin: labels span 5\.\.200"):
        cifar10(tmp_path, "test")


def test_corrupt_pickle_is_named(tmp_path):
    folder = tmp_path / "cifar-10-batches-py"
    write_python_batches(folder)
    (folder / "data_batch_4").write_bytes(b"\x80\x02}q\x00garbage")
    with pytest.raises(DatasetError, match=r"data_batch_4: not a readable CIFAR-10 pickle"):
        cifar10(tmp_path)
    (folder / "data_batch_4").write_bytes((folder / "data_batch_5").read_bytes()[:100])
    with pytest.raises(DatasetError, match=r"data_batch_4: not a readable"):
        cifar10(tmp_path)


def test_pickle_with_wrong_shape_is_named(tmp_path):
    folder = tmp_path / "cifar-10-batches-py"
    write_python_batches(folder)
    batch = {b"labels": [1, 2], b"data": np.zeros((2, 1024), np.uint8)}
    (folder / "test_batch").write_bytes(pickle.dumps(batch))
    with pytest.raises(DatasetError, match=r"test_batch: 'data' is uint8 of shape \(2, 1024\)"):
        cifar10(tmp_path, "test")
    (folder / "test_batch").write_bytes(pickle.dumps({b"data": np.zeros((2, 3072), np.uint8)}))
    with pytest.raises(DatasetError, match=r"test_batch: batch has no 'labels' entry"):
        cifar10(tmp_path, "test")


@pytest.mark.parametrize("protocol", [2, 4, 5])
def test_pickles_from_any_protocol_load(tmp_path, protocol):
    folder = tmp_path / "cifar-10-batches-py"
    folder.mkdir()
    data, labels = batch_content(5)
    batch = {"labels": labels.tolist(), "data": data}  # str keys, as re-pickled by Python 3
    (folder / "test_batch").write_bytes(pickle.dumps(batch, protocol=protocol))
    ds = cifar10(tmp_path, "test")
    assert np.array_equal(np.rint((ds.x.reshape(4, -1) + 1) * 127.5), data)


class _Exploit:
    def __reduce__(self):
        return (os.system, ("touch pwned",))


def test_pickle_cannot_run_code(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    folder = tmp_path / "cifar-10-batches-py"
    write_python_batches(folder)
    (folder / "test_batch").write_bytes(pickle.dumps({b"data": _Exploit()}))
    with pytest.raises(DatasetError, match=r"test_batch: .*forbidden global"):
        cifar10(tmp_path, "test")
    assert not (tmp_path / "pwned").exists()
