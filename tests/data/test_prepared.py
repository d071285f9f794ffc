"""Prepared datasets: pixels identical to PIL's, cache hits and rebuilds, interrupted and
killed builds, exact loader resume over the memory map."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from gantrain.data import decode_workers, prepared
from gantrain.data.errors import DatasetError
from gantrain.data.folder import image_folder, load_image
from gantrain.data.loader import ArrayLoader
from gantrain.data.prepare import Target, find_prepared, prepare
from gantrain.data.prepared import PreparedImages, read_header
from gantrain.data.sources import FolderSource

ROOT = Path(__file__).resolve().parents[2]


def make_folder(root: Path, n: int = 300, classes: tuple[str, ...] = ("cats", "dogs"),
                seed: int = 0) -> Path:
    """``n`` noisy gradient images per class, of varied sizes, JPEG and PNG mixed."""
    rng = np.random.default_rng(seed)
    for c, name in enumerate(classes):
        (root / name).mkdir(parents=True, exist_ok=True)
        for i in range(n // len(classes)):
            h, w = 20 + i % 7, 24 + i % 5
            base = np.linspace(0, 200, w, dtype=np.float32)[None, :, None] + 40 * c
            noise = rng.integers(0, 50, (h, w, 3))
            pixels = np.clip(base + noise, 0, 255).astype(np.uint8)
            Image.fromarray(pixels).save(root / name / f"{i:04d}.{'jpg' if i % 2 else 'png'}")
    return root


@pytest.fixture(scope="module")
def images(tmp_path_factory) -> Path:
    return make_folder(tmp_path_factory.mktemp("images"))


def build(root, cache, size=16, workers=1, **kw) -> Path:
    target = Target((size, size), kw.pop("channels", 3), kw.pop("crop", None),
                    kw.pop("skip_bad", False))
    return prepare(FolderSource(root), target, cache_dir=cache, workers=workers,
                   progress=False, **kw)


def test_pixels_are_byte_exact_pil_and_floats_match_the_in_memory_reader(images, tmp_path):
    data = PreparedImages(build(images, tmp_path))
    files = FolderSource(images).names
    assert len(data) == len(files) == 300 and data.sample_shape == (3, 16, 16)
    for i in (0, 1, 151, 299):
        assert np.array_equal(data.pixels[i], load_image(images / files[i], 16, 3))
    memory = image_folder(images, 16, 3)
    idx = np.array([0, 7, 150, 299])
    np.testing.assert_array_equal(data.gather(idx), memory.x[idx])  # bit-identical floats
    np.testing.assert_array_equal(data.x[:3], memory.x[:3])
    np.testing.assert_array_equal(data.y, memory.y)
    assert data.classes == ["cats", "dogs"] and data.num_classes == 2
    assert isinstance(data.pixels, np.memmap)


def test_two_worker_processes_write_the_same_bytes(images, tmp_path):
    one = PreparedImages(build(images, tmp_path, name="one"))
    two = PreparedImages(build(images, tmp_path, workers=2, name="two"))
    assert np.array_equal(one.pixels, two.pixels) and one.header["key"] == two.header["key"]


def test_second_run_hits_the_cache_and_a_changed_source_rebuilds(images, tmp_path, monkeypatch):
    src = tmp_path / "src"
    make_folder(src, n=40)
    first = build(src, tmp_path / "cache")
    stamp = (first / "images.u8").stat().st_mtime_ns
    calls = []
    real_decode = FolderSource.decode
    monkeypatch.setattr(FolderSource, "decode",
                        lambda self, *a: calls.append(a) or real_decode(self, *a))
    assert build(src, tmp_path / "cache") == first and calls == []
    assert (first / "images.u8").stat().st_mtime_ns == stamp
    assert build(src, tmp_path / "cache", size=8) != first  # another size: another cache
    assert build(src, tmp_path / "cache", crop=(12, 12)) != first
    Image.new("RGB", (30, 30), (1, 2, 3)).save(src / "cats" / "new.png")  # a file added
    added = build(src, tmp_path / "cache")
    assert added != first and len(PreparedImages(added)) == 41
    (src / "dogs" / "0000.png").unlink()  # a file removed
    removed = build(src, tmp_path / "cache")
    assert removed not in (first, added) and len(PreparedImages(removed)) == 40
    assert len(calls) == 40 + 40 + 41 + 40  # every rebuild decoded, every hit did not


def test_ctrl_c_leaves_no_valid_looking_cache_and_the_next_build_continues(images, tmp_path,
                                                                           monkeypatch):
    monkeypatch.setattr(decode_workers, "CHUNK", 64)
    calls = []
    real_decode = FolderSource.decode

    def interrupted(self, i, *a):
        calls.append(i)
        if len(calls) == 2 * decode_workers.CHUNK + 5:
            raise KeyboardInterrupt
        return real_decode(self, i, *a)

    monkeypatch.setattr(FolderSource, "decode", interrupted)
    with pytest.raises(KeyboardInterrupt):
        build(images, tmp_path, name="cut")
    assert not (tmp_path / "cut").exists() and (tmp_path / ".cut.partial").is_dir()
    assert find_prepared(tmp_path, json.loads((tmp_path / ".cut.partial/build.json")
                                              .read_text())["key"]) is None
    with pytest.raises(DatasetError, match="no header.json"):
        PreparedImages(tmp_path / ".cut.partial")
    calls.clear()
    monkeypatch.setattr(FolderSource, "decode", lambda self, i, *a: calls.append(i)
                        or real_decode(self, i, *a))
    resumed = PreparedImages(build(images, tmp_path, name="cut"))
    assert min(calls) == 2 * decode_workers.CHUNK  # the two finished chunks were kept
    fresh = PreparedImages(build(images, tmp_path / "fresh"))
    assert np.array_equal(resumed.pixels, fresh.pixels)
    assert not (tmp_path / ".cut.partial").exists()


KILLED_BUILD = """
import sys, time
from gantrain.data.sources import FolderSource
from gantrain.data.prepare import Target, prepare
from gantrain.data import decode_workers
decode_workers.CHUNK = 8
real = FolderSource.decode
def slow(self, i, *a):
    time.sleep(0.01)
    return real(self, i, *a)
