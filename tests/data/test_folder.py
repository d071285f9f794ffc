"""Image folders: formats, recursion, class subfolders, resize+crop, bad files."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from gantrain.data.errors import DatasetError
from gantrain.data.folder import image_folder, load_image, read_image_folder, resize_crop


def save(path: Path, size=(20, 16), color=(200, 30, 90), mode="RGB") -> Path:
    """Write a solid-colour image; the format follows the suffix."""
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new(mode, size, color).save(path)
    return path


def stripes(width: int = 30, height: int = 10) -> Image.Image:
    """Three vertical bands: red | green | blue."""
    a = np.zeros((height, width, 3), np.uint8)
    third = width // 3
    a[:, :third, 0] = a[:, third:2 * third, 1] = a[:, 2 * third:, 2] = 255
    return Image.fromarray(a)


def test_unlabelled_folder_all_formats_recursive(tmp_path):
    for i, suffix in enumerate([".png", ".jpg", ".jpeg", ".bmp", ".webp", ".PNG"]):
        save(tmp_path / f"img{i}{suffix}", size=(24 + 4 * i, 18))
    save(tmp_path / "deeper" / "more" / "z.png")
    (tmp_path / "notes.txt").write_text("not an image")
    save(tmp_path / ".hidden.png")
    save(tmp_path / ".cache" / "x.png")
    result = read_image_folder(tmp_path, size=8)
    ds = result.dataset
    assert ds.x.shape == (7, 3, 8, 8) and ds.x.dtype == np.float32
    assert ds.y is None and ds.num_classes == 0 and result.classes == []
    # Sorted, each folder's files before its subfolders; hidden and non-image files ignored.
    assert [p.name for p in result.files] == [
        "img0.png", "img1.jpg", "img2.jpeg", "img3.bmp", "img4.webp", "img5.PNG", "z.png"
    ]
    assert result.files[-1] == tmp_path / "deeper" / "more" / "z.png"
    png = ds.x[0]  # img0.png: exact colour survives (lossless, solid)
    assert np.allclose((png[:, 0, 0] + 1) * 127.5, [200, 30, 90], atol=0.01)
    assert -1.0 <= ds.x.min() and ds.x.max() <= 1.0


def test_class_subfolders_become_sorted_labels(tmp_path):
    save(tmp_path / "zebra" / "a.png")
    save(tmp_path / "apple" / "nested" / "b.jpg")
    save(tmp_path / "apple" / "c.png")
    save(tmp_path / "mango" / "d.bmp")
    (tmp_path / "empty_class").mkdir()
    result = read_image_folder(tmp_path, size=4, channels=1)
    assert result.classes == ["apple", "mango", "zebra"]
    assert result.dataset.num_classes == 3
    names = [p.name for p in result.files]
    assert names == ["c.png", "b.jpg", "d.bmp", "a.png"]  # files before subfolders, sorted
    assert result.dataset.y.tolist() == [0, 0, 1, 2]
    assert result.dataset.y.dtype == np.int32
    assert result.dataset.x.shape == (4, 1, 4, 4)


def test_single_subfolder_is_unlabelled_unless_forced(tmp_path):
    save(tmp_path / "img_align" / "a.png")
    save(tmp_path / "img_align" / "b.png")
    assert image_folder(tmp_path, 4).y is None
    forced = read_image_folder(tmp_path, 4, labelled=True)
    assert forced.classes == ["img_align"] and forced.dataset.y.tolist() == [0, 0]
    assert image_folder(tmp_path / "img_align", 4).y is None


def test_labelled_true_with_loose_images_is_an_error(tmp_path):
    save(tmp_path / "cat" / "a.png")
    save(tmp_path / "stray.png")
    assert image_folder(tmp_path, 4).y is None  # auto: loose files mean unlabelled
    with pytest.raises(DatasetError, match=r"labelled=True .* 1 sit directly in .*stray\.png"):
        image_folder(tmp_path, 4, labelled=True)


def test_resize_shorter_side_then_center_crop():
    wide = resize_crop(stripes(30, 10), 10)
    assert wide.size == (10, 10)
    centre = np.asarray(wide)
    assert np.all(centre[:, 2:8, 1] > 250) and np.all(centre[:, :, 0] < 5)  # all green
    tall = resize_crop(stripes(30, 10).rotate(90, expand=True), (4, 6))  # (height, width)
    assert tall.size == (6, 4)


def test_load_image_keeps_aspect_and_picks_centre(tmp_path):
    stripes(60, 20).save(tmp_path / "s.png")
    rgb = load_image(tmp_path / "s.png", 8)
    assert rgb.shape == (8, 8, 3) and rgb.dtype == np.uint8
    assert rgb[:, :, 1].min() > 200 and rgb[:, :, 0].max() < 30
    gray = load_image(tmp_path / "s.png", (4, 12), channels=1)
    assert gray.shape == (4, 12)


def test_non_square_target_size(tmp_path):
    save(tmp_path / "a.png", size=(50, 50))
    assert image_folder(tmp_path, (6, 10)).x.shape == (1, 3, 6, 10)


def test_grayscale_conversion(tmp_path):
    save(tmp_path / "white.png", color=(255, 255, 255))
    save(tmp_path / "black.bmp", color=(0, 0, 0))
    ds = image_folder(tmp_path, 5, channels=1)
    assert ds.x.shape == (2, 1, 5, 5)
    assert np.all(ds.x[0] == -1.0) and np.all(ds.x[1] == 1.0)  # black.bmp sorts first


def test_alpha_is_composited_on_black(tmp_path):
    save(tmp_path / "clear.png", color=(255, 255, 255, 0), mode="RGBA")
    save(tmp_path / "solid.png", color=(255, 255, 255, 255), mode="RGBA")
    palette = Image.new("P", (8, 8), 0)
    palette.putpalette([255, 255, 255] * 256)
    palette.info["transparency"] = 0
    palette.save(tmp_path / "pal.png")
    ds = image_folder(tmp_path, 4)
    assert np.all(ds.x[0] == -1.0) and np.all(ds.x[1] == -1.0) and np.all(ds.x[2] == 1.0)


def test_sixteen_bit_grayscale_is_scaled_not_clipped(tmp_path):
    Image.fromarray(np.full((6, 6), 32768, np.uint16)).save(tmp_path / "deep.png")
    value = image_folder(tmp_path, 6, channels=1).x[0, 0, 0, 0]
    assert abs(value - (128 / 127.5 - 1)) < 1e-6


def test_corrupt_file_is_named(tmp_path):
    save(tmp_path / "good.png")
    (tmp_path / "bad.jpg").write_bytes(b"\xff\xd8\xff\xe0 definitely not a jpeg")
    with pytest.raises(DatasetError, match=r"bad\.jpg: unreadable image"):
        image_folder(tmp_path, 4)


def test_truncated_png_is_named(tmp_path):
    noise = np.random.default_rng(0).integers(0, 256, (64, 64, 3), dtype=np.uint8)
    Image.fromarray(noise).save(tmp_path / "cut.png")
    data = (tmp_path / "cut.png").read_bytes()
    (tmp_path / "cut.png").write_bytes(data[: len(data) // 2])
    with pytest.raises(DatasetError, match=r"cut\.png: unreadable image"):
        image_folder(tmp_path, 4)


def test_skip_bad_counts_and_warns(tmp_path):
    save(tmp_path / "a" / "ok1.png")
    (tmp_path / "a" / "broken.png").write_bytes(b"\x89PNG\r\n\x1a\n garbage")
    save(tmp_path / "b" / "ok2.png")
    (tmp_path / "b" / "empty.webp").write_bytes(b"")
    result = read_image_folder(tmp_path, 4, skip_bad=True)
    assert len(result.dataset) == 2 and len(result.skipped) == 2
    assert [p.name for p, _ in result.skipped] == ["broken.png", "empty.webp"]
    assert result.dataset.y.tolist() == [0, 1]
    assert [p.name for p in result.files] == ["ok1.png", "ok2.png"]
    with pytest.warns(UserWarning, match=r"skipped 2 unreadable file\(s\), first .*broken\.png"):
        ds = image_folder(tmp_path, 4, skip_bad=True)
    assert len(ds) == 2


def test_no_warning_when_nothing_skipped(tmp_path):
    save(tmp_path / "a.png")
    save(tmp_path / "b.png")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ds = image_folder(tmp_path, 4, skip_bad=True)
    assert [str(w.message) for w in caught] == []
    assert len(ds) == 2  # both images loaded, none skipped


def test_all_bad_is_an_error_even_with_skip_bad(tmp_path):
    (tmp_path / "x.png").write_bytes(b"nope")
    with pytest.raises(DatasetError, match=r"all 1 images are unreadable"):
        image_folder(tmp_path, 4, skip_bad=True)


def test_missing_empty_and_file_roots(tmp_path):
    with pytest.raises(DatasetError, match=r"missing_dir does not exist"):
        image_folder(tmp_path / "missing_dir", 4)
    (tmp_path / "empty" / "sub").mkdir(parents=True)
    (tmp_path / "empty" / "readme.txt").write_text("hi")
    with pytest.raises(DatasetError, match=r"empty contains no images .*\.png"):
        image_folder(tmp_path / "empty", 4)
    with pytest.raises(DatasetError, match=r"readme\.txt is not a directory"):
        image_folder(tmp_path / "empty" / "readme.txt", 4)


def test_bad_arguments(tmp_path):
    save(tmp_path / "a.png")
    with pytest.raises(DatasetError, match="channels must be 1 or 3, got 4"):
        image_folder(tmp_path, 4, channels=4)
    with pytest.raises(DatasetError, match="image size must be positive"):
        image_folder(tmp_path, 0)
