"""Configs: strict TOML sections per recipe, presets, ``--set`` overrides, and the one place
where config values become engine objects (networks by import path, optimizers, transforms)."""

from .schema import Config, load_config, presets
from .strict import ConfigError

__all__ = ["Config", "ConfigError", "load_config", "presets"]
