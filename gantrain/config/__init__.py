"""Configs: the sections every recipe shares, the strict reader that refuses a key a recipe
does not read, presets and ``--set`` overrides, and the one place where config values become
engine objects (networks by import path, optimizers, transforms)."""

from .schema import RunConfig, presets, read_config
from .strict import ConfigError

__all__ = ["ConfigError", "RunConfig", "presets", "read_config"]
