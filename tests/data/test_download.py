"""Verified, atomic downloads, exercised with file:// mirrors and a fake opener only.

An autouse fixture makes any attempt to reach a non-file URL fail the test, so nothing here
can touch the network.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import tarfile
from pathlib import Path

import numpy as np
import pytest

from gantrain.data import download as dl
from gantrain.data.cifar import cifar10
from gantrain.data.download import Resource, Source, checksum_matches, download, fetch
from gantrain.data.errors import DatasetError
from gantrain.data.idx import mnist

from .test_cifar import write_python_batches
from .test_idx import idx_bytes


@pytest.fixture(autouse=True)
def offline(monkeypatch):
    """Only file:// URLs may be opened."""
    real = dl._open_url

    def guarded(request, timeout):
        assert request.full_url.startswith("file:"), f"test tried the network: {request.full_url}"
        return real(request, timeout)

    monkeypatch.setattr(dl, "_open_url", guarded)


def md5(data: bytes) -> str:
    return "md5:" + hashlib.md5(data).hexdigest()


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


@pytest.fixture
def served(tmp_path):
    """A 'mirror' folder with one payload file, and an empty destination folder."""
    mirror, dest = tmp_path / "mirror", tmp_path / "dest"
    mirror.mkdir()
    dest.mkdir()
    payload = bytes(range(256)) * 50
    (mirror / "blob.bin").write_bytes(payload)
    return mirror, dest, payload


def test_fetch_file_url_verifies_and_renames(served):
    mirror, dest, payload = served
    sha = "sha256:" + hashlib.sha256(payload).hexdigest()
    path = fetch((mirror / "blob.bin").as_uri(), dest / "blob.bin", sha)
    assert path.read_bytes() == payload
    assert leftovers(dest) == []
    assert checksum_matches(path, sha) and checksum_matches(path, md5(payload))


def test_checksum_mismatch_discards_and_keeps_old_file(served):
    mirror, dest, _ = served
    (dest / "blob.bin").write_bytes(b"previous good copy")
    with pytest.raises(DatasetError, match=r"blob\.bin: checksum mismatch, expected md5 0{32}"):
        fetch((mirror / "blob.bin").as_uri(), dest / "blob.bin", "md5:" + "0" * 32)
    assert (dest / "blob.bin").read_bytes() == b"previous good copy"
    assert leftovers(dest) == []


class _ShortResponse(io.BytesIO):
    """A response that announces more bytes than it delivers (a dropped connection)."""

    headers = {"Content-Length": "1000"}


def test_truncated_transfer_is_detected(served, monkeypatch):
    _, dest, _ = served
    monkeypatch.setattr(dl, "_open_url", lambda request, timeout: _ShortResponse(b"x" * 10))
    with pytest.raises(DatasetError, match=r"truncated, got 10 of 1000 bytes"):
        fetch("https://example.invalid/blob.bin", dest / "blob.bin", md5(b"x" * 10))
    assert list(dest.iterdir()) == []


def test_connection_error_is_wrapped_and_cleaned_up(served, monkeypatch):
    _, dest, _ = served

    def refuse(request, timeout):
        raise ConnectionRefusedError("refused")

    monkeypatch.setattr(dl, "_open_url", refuse)
    with pytest.raises(DatasetError, match=r"example\.invalid/blob\.bin: download failed"):
        fetch("https://example.invalid/blob.bin", dest / "blob.bin", md5(b""))
    assert list(dest.iterdir()) == []


def test_bad_checksum_spec(tmp_path):
    with pytest.raises(DatasetError, match="expected 'md5:<hex>' or 'sha256:<hex>'"):
        fetch("file:///nowhere", tmp_path / "x", "crc32:1234")
    assert list(tmp_path.iterdir()) == []


def _fake_mnist_files(folder: Path, n: int = 10) -> dict[str, bytes]:
    rng = np.random.default_rng(0)
    files = {}
    for prefix in ("train", "t10k"):
        images = rng.integers(0, 256, (n, 28, 28), dtype=np.uint8)
        labels = (np.arange(n) % 10).astype(np.uint8)
        files[f"{prefix}-images-idx3-ubyte.gz"] = gzip.compress(idx_bytes(images))
        files[f"{prefix}-labels-idx1-ubyte.gz"] = gzip.compress(idx_bytes(labels))
    folder.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        (folder / name).write_bytes(data)
    return files


def test_download_mnist_then_read_it(tmp_path, monkeypatch):
    files = _fake_mnist_files(tmp_path / "mirror")
    resources = tuple(Resource(name, md5(data)) for name, data in files.items())
    monkeypatch.setitem(dl.SOURCES, "mnist", Source(("https://unused.invalid/",), resources))
    root = download("mnist", tmp_path / "data", mirrors=[(tmp_path / "mirror").as_uri()])
    assert sorted(p.name for p in root.iterdir()) == sorted(files)
    assert mnist(root).x.shape == (10, 1, 28, 28) and len(mnist(root, "test")) == 10

    def no_network(request, timeout):
        raise AssertionError("verified files must not be fetched again")

    monkeypatch.setattr(dl, "_open_url", no_network)
    download("mnist", root, mirrors=["https://unused.invalid/"])


