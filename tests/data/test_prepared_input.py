"""Prepared datasets from bad or unusual input: unreadable files, mixed image modes, a full
disk, empty and missing folders; ZIP archives with dataset.json labels; the registry path."""

from __future__ import annotations

import errno
import json
import zipfile
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from gantrain.config.strict import ConfigError
from gantrain.data import decode_workers
from gantrain.data import prepare as prepare_module
from gantrain.data.errors import DatasetError
from gantrain.data.folder import image_folder, load_image
from gantrain.data.prepare import Target, prepare
from gantrain.data.prepared import PreparedImages
from gantrain.data.registry import build_data
from gantrain.data.sources import FolderSource, ZipSource, open_source

from .test_prepared import make_folder


def build(source, cache, size=16, channels=3, skip_bad=False) -> Path:
    return prepare(source, Target((size, size), channels, None, skip_bad), cache_dir=cache,
                   workers=1, progress=False)


def truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: 60])


@pytest.fixture
def with_bad(tmp_path) -> Path:
    root = make_folder(tmp_path / "src", n=40)
    truncate(root / "cats" / "0003.jpg")
    (root / "dogs" / "0010.png").write_bytes(b"not an image at all")
    return root


def test_unreadable_images_are_skipped_and_counted(with_bad, tmp_path):
    data = PreparedImages(build(FolderSource(with_bad), tmp_path / "cache", skip_bad=True))
    assert len(data) == 38 and data.header["skipped"] == 2
    assert [f for f, _ in data.header["skipped_files"]] == ["cats/0003.jpg", "dogs/0010.png"]
    with pytest.warns(UserWarning, match="skipped 2"):
        memory = image_folder(with_bad, 16, skip_bad=True)
    np.testing.assert_array_equal(data.gather(np.arange(38)), memory.x)  # compacted in order
    np.testing.assert_array_equal(data.y, memory.y)


def test_an_unreadable_image_stops_the_build_by_default_naming_it(with_bad, tmp_path):
    with pytest.raises(DatasetError, match=r"0003\.jpg.*skip_bad.*nothing was cached"):
        build(FolderSource(with_bad), tmp_path / "cache")
    assert list((tmp_path / "cache").iterdir()) == [] or all(
        p.name.endswith(".lock") for p in (tmp_path / "cache").iterdir())


def test_mixed_modes_become_the_same_pixels_as_the_folder_reader(tmp_path):
    root = tmp_path / "modes"
    root.mkdir()
    rng = np.random.default_rng(1)
    rgb = rng.integers(0, 256, (20, 24, 3), dtype=np.uint8)
    Image.fromarray(rgb).convert("RGBA").save(root / "a_rgba.png")
    wide = (rng.integers(0, 65536, (20, 24))).astype(np.uint16)
    Image.fromarray(wide).save(root / "b_16bit.png")  # mode I;16
    palette = Image.fromarray(rgb).convert("P", palette=Image.Palette.ADAPTIVE)
    palette.info["transparency"] = 0
    palette.save(root / "c_palette.png", transparency=0)
    Image.fromarray(rgb).convert("CMYK").save(root / "d_cmyk.jpg")
    Image.fromarray(rgb[..., 0]).convert("LA").save(root / "e_la.png")
    assert Image.open(root / "b_16bit.png").mode.startswith("I")
    for channels in (1, 3):
        data = PreparedImages(build(FolderSource(root), tmp_path / "cache", 12, channels))
        names = FolderSource(root).names
        for i, name in enumerate(names):
            expected = load_image(root / name, 12, channels).reshape(12, 12, channels)
            assert np.array_equal(data.pixels[i], expected), name
        assert data.pixels[:, :, :, :].std() > 10  # real content, not a blank fill


@pytest.mark.parametrize("where", ["write", "allocate"])
def test_a_full_disk_gives_a_clear_message_and_no_half_cache(tmp_path, monkeypatch, where):
    root = make_folder(tmp_path / "src", n=20)
    full = OSError(errno.ENOSPC, "No space left on device")
    if where == "write":
        def write_rows(*args):
            raise full
        monkeypatch.setattr(decode_workers, "write_rows", write_rows)
    else:
        def posix_fallocate(*args):
            raise full
        monkeypatch.setattr(prepare_module.os, "posix_fallocate", posix_fallocate)
    with pytest.raises(DatasetError, match=r"disk full .* need 0\.0 MB.*nothing was cached"):
        build(FolderSource(root), tmp_path / "cache")
    left = [p.name for p in (tmp_path / "cache").iterdir() if not p.name.endswith(".lock")]
    assert left == []


