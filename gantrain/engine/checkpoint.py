"""Checkpoints: every player's full state plus the loop's host state, written atomically.

Layout of ``<run>/checkpoints/``::

    step_00001000/          one complete checkpoint
        G.ckpt, D.ckpt      each player's Parameters (weights, BatchNorm statistics, optimizer
                            moments and counters, transform state); one file per player because
                            two optimizers both own a ``global_step``
                            (docs/mindspore-notes.md, item 19)
        state.json          loop state (iteration, RNG, data position) and extras
    latest                  name of the newest complete checkpoint, replaced atomically

A checkpoint directory is written under a temporary name, fsynced, then renamed, and ``latest``
moves only after that, so a crash never leaves a half-written checkpoint as ``latest``.
Restoring writes values in place with ``ops.assign``, which compiled graphs see
(docs/mindspore-notes.md, item 11: ``load_param_into_net`` after a graph compiled is silently
ignored by it).
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import mindspore as ms
import numpy as np
from mindspore import Parameter, Tensor, ops

LATEST = "latest"


class CheckpointError(ValueError):
    """A checkpoint that is missing, corrupt, or belongs to a different model."""


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_tree(path: Path) -> None:
    for f in path.iterdir():
        with f.open("rb") as fh:
            os.fsync(fh.fileno())
    _fsync_dir(path)


def save_parameters(params: Iterable[Parameter], path: Path) -> None:
    ms.save_checkpoint([{"name": p.name, "data": p} for p in params], str(path))


def save(
    root: Path, name: str, players: dict[str, Sequence[Parameter]], state: dict[str, Any]
) -> Path:
    """Write checkpoint ``root/name`` atomically and point ``latest`` at it."""
    root.mkdir(parents=True, exist_ok=True)
    final = root / name
    tmp = root / f".{name}.tmp"
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir()
    try:
        for player, params in players.items():
            save_parameters(params, tmp / f"{player}.ckpt")
        (tmp / "state.json").write_text(json.dumps(state, default=_json_default))
        _fsync_tree(tmp)
    except (OSError, RuntimeError) as e:  # e.g. disk full; mindspore wraps some as RuntimeError
        shutil.rmtree(tmp, ignore_errors=True)
        previous = (root / LATEST).read_text().strip() if (root / LATEST).exists() else "none"
        raise CheckpointError(
            f"could not write checkpoint {final}: {e}; the previous checkpoint ({previous}) "
            "is untouched"
        ) from None
    if final.exists():
        shutil.rmtree(final)
    os.replace(tmp, final)
    pointer = root / f".{LATEST}.tmp"
    pointer.write_text(name)
    with pointer.open("rb") as fh:
        os.fsync(fh.fileno())
    os.replace(pointer, root / LATEST)
    _fsync_dir(root)
    return final


def _json_default(obj: Any) -> Any:
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    raise TypeError(f"cannot store {type(obj).__name__} in state.json")


PIN = "PINNED"


def prune(root: Path, keep: int) -> None:
    """Delete all but the newest ``keep`` checkpoints; never the ``latest`` one, nor one that
    holds a ``PINNED`` file (``touch checkpoints/step_00001000/PINNED`` to keep it)."""
    for stale in root.glob(".*.tmp"):  # left by a process killed while writing
        shutil.rmtree(stale, ignore_errors=True) if stale.is_dir() else stale.unlink()
    latest = (root / LATEST).read_text().strip() if (root / LATEST).exists() else None
    steps = sorted(p for p in root.glob("step_*") if p.is_dir() and not (p / PIN).exists())
    for old in steps[:-keep] if keep > 0 else []:
        if old.name != latest:
            shutil.rmtree(old, ignore_errors=True)


def resolve(path: str | Path) -> Path:
    """A checkpoint directory from itself, a ``checkpoints`` folder or a run directory."""
    path = Path(path)
    for root in (path, path / "checkpoints"):
        if (root / LATEST).is_file():
            return root / (root / LATEST).read_text().strip()
    if (path / "state.json").is_file():
        return path
    raise CheckpointError(f"no checkpoint found at {str(path)!r} (looked for checkpoints/latest)")


def read_state(ckpt: Path) -> dict[str, Any]:
    try:
        return json.loads((ckpt / "state.json").read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise CheckpointError(f"{ckpt / 'state.json'}: unreadable ({e})") from None


def _stored_name(name: str, stored: dict) -> str:
    """``name``, or for a player's optimizer counter (``D.learning_rate``) missing from a
    checkpoint written before players prefixed them, its bare stored name (``learning_rate``)."""
    if name in stored or "." not in name:
        return name
    bare = name.split(".", 1)[1]
    return bare if "." not in bare and bare in stored else name


def load_parameters(
    params: Sequence[Parameter], path: Path, strict: bool = True, source_prefix: str = "",
    upgrade: Callable[[dict[str, Tensor]], dict[str, Tensor]] | None = None,
) -> None:
    """Restore ``params`` in place from ``path``; nothing is written unless every name and shape
    matches (``strict``) or, when not strict, every parameter in ``params`` is found.
    ``source_prefix`` reads parameter ``n`` from the stored ``source_prefix + n`` (e.g. the EMA
    averages ``ema.<name>``); ``upgrade`` maps the stored entries of an older layout to the
    current one (:meth:`gantrain.engine.player.Player.upgrade_checkpoint`)."""
    if not path.is_file():
        raise CheckpointError(f"checkpoint file {str(path)!r} is missing")
    try:
        stored = ms.load_checkpoint(str(path))
    except Exception as e:  # mindspore raises ValueError/RuntimeError on corrupt files
        raise CheckpointError(
            f"checkpoint file {str(path)!r} is corrupt or truncated: {e}"
        ) from None
    if upgrade is not None:
        stored = upgrade(stored)
    wanted = {_stored_name(source_prefix + p.name, stored): p for p in params}
    missing = sorted(set(wanted) - set(stored))
    unexpected = sorted(set(stored) - set(wanted)) if strict else []
    bad_shapes = [
        f"{n}: checkpoint {tuple(stored[n].shape)} vs model {tuple(p.shape)}"
        for n, p in wanted.items()
        if n in stored and tuple(stored[n].shape) != tuple(p.shape)
    ]
    if missing or unexpected or bad_shapes:
        parts = []
        if missing:
            parts.append(f"missing parameters: {', '.join(missing[:10])}"
                         + (f" (+{len(missing) - 10} more)" if len(missing) > 10 else ""))
        if unexpected:
            parts.append(f"unexpected parameters: {', '.join(unexpected[:10])}"
                         + (f" (+{len(unexpected) - 10} more)" if len(unexpected) > 10 else ""))
        if bad_shapes:
            parts.append("shape mismatches: " + "; ".join(bad_shapes[:10]))
        raise CheckpointError(
            f"{path} does not match the model, nothing was loaded: " + " | ".join(parts)
        )
    for name, p in wanted.items():
        value = stored[name]
        ops.assign(p, Tensor(value.asnumpy(), dtype=p.dtype))
