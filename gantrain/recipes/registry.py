"""The recipes gantrain knows, by task name: one registration line each.

Configs are checked against the recipe their ``task`` names, so a key that recipe does not read
is refused with the list of keys it does read.
"""

from __future__ import annotations

import difflib
import sys
from pathlib import Path
from typing import Any

from ..config.schema import RunConfig, apply_override, read_config
from ..config.strict import ConfigError, defaults_of, drop_unread, from_dict
from .actor_critic import RECIPE as ACTOR_CRITIC
from .ali import RECIPE as ALI
from .base import Run
from .cyclegan import RECIPE as CYCLEGAN
from .gan import RECIPE as GAN
from .recipe import Recipe

RECIPES: dict[str, Recipe] = {}
BUILT_IN = (GAN, CYCLEGAN, ALI, ACTOR_CRITIC)


def register(recipe: Recipe) -> Recipe:
    """Make ``recipe`` available to configs with ``task = recipe.task``; returns it."""
    if not isinstance(recipe, Recipe):
        raise TypeError(f"register() takes a Recipe, got {type(recipe).__name__}")
    if not issubclass(recipe.config, RunConfig) or not issubclass(recipe.run, Run):
        raise TypeError(f"recipe {recipe.task!r}: config must subclass RunConfig and run "
                        "must subclass gantrain.recipes.base.Run")
    RECIPES[recipe.task] = recipe
    return recipe


for _recipe in BUILT_IN:
    register(_recipe)


def get_recipe(task: str, source: str = "config") -> Recipe:
    if task not in RECIPES:
        close = difflib.get_close_matches(task, list(RECIPES), n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        known = "; ".join(f"{r.task} ({r.summary})" if r.summary else r.task
                          for r in RECIPES.values())
        raise ConfigError(f"{source}: task {task!r} is not one of: {known}{hint}")
    return RECIPES[task]


def parse_config(data: dict[str, Any], source: str = "config") -> RunConfig:
    """Check raw config data against the recipe its ``task`` names (default ``gan``)."""
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: a config must be a table")
    task = data.get("task", "gan")
    if not isinstance(task, str):
        raise ConfigError(f"{source}: 'task' must be str, got {task!r}")
    recipe = get_recipe(task, source)
    return from_dict(recipe.config, data, source=source, owner=f"task {task!r}")


def load_config(spec: str, overrides: list[str] | tuple[str, ...] = ()) -> RunConfig:
    """Load a config file or preset, apply ``--set`` overrides, and check it strictly
    against its recipe."""
    data, source = read_config(spec, overrides)
    return parse_config(data, source)


def legacy_defaults() -> dict[str, Any]:
    """Every key some built-in recipe reads, with its default (nested)."""
    merged: dict[str, Any] = {}

    def merge(into: dict, new: dict) -> None:
        for k, v in new.items():
            if isinstance(v, dict) and isinstance(into.get(k), dict):
                merge(into[k], v)
            else:
                into.setdefault(k, v)

    for recipe in BUILT_IN:
        merge(merged, defaults_of(recipe.config))
    return merged


def stored_config(data: dict[str, Any], source: str,
                  overrides: list[str] | tuple[str, ...] = ()) -> RunConfig:
    """A config a run wrote (its ``config.toml`` or a checkpoint's copy), with ``--set``
    overrides checked strictly.

    Runs written before recipes had their own sections stored every key of every section;
    the keys this run's recipe does not read had no effect on it and are dropped (with a
    notice for those the user had set to something other than the default).
    """
    task = data.get("task", "gan") if isinstance(data, dict) else "gan"
    recipe = get_recipe(task, source)
    data, ignored = drop_unread(data, recipe.config, legacy_defaults())
    if ignored:
        print(f"gantrain: {source}: this run was trained by an older gantrain that ignored "
              f"{', '.join(ignored)} for task {task!r}; dropped", file=sys.stderr)
    for assignment in overrides:
        apply_override(data, assignment)
    return parse_config(data, source)


def load_stored_config(path: str | Path, overrides: list[str] | tuple[str, ...] = ()) -> RunConfig:
    """A run folder's ``config.toml`` with ``--set`` overrides (``gantrain train --resume``)."""
    data, source = read_config(str(path))
    return stored_config(data, source, overrides)


def build_run(config: RunConfig, run_dir: str | Path) -> Run:
    """The run of ``config.task`` (GAN, CycleGAN, ALI, actor-critic, ...) writing to
    ``run_dir``."""
    return get_recipe(config.task).run(config, run_dir)
