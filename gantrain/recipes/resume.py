"""Which config changes a resumed run may make."""

from __future__ import annotations

from pathlib import Path

from ..config.schema import Config, ConfigError, to_dict
from ..engine import checkpoint

# Sections whose values may change between a run and its resume without breaking it.
HARMLESS = ("train.",)


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


def check_resumable(run_dir: Path, config: Config) -> list[str]:
    """Refuse a resume whose config changes anything structural (model, data, losses,
    optimizers); changes to ``[train]`` (steps, logging intervals) are allowed and returned."""
    ckpt = checkpoint.resolve(run_dir)
    saved = checkpoint.read_state(ckpt)["config"]
    changed = config_differences(saved, to_dict(config))
    structural = [k for k in changed if not k.startswith(HARMLESS)]
    if structural:
        raise ConfigError(
            f"cannot resume {run_dir}: the config changes {', '.join(structural)} since the "
            "checkpoint; only [train] settings may change on resume"
        )
    return changed
