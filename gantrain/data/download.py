"""Download MNIST, Fashion-MNIST and CIFAR-10 from their official sources, verified.

Every file is streamed to a temporary file next to its destination, hashed on the way, and
only renamed into place (atomically) when its size and checksum match, so an interrupted or
tampered download never leaves a plausible-looking file behind. Files already present with
the right checksum are not fetched again. After ``download(name, root)`` the matching reader
(``mnist(root)``, ``fashion_mnist(root)``, ``cifar10(root)``) works on the same ``root``.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import tarfile
import tempfile
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from .errors import DatasetError

log = logging.getLogger(__name__)

CHUNK = 1 << 20
TIMEOUT_S = 60.0
USER_AGENT = "gantrain-dataset-download/0.1"  # some mirrors refuse urllib's default agent
# Python >= 3.12 (and late 3.8-3.11 patch releases) also vet tar members themselves.
_TAR_FILTER = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}


@dataclass(frozen=True)
class Resource:
    """One file to fetch: its name under each mirror and ``"md5:<hex>"``/``"sha256:<hex>"``."""

    filename: str
    checksum: str


@dataclass(frozen=True)
class Source:
    """Where a dataset lives: mirror base URLs tried in order, its files, and what to extract.

    ``extracts_to`` is the folder a tar archive unpacks into (None: files are used as is).
    """

    mirrors: tuple[str, ...]
    resources: tuple[Resource, ...]
    extracts_to: str | None = None


def _idx_resources(checksums: Sequence[str]) -> tuple[Resource, ...]:
    names = (
        "train-images-idx3-ubyte.gz",
        "train-labels-idx1-ubyte.gz",
        "t10k-images-idx3-ubyte.gz",
        "t10k-labels-idx1-ubyte.gz",
    )
    return tuple(Resource(n, f"md5:{c}") for n, c in zip(names, checksums))


# Checksums are the ones published with each dataset (also used by torchvision).
SOURCES: dict[str, Source] = {
    "mnist": Source(
        mirrors=(
            "https://ossci-datasets.s3.amazonaws.com/mnist/",
            "http://yann.lecun.com/exdb/mnist/",
        ),
        resources=_idx_resources((
            "f68b3c2dcbeaaa9fbdd348bbdeb94873",
            "d53e105ee54ea40749a09fcbcd1e9432",
            "9fb629c4189551a2d022fa330f9573f3",
            "ec29112dd5afa0611ce80d1b7f02629c",
        )),
    ),
    "fashion_mnist": Source(
        mirrors=("http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/",),
        resources=_idx_resources((
            "8d4fb7e6c68d591d4c3dfef9ec88bf0d",
            "25c81989df183df01b3e8a0aad5dffbe",
            "bef4ecab320f06d8554ea6380940ec79",
            "bb300cfdad3c16e7a12a480ee83cd310",
        )),
    ),
    "cifar10": Source(
        mirrors=("https://www.cs.toronto.edu/~kriz/",),
        resources=(Resource("cifar-10-python.tar.gz", "md5:c58f30108f718f92721af3b95e74349a"),),
        extracts_to="cifar-10-batches-py",
    ),
}


def download(
    name: str, root: str | os.PathLike, mirrors: Sequence[str] | None = None
) -> Path:
    """Fetch dataset ``name`` ("mnist", "fashion_mnist", "cifar10") into ``root``; return root.

    ``mirrors`` replaces the official base URLs (e.g. a local cache or ``file://`` folder).
    Raises DatasetError listing every URL tried and why it failed.
    """
    if name not in SOURCES:
        raise DatasetError(f"unknown dataset {name!r}, expected one of {sorted(SOURCES)}")
    source = SOURCES[name]
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    bases = tuple(mirrors) if mirrors is not None else source.mirrors
    for resource in source.resources:
        dest = root / resource.filename
        if dest.is_file() and checksum_matches(dest, resource.checksum):
            log.info("%s: %s already present and verified", name, dest)
            continue
        _fetch_from_mirrors(bases, resource, dest)
    if source.extracts_to is not None and not (root / source.extracts_to).is_dir():
        extract_tar(root / source.resources[0].filename, root, source.extracts_to)
    return root


def _fetch_from_mirrors(bases: Sequence[str], resource: Resource, dest: Path) -> None:
    """Try each mirror in turn; collect every failure into one DatasetError."""
    failures = []
    for base in bases:
        url = base.rstrip("/") + "/" + resource.filename
        try:
            fetch(url, dest, resource.checksum)
            return
        except DatasetError as exc:
            log.warning("%s", exc)
            failures.append(f"  {exc}")  # messages start with the URL
    raise DatasetError(
        f"could not download {resource.filename} ({resource.checksum}) to {dest}:\n"
        + "\n".join(failures)
        + f"\nDownload it by hand into {dest.parent} and check its {resource.checksum}."
    )


def fetch(url: str, dest: str | os.PathLike, checksum: str, timeout: float = TIMEOUT_S) -> Path:
    """Download ``url`` to ``dest`` atomically, verifying ``checksum`` ("md5:..."/"sha256:...").

    The bytes go to a temporary file in ``dest``'s folder, which is renamed onto ``dest``
    only when complete and verified, and removed otherwise.
    """
    dest = Path(dest)
    algorithm, expected = _parse_checksum(checksum)
    digest = hashlib.new(algorithm, usedforsecurity=False)
    fd, tmp_name = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=".part")
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as out:
            received, announced = _stream(url, out, digest, timeout)
            out.flush()
            os.fsync(out.fileno())
        if announced is not None and received != announced:
            raise DatasetError(f"{url}: truncated, got {received} of {announced} bytes")
        if digest.hexdigest() != expected:
            raise DatasetError(
                f"{url}: checksum mismatch, expected {algorithm} {expected}, "
                f"got {digest.hexdigest()} ({received} bytes); download discarded"
            )
        os.replace(tmp, dest)
    finally:
        tmp.unlink(missing_ok=True)
    return dest


def _stream(url: str, out: BinaryIO, digest: Any, timeout: float) -> tuple[int, int | None]:
    """Copy the response body to ``out`` while hashing; returns (bytes, Content-Length)."""
    request = urllib.request.Request(url, headers={"User-Agent": USER_AGENT})
    received = 0
    try:
        with _open_url(request, timeout) as response:
            length = response.headers.get("Content-Length") if response.headers else None
            while chunk := response.read(CHUNK):
                digest.update(chunk)
                out.write(chunk)
                received += len(chunk)
    except (OSError, ValueError) as exc:  # URLError, HTTPError and timeouts are OSErrors
        detail = exc if isinstance(exc, urllib.error.HTTPError) else getattr(exc, "reason", exc)
        raise DatasetError(f"{url}: download failed: {detail}") from exc
    return received, int(length) if length else None


def _open_url(request: urllib.request.Request, timeout: float) -> Any:
    """The one network call, kept separate so tests can replace it."""
    return urllib.request.urlopen(request, timeout=timeout)


def checksum_matches(path: str | os.PathLike, checksum: str) -> bool:
    """Whether the file at ``path`` hashes to ``checksum`` ("md5:<hex>" or "sha256:<hex>")."""
    algorithm, expected = _parse_checksum(checksum)
    digest = hashlib.new(algorithm, usedforsecurity=False)
    with open(path, "rb") as f:
        while chunk := f.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest() == expected


def _parse_checksum(checksum: str) -> tuple[str, str]:
    """Split "algo:hex"; only md5 and sha256 are accepted."""
    algorithm, _, value = checksum.partition(":")
    if algorithm not in ("md5", "sha256") or not value:
        raise DatasetError(f"bad checksum {checksum!r}, expected 'md5:<hex>' or 'sha256:<hex>'")
    return algorithm, value.lower()


def extract_tar(archive: str | os.PathLike, root: str | os.PathLike, folder: str) -> Path:
    """Unpack ``archive``'s ``folder`` into ``root`` safely and atomically; return its path.

    Members must be plain files or directories under ``folder`` (no links, no absolute or
    ``..`` paths). Extraction happens in a temporary folder that is renamed into place.
    """
    archive, root = Path(archive), Path(root)
    target = root / folder
    staging = Path(tempfile.mkdtemp(dir=root, prefix=f".{folder}."))
    try:
        try:
            with tarfile.open(archive) as tar:
                members = _safe_members(tar, archive, folder)
                tar.extractall(staging, members=members, **_TAR_FILTER)
        except (tarfile.TarError, OSError, EOFError) as exc:
            raise DatasetError(f"{archive}: cannot extract: {exc}") from exc
        if not (staging / folder).is_dir():
            raise DatasetError(f"{archive}: holds no {folder}/ folder")
        if target.exists():
            raise DatasetError(f"{target} already exists; remove it to extract {archive} again")
        os.replace(staging / folder, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def _safe_members(tar: tarfile.TarFile, archive: Path, folder: str) -> list[tarfile.TarInfo]:
    """Every member, after checking none escapes ``folder`` or is a link or device."""
    members = tar.getmembers()
    for member in members:
        parts = Path(member.name).parts
        if member.name.startswith(("/", "\\")) or ".." in parts or parts[:1] != (folder,):
            raise DatasetError(f"{archive}: unexpected member path {member.name!r}")
        if not (member.isfile() or member.isdir()):
            raise DatasetError(f"{archive}: member {member.name!r} is a link or special file")
    return members
