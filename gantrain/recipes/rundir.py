"""Run folders: where a new run goes, refusing to overwrite one, the resolved config it keeps,
and which config changes a resumed run may make."""

from __future__ import annotations

import hashlib
import shutil
import time
from collections.abc import Sequence
from pathlib import Path

from ..config.schema import RunConfig
from ..config.strict import ConfigError, drop_unread, dumps_toml, from_dict, to_dict
from ..engine import checkpoint
from .registry import get_recipe, legacy_defaults, stored_config

CONFIG_FILE = "config.toml"
LOG_DIR = "dist"  # the per-rank logs of a data-parallel launch, written before the run starts
# Sections whose values may change between a run and its resume without breaking it.
HARMLESS = ("train.",)


def default_run_dir(config: RunConfig, root: str | Path = "runs") -> Path:
    return Path(root) / f"{config.name}-{time.strftime('%Y%m%d-%H%M%S')}"


def benchmark_run_dir(kind: str, preset: str, seed: int, overrides: Sequence[str] = ()
                      ) -> Path:
    """``runs/<kind>-<preset>-s<seed>``, with ``-<8 hex digits>`` of the ``--set`` overrides
    when there are any: one folder per setting, so benchmarking the same preset and seed with
    other overrides in the same folder does not overwrite the first run."""
    name = f"{kind}-{preset}-s{seed}"
    if overrides:
        name += "-" + hashlib.sha1("\n".join(overrides).encode()).hexdigest()[:8]
    return Path("runs") / name


def check_run_dir_free(run_dir: Path, overwrite: bool = False) -> None:
    """Refuse a folder that already holds something (other than the logs of a data-parallel
    launch), unless the user asked to overwrite."""
    if run_dir.exists() and _contents(run_dir) and not overwrite:
        raise ConfigError(
            f"run directory {str(run_dir)!r} already holds a run; pass --resume to continue "
            "it or --overwrite to replace it"
        )


def _contents(run_dir: Path) -> list[Path]:
    return [p for p in run_dir.iterdir() if p.name != LOG_DIR]


def prepare_run_dir(run_dir: Path, config: RunConfig, overwrite: bool = False,
                    keep_logs: bool = False) -> None:
    """Create ``run_dir`` for a new run and write its resolved config. ``keep_logs`` keeps the
    ``dist/`` folder the workers of a data-parallel launch are logging into."""
    check_run_dir_free(run_dir, overwrite)
    if run_dir.exists():
        for old in _contents(run_dir) if keep_logs else [run_dir]:
            shutil.rmtree(old) if old.is_dir() else old.unlink()
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / CONFIG_FILE).write_text(dumps_toml(to_dict(config)))


def checkpoint_config(ckpt: Path) -> RunConfig:
    """The config stored in checkpoint folder ``ckpt`` (so sampling needs nothing else)."""
    return stored_config(checkpoint.read_state(ckpt)["config"], str(ckpt))


def _flatten(data: dict, prefix: str = "") -> dict[str, object]:
    out: dict[str, object] = {}
    for k, v in data.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict):
            out.update(_flatten(v, key + "."))
        else:
            out[key] = v
    return out


def config_differences(old: dict, new: dict) -> list[str]:
    a, b = _flatten(old), _flatten(new)
    return sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))


def check_resumable(run_dir: Path, config: RunConfig) -> list[str]:
    """Refuse a resume whose config changes anything structural (model, data, losses,
    optimizers); changes to ``[train]`` (steps, logging intervals) are allowed and returned."""
    ckpt = checkpoint.resolve(run_dir)
    saved = checkpoint.read_state(ckpt)["config"]
    recipe = get_recipe(config.task)
    saved, _ = drop_unread(saved, recipe.config, legacy_defaults())
    # A key added to the recipe after the checkpoint was written counts at its default: the
    # behaviour the run trained with (new keys default to the old behaviour).
    saved = to_dict(from_dict(recipe.config, saved, source=str(ckpt),
                              owner=f"task {config.task!r}"))
    changed = config_differences(saved, to_dict(config))
    structural = [k for k in changed if not k.startswith(HARMLESS)]
    if structural:
        raise ConfigError(
            f"cannot resume {run_dir}: the config changes {', '.join(structural)} since the "
            "checkpoint; only [train] settings may change on resume"
        )
    return changed