FolderSource.decode = slow
prepare(FolderSource(sys.argv[1]), Target((16, 16)), cache_dir=sys.argv[2], name="killed",
        workers=1, progress=False)
"""


@pytest.mark.slow
def test_kill_9_during_prepare_leaves_no_valid_looking_cache(images, tmp_path, monkeypatch):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-c", KILLED_BUILD, str(images), str(tmp_path)],
                            env=env)
    done = tmp_path / ".killed.partial" / "done.jsonl"
    deadline = time.time() + 60
    while time.time() < deadline and not (done.exists() and done.read_text().count("\n") >= 3):
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert done.exists(), "the build never started"
    assert not (tmp_path / "killed").exists()
    assert not list(tmp_path.glob("*/header.json"))
    with pytest.raises(DatasetError, match="not a prepared dataset"):
        PreparedImages(tmp_path / ".killed.partial")
    monkeypatch.setattr(decode_workers, "CHUNK", 8)  # as in the killed build: continue it
    calls = []
    real_decode = FolderSource.decode
    monkeypatch.setattr(FolderSource, "decode", lambda self, i, *a: calls.append(i)
                        or real_decode(self, i, *a))
    finished = PreparedImages(build(images, tmp_path, name="killed"))
    assert 0 < len(calls) <= 300 - 3 * 8
    assert np.array_equal(finished.pixels, PreparedImages(build(images, tmp_path / "b")).pixels)


def test_loader_resume_over_the_memory_map_is_bit_exact(images, tmp_path):
    data = PreparedImages(build(images, tmp_path))
    straight = ArrayLoader(data, 32, seed=3)
    expected = [straight.next_batch() for _ in range(25)]  # crosses two epochs
    first = ArrayLoader(data, 32, seed=3)
    got = [first.next_batch() for _ in range(11)]
    resumed = ArrayLoader(PreparedImages(data.folder), 32, seed=3)
    resumed.load_state_dict(json.loads(json.dumps(first.state_dict())))
    got += [resumed.next_batch() for _ in range(14)]
    for (x, y), (ex, ey) in zip(got, expected):
        assert x.dtype == np.float32 and x.shape == (32, 3, 16, 16)
        np.testing.assert_array_equal(x, ex)
        np.testing.assert_array_equal(y, ey)


def test_a_rank_gathers_its_slice_of_the_global_batch(images, tmp_path):
    data = PreparedImages(build(images, tmp_path))
    whole, rank1 = ArrayLoader(data, 8, seed=1), ArrayLoader(data, 8, seed=1)
    x, y = whole.next_batch()
    part = rank1.gather(rank1.next_indices()[1::2])
    np.testing.assert_array_equal(part[0], x[1::2])
    np.testing.assert_array_equal(part[1], y[1::2])


def test_a_cache_of_an_older_format_is_refused_with_the_command_to_rebuild(images, tmp_path,
                                                                           monkeypatch):
    folder = build(images, tmp_path, name="old")
    header = json.loads((folder / "header.json").read_text())
    header["format_version"] = 0
    (folder / "header.json").write_text(json.dumps(header))
    with pytest.raises(DatasetError, match=r"format version 0.*gantrain data prepare .* --out old"):
        PreparedImages(folder)
    assert build(images, tmp_path, name="old") == folder  # prepare replaces it
    assert read_header(folder)["format_version"] == prepared.FORMAT_VERSION


def test_a_truncated_pixel_file_is_not_a_dataset(images, tmp_path):
    folder = build(images, tmp_path)
    os.truncate(folder / "images.u8", 1000)
    with pytest.raises(DatasetError, match="the header promises"):
        PreparedImages(folder)


def test_a_worker_that_dies_is_an_error_and_the_build_can_continue(images, tmp_path,
                                                                   monkeypatch):
    monkeypatch.setattr(decode_workers, "CHUNK", 32)
    real_decode = FolderSource.decode

    def dies(self, i, *a):  # forked workers inherit this patch
        if i == 100:
            os._exit(1)
        return real_decode(self, i, *a)

    monkeypatch.setattr(FolderSource, "decode", dies)
    with pytest.raises(DatasetError, match="decoding worker process died"):
        build(images, tmp_path, workers=2, name="died")
    assert not (tmp_path / "died").exists() and (tmp_path / ".died.partial").is_dir()
    monkeypatch.setattr(FolderSource, "decode", real_decode)
    finished = PreparedImages(build(images, tmp_path, name="died"))
    assert np.array_equal(finished.pixels, PreparedImages(build(images, tmp_path / "b")).pixels)
