"""A disk memo for arrays that are slow to make but fully determined by their inputs.

The embedded digits take ~2 s to render on the idle machine (6 s under load), at every start of
the default preset; read back from here they take milliseconds. An entry lives at
``<data cache>/<kind>/<key>.npz`` (the data cache of :func:`gantrain.data.prepared.cache_root`,
so ``$GANTRAIN_DATA_CACHE`` moves it too). The key hashes the caller's arguments together with
everything else that decides the bytes: the source file of the code that makes them, and the
numpy and Pillow versions. Editing that code or upgrading a library makes a new key, never a
stale read. An entry is written to a temporary name and renamed into place, so a reader (or a
second process building the same entry) sees a whole file or none; an unreadable entry is
rebuilt. A cache folder that cannot be written costs the speed-up only: the arrays are still
returned.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import zipfile
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from .prepared import cache_root

_CORRUPT = (OSError, ValueError, EOFError, KeyError, zipfile.BadZipFile, zlib.error)


def entry_key(args: dict[str, Any], code_file: str | os.PathLike) -> str:
    """A short hash of ``args`` (JSON-able), ``code_file``'s bytes and the library versions."""
    import PIL

    parts = {
        "args": args,
        "code": hashlib.sha256(Path(code_file).read_bytes()).hexdigest(),
        "numpy": np.__version__,
        "pillow": PIL.__version__,
    }
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:20]


def cached_arrays(
    kind: str,
    args: dict[str, Any],
    code_file: str | os.PathLike,
    build: Callable[[], dict[str, np.ndarray]],
) -> dict[str, np.ndarray]:
    """``build()``'s arrays, read from the cache when an entry for this key exists, else built
    and stored. The arrays must not be object arrays (they are read back without pickle)."""
    path = cache_root() / kind / f"{entry_key(args, code_file)}.npz"
    try:
        with np.load(path, allow_pickle=False) as stored:
            return {name: stored[name] for name in stored.files}
    except _CORRUPT:  # missing or damaged: built and (re)placed below
        pass
    arrays = build()
    _store(path, arrays)
    return arrays


def _store(path: Path, arrays: dict[str, np.ndarray]) -> None:
    """Write ``arrays`` to ``path`` atomically; give up silently when the folder is not
    writable (the cache is an optimisation)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, partial = tempfile.mkstemp(prefix=path.stem, suffix=".partial", dir=path.parent)
    except OSError:
        return
    try:
        with os.fdopen(fd, "wb") as out:
            np.savez(out, **arrays)
        os.replace(partial, path)
    except OSError:
        Path(partial).unlink(missing_ok=True)