def test_empty_and_missing_folders_are_named(tmp_path):
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "notes.txt").write_text("no images")
    with pytest.raises(DatasetError, match=r"empty contains no images"):
        build_data("folder", {"root": str(tmp_path / "empty")}, 4, 0)
    with pytest.raises(DatasetError, match=r"nothing does not exist"):
        build_data("folder", {"root": str(tmp_path / "nothing")}, 4, 0)
    with pytest.raises(DatasetError, match=r"nothing\.zip does not exist"):
        build_data("folder", {"root": str(tmp_path / "nothing.zip")}, 4, 0)


def stylegan_zip(folder: Path, path: Path, labels: bool = True) -> Path:
    """The dataset_tool layout: 00000/img00000000.png ... plus dataset.json."""
    files = FolderSource(folder)
    with zipfile.ZipFile(path, "w") as archive:
        entries = []
        for i, name in enumerate(files.names):
            member = f"{i // 1000:05d}/img{i:08d}{Path(name).suffix}"
            archive.write(folder / name, member)
            entries.append([member, int(files.labels[i])])
        archive.writestr("dataset.json", json.dumps({"labels": entries if labels else None}))
    return path


def test_a_stylegan_zip_gives_its_pixels_and_dataset_json_labels(tmp_path):
    folder = make_folder(tmp_path / "src", n=30)
    source = ZipSource(stylegan_zip(folder, tmp_path / "ds.zip"))
    data = PreparedImages(build(source, tmp_path / "cache"))
    from_folder = PreparedImages(build(FolderSource(folder), tmp_path / "cache"))
    assert np.array_equal(data.pixels, from_folder.pixels)
    np.testing.assert_array_equal(data.y, from_folder.y)
    assert data.num_classes == 2 and data.header["source_kind"] == "zip"
    unlabelled = ZipSource(stylegan_zip(folder, tmp_path / "plain.zip", labels=False))
    assert unlabelled.labels is None
    bundle = build_data("folder", {"root": str(tmp_path / "ds.zip"), "size": 16}, 8, 0)
    assert bundle.num_classes == 2 and bundle.sample_shape == (3, 16, 16)
    assert isinstance(open_source(tmp_path / "ds.zip"), ZipSource)


def test_bad_zips_are_named(tmp_path):
    (tmp_path / "junk.zip").write_bytes(b"PK but not really")
    with pytest.raises(DatasetError, match="junk.zip: not a readable ZIP"):
        ZipSource(tmp_path / "junk.zip")
    folder = make_folder(tmp_path / "src", n=4)
    path = stylegan_zip(folder, tmp_path / "ds.zip")
    with zipfile.ZipFile(path, "a") as archive:
        archive.writestr("99999/extra.png", (folder / "cats" / "0000.png").read_bytes())
    with pytest.raises(DatasetError, match=r"no label for 1 image\(s\), first '99999/extra.png'"):
        ZipSource(path)
    with zipfile.ZipFile(tmp_path / "vec.zip", "w") as archive:
        archive.write(folder / "cats" / "0000.png", "a.png")
        archive.writestr("dataset.json", json.dumps({"labels": [["a.png", [0.5, 0.5]]]}))
    with pytest.raises(DatasetError, match="non-negative class integers"):
        ZipSource(tmp_path / "vec.zip")


def test_the_folder_dataset_uses_the_cache_and_says_so(tmp_path, capsys):
    root = make_folder(tmp_path / "src", n=20)
    first = build_data("folder", {"root": str(root), "size": 16}, 4, 0)
    assert isinstance(first.dataset, PreparedImages)
    second = build_data("folder", {"root": str(root), "size": 16}, 4, 0)
    assert second.dataset.folder == first.dataset.folder
    err = capsys.readouterr().err
    assert "prepared cache" in err and "memory-mapped" in err
    memory = build_data("folder", {"root": str(root), "size": 16, "cache": False}, 4, 0)
    np.testing.assert_array_equal(memory.source.next_batch()[0], first.source.next_batch()[0])
    assert "in memory" in capsys.readouterr().err
    named = build_data("prepared", {"name": str(first.dataset.folder)}, 4, 0)
    assert named.sample_shape == (3, 16, 16)
    with pytest.raises(DatasetError, match="gantrain data prepare SOURCE --size N --out nope"):
        build_data("prepared", {"name": "nope"}, 4, 0)
    with pytest.raises(ConfigError, match="data.args.crop"):
        build_data("folder", {"root": str(root), "crop": -3}, 4, 0)