def test_download_falls_back_to_next_mirror_and_reports_all(tmp_path, monkeypatch):
    files = _fake_mnist_files(tmp_path / "good")
    (tmp_path / "empty").mkdir()
    resources = tuple(Resource(name, md5(data)) for name, data in files.items())
    monkeypatch.setitem(dl.SOURCES, "mnist", Source((), resources))
    mirrors = [(tmp_path / "empty").as_uri(), (tmp_path / "good").as_uri()]
    download("mnist", tmp_path / "ok", mirrors=mirrors)
    assert mnist(tmp_path / "ok").num_classes == 10

    with pytest.raises(DatasetError) as info:
        download("mnist", tmp_path / "fail", mirrors=[mirrors[0], mirrors[0] + "/again"])
    message = str(info.value)
    assert "could not download train-images-idx3-ubyte.gz" in message
    assert message.count("download failed") == 2 and "Download it by hand" in message
    assert list((tmp_path / "fail").iterdir()) == []


def test_tampered_file_is_rejected(tmp_path, monkeypatch):
    files = _fake_mnist_files(tmp_path / "mirror")
    resources = [Resource(name, md5(data)) for name, data in files.items()]
    resources[0] = Resource(resources[0].filename, md5(b"the real thing"))
    monkeypatch.setitem(dl.SOURCES, "mnist", Source((), tuple(resources)))
    with pytest.raises(DatasetError, match=r"train-images-idx3-ubyte\.gz: checksum mismatch"):
        download("mnist", tmp_path / "data", mirrors=[(tmp_path / "mirror").as_uri()])
    assert list((tmp_path / "data").iterdir()) == []


def _cifar_tarball(tmp_path: Path, extra: tarfile.TarInfo | None = None) -> bytes:
    write_python_batches(tmp_path / "src" / "cifar-10-batches-py")
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        tar.add(tmp_path / "src" / "cifar-10-batches-py", arcname="cifar-10-batches-py")
        if extra is not None:
            tar.addfile(extra, io.BytesIO(b"x" * extra.size))
    return buffer.getvalue()


def test_download_cifar10_extracts_and_reads(tmp_path, monkeypatch):
    archive = _cifar_tarball(tmp_path)
    (tmp_path / "mirror").mkdir()
    (tmp_path / "mirror" / "cifar-10-python.tar.gz").write_bytes(archive)
    source = Source((), (Resource("cifar-10-python.tar.gz", md5(archive)),), "cifar-10-batches-py")
    monkeypatch.setitem(dl.SOURCES, "cifar10", source)
    root = download("cifar10", tmp_path / "data", mirrors=[(tmp_path / "mirror").as_uri()])
    assert cifar10(root).x.shape == (20, 3, 32, 32)
    assert leftovers(root) == []
    download("cifar10", root, mirrors=[(tmp_path / "mirror").as_uri()])  # idempotent


def test_unsafe_tar_member_is_refused(tmp_path):
    evil = tarfile.TarInfo("../escape.txt")
    evil.size = 3
    archive = tmp_path / "evil.tar.gz"
    archive.write_bytes(_cifar_tarball(tmp_path, extra=evil))
    (tmp_path / "out").mkdir()
    with pytest.raises(DatasetError, match=r"evil\.tar\.gz: unexpected member path '\.\./escape"):
        dl.extract_tar(archive, tmp_path / "out", "cifar-10-batches-py")
    assert list((tmp_path / "out").iterdir()) == [] and not (tmp_path / "escape.txt").exists()


def test_corrupt_archive_is_named(tmp_path):
    (tmp_path / "bad.tar.gz").write_bytes(b"\x1f\x8b not really")
    with pytest.raises(DatasetError, match=r"bad\.tar\.gz: cannot extract"):
        dl.extract_tar(tmp_path / "bad.tar.gz", tmp_path, "cifar-10-batches-py")


def test_unknown_dataset(tmp_path):
    with pytest.raises(DatasetError, match=r"unknown dataset 'svhn'.*'cifar10'"):
        download("svhn", tmp_path)


def test_official_sources_are_well_formed():
    for name, source in dl.SOURCES.items():
        assert source.mirrors, name
        for resource in source.resources:
            algorithm, _, value = resource.checksum.partition(":")
            assert algorithm in ("md5", "sha256") and len(value) in (32, 64)
    assert {r.filename for r in dl.SOURCES["mnist"].resources} == {
        "train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz",
        "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz",
    }
