"""Build a prepared dataset (see :mod:`gantrain.data.prepared`) once, in worker processes,
with the atomic discipline of checkpoints.

The cache key hashes the source's fingerprint (item names, sizes, times or CRCs), its labels,
the target size, channels, crop, the bad-file policy and the format version; a later run with
the same key finds the finished folder and reads it at once, a changed source or setting gets
a new one.

The build writes into ``.<name>.partial/`` next to the final folder: the pixel file is
allocated whole first (so a too-small disk fails before any decoding), chunks of images are
decoded by ``workers`` processes, each chunk written with ``pwrite`` and synced, and only then
recorded in ``done.jsonl``. A Ctrl-C or ``kill -9`` leaves the partial folder, which has no
header and so never looks complete; the next build of the same key redoes only the chunks not
recorded. When all chunks are in, unreadable images (if skipped) are compacted away, the
header is written and the folder is renamed to its final name. A disk that fills up removes
the partial folder and says how much space was needed.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import shutil
import sys
from collections.abc import Callable
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from . import decode_workers
from .decode_workers import Target, chunk_count, chunk_len, decoded_chunks
from .errors import DatasetError
from .prepared import FORMAT_VERSION, HEADER, IMAGES, LABELS, cache_root, read_header
from .sources import ImageSource

BUILD, DONE = "build.json", "done.jsonl"
MAX_LISTED_SKIPS = 20


def cache_key(source: ImageSource, target: Target) -> str:
    """sha256 over everything that decides the prepared bytes (not the source's location)."""
    labels = None if source.labels is None else hashlib.sha256(source.labels.tobytes()).hexdigest()
    spec = {"format_version": FORMAT_VERSION, "kind": source.kind,
            "fingerprint": source.fingerprint(), "labels": labels, "classes": source.classes,
            "size": list(target.size), "channels": target.channels,
            "crop": None if target.crop is None else list(target.crop),
            "skip_bad": target.skip_bad}
    return hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()


def find_prepared(root: Path, key: str) -> Path | None:
    """The finished, current-format folder under ``root`` whose header carries ``key``."""
    for header in sorted(root.glob(f"*/{HEADER}")):
        try:
            if json.loads(header.read_text()).get("key") == key:
                read_header(header.parent)  # format version and file size
                return header.parent
        except (OSError, ValueError):  # DatasetError is a ValueError: not this one
            continue
    return None


def default_name(source: ImageSource, target: Target, key: str) -> str:
    h, w = target.size
    return f"{source.root.stem or 'data'}-{h}x{w}-{key[:12]}"


def prepare(source: ImageSource, target: Target, *, cache_dir: str | os.PathLike | None = None,
            name: str | os.PathLike | None = None, workers: int | None = None,
            progress: bool = True, log: Callable[[str], None] | None = None) -> Path:
    """The prepared folder for ``source`` at ``target``: found by key, or built now.

    ``name`` is a folder name under the cache root or a path (with a ``/``); by default the
    name is derived from the source and the key. ``workers`` processes decode (default: the
    CPU count, at most 8; 1 decodes in this process).
    """
    log = log or _stderr
    root = cache_root(cache_dir)
    key = cache_key(source, target)
    found = find_prepared(root, key) if root.is_dir() else None
    if found is not None and (name is None or _named(root, name) == found):
        log(f"data: prepared cache {found} ({source.root})")
        return found
    final = _named(root, name or default_name(source, target, key))
    final.parent.mkdir(parents=True, exist_ok=True)
    with _lock(final):
        if (final / HEADER).exists():
            try:
                if read_header(final).get("key") == key:  # built meanwhile by another process
                    return final
                log(f"data: {final} holds another source or setting; preparing it again")
            except DatasetError as exc:
                log(f"data: {exc}; preparing it again")
        workers = workers or min(os.cpu_count() or 1, 8)
        _build(source, target, key, final, workers, progress, log)
    return final


def _named(root: Path, name: str | os.PathLike) -> Path:
    text = str(name)
    return Path(text).expanduser() if ("/" in text or os.sep in text) else root / text


def _stderr(message: str) -> None:
    print(message, file=sys.stderr)


@contextmanager
def _lock(final: Path):
    """One builder per folder: data-parallel ranks or two runs wait instead of colliding."""
    import fcntl

    with open(final.parent / f".{final.name}.lock", "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _build(source: ImageSource, target: Target, key: str, final: Path, workers: int, progress: bool,
           log: Callable[[str], None]) -> None:
    partial = final.parent / f".{final.name}.partial"
    count = len(source.names)
    chunks = chunk_count(count)
    bad = _resume(partial, key)
    try:
        if bad is None:
            bad = {}
            _start(partial, key, count * target.row_bytes)
        elif bad:
            log(f"data: continuing the interrupted build in {partial}: {len(bad)} of {chunks} "
                "chunks already written")
        todo = [c for c in range(chunks) if c not in bad]
        done_images = count - sum(chunk_len(c, count) for c in todo)
        bar = tqdm(total=count, initial=done_images, unit="img", disable=not progress,
                   desc=f"prepare {final.name}", dynamic_ncols=True)
        with bar, open(partial / DONE, "a") as journal, decoded_chunks(
                source, target, partial / IMAGES, todo, workers) as results:
            for chunk, skipped in results:
                bad[chunk] = skipped
                journal.write(json.dumps({"chunk": chunk, "bad": skipped}) + "\n")
                journal.flush()
                os.fsync(journal.fileno())
                bar.update(chunk_len(chunk, count))
        _finish(source, target, key, partial, final, bad, log)
    except KeyboardInterrupt:
        log(f"data: interrupted; {partial} keeps the chunks written so far and the next "
            "prepare of the same source continues from there")
        raise
    except BrokenProcessPool:
        raise DatasetError(f"a decoding worker process died (out of memory, or killed) while "
                           f"preparing {final}; {partial} keeps the chunks written so far: run "
                           "again to continue, with fewer workers if memory is short") from None
    except OSError as exc:
        shutil.rmtree(partial, ignore_errors=True)
        raise _write_error(exc, final, count * target.row_bytes) from None
    except DatasetError as exc:
        shutil.rmtree(partial, ignore_errors=True)
        hint = "" if target.skip_bad else (" (set data.args.skip_bad = true, or pass "
                                           "--skip-bad, to skip unreadable images)")
        raise DatasetError(f"{exc}{hint}; nothing was cached") from None


def _resume(partial: Path, key: str) -> dict[int, list] | None:
    """Chunks (with their skipped images) an interrupted build of ``key`` finished, or None."""
    try:
        if json.loads((partial / BUILD).read_text()) != _build_id(key):
            raise ValueError("another key or chunk size")
        lines = (partial / DONE).read_text().splitlines() if (partial / DONE).exists() else []
    except (OSError, ValueError, KeyError):
        shutil.rmtree(partial, ignore_errors=True)
        return None
    done: dict[int, list] = {}
    for line in lines:
        try:
            entry = json.loads(line)
            done[int(entry["chunk"])] = [tuple(b) for b in entry["bad"]]
        except (ValueError, KeyError, TypeError):  # a line torn by a kill: redo that chunk
            continue
    return done


def _build_id(key: str) -> dict[str, Any]:
    """What a partial build must match to be continued: the key and the chunking."""
    return {"key": key, "chunk": decode_workers.CHUNK}


def _start(partial: Path, key: str, nbytes: int) -> None:
    """A fresh partial folder with the whole pixel file allocated (disk full fails here)."""
    partial.mkdir(parents=True)
    (partial / BUILD).write_text(json.dumps(_build_id(key)))
    fd = os.open(partial / IMAGES, os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        try:
            os.posix_fallocate(fd, 0, max(nbytes, 1))
        except OSError as exc:
            if exc.errno not in (errno.EOPNOTSUPP, errno.EINVAL):  # no fallocate on this fs
                raise
            os.ftruncate(fd, nbytes)
    finally:
        os.close(fd)


def _finish(source: ImageSource, target: Target, key: str, partial: Path, final: Path,
            bad: dict[int, list], log: Callable[[str], None]) -> None:
    """Compact away skipped images, write labels and header, rename into place."""
    skipped = sorted(s for chunk in bad.values() for s in chunk)
    keep = np.setdiff1d(np.arange(len(source.names)), [i for i, _ in skipped])
    if len(keep) == 0:
        raise DatasetError(f"{source.root}: all {len(source.names)} images are unreadable")
    if skipped:
        _compact(partial / IMAGES, keep, target)
        log(f"data: skipped {len(skipped)} unreadable image(s), first {skipped[0][1]}")
    if source.labels is not None:
        np.save(partial / LABELS, source.labels[keep].astype(np.int32))
    header = {"format_version": FORMAT_VERSION, "gantrain_version": _version(),
              "key": key, "name": final.name, "source": str(source.root),
              "source_kind": source.kind, "fingerprint": source.fingerprint(),
              "size": list(target.size), "channels": target.channels,
              "crop": None if target.crop is None else list(target.crop),
              "count": int(len(keep)), "classes": source.classes,
              "skipped": len(skipped),
              "skipped_files": [[source.names[i], why] for i, why in skipped[:MAX_LISTED_SKIPS]],
              "layout": "NHWC uint8"}
    (partial / HEADER).write_text(json.dumps(header, indent=1))
    for leftover in (BUILD, DONE):
        (partial / leftover).unlink(missing_ok=True)
    for f in partial.iterdir():
        with f.open("rb") as fh:
            os.fsync(fh.fileno())
    if final.exists():
        stale = final.parent / f".{final.name}.stale"
        shutil.rmtree(stale, ignore_errors=True)
        os.replace(final, stale)
        shutil.rmtree(stale, ignore_errors=True)
    os.replace(partial, final)
    fd = os.open(final.parent, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _compact(images: Path, keep: np.ndarray, target: Target) -> None:
    """Move the kept rows down over the skipped ones (in place, in blocks) and truncate."""
    h, w = target.size
    count = os.path.getsize(images) // target.row_bytes
    pixels = np.memmap(images, np.uint8, "r+", shape=(count, h, w, target.channels))
    block = 1024
    for dst in range(0, len(keep), block):
        rows = keep[dst : dst + block]
        pixels[dst : dst + len(rows)] = pixels[rows]  # rows >= dst: read before overwritten
    pixels.flush()
    del pixels
    os.truncate(images, len(keep) * target.row_bytes)


def _write_error(exc: OSError, final: Path, nbytes: int) -> DatasetError:
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        free = shutil.disk_usage(final.parent).free if final.parent.exists() else 0
        return DatasetError(
            f"disk full while preparing {final}: the images need {nbytes / 1e6:.1f} MB, "
            f"{free / 1e6:.1f} MB are free; nothing was cached. Free space, or put the cache "
            f"on a larger disk (data.args.cache_dir, --cache-dir or $GANTRAIN_DATA_CACHE)")
    return DatasetError(f"could not write the prepared dataset {final}: {exc}; nothing was "
                        "cached")


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("gantrain")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "unknown"
