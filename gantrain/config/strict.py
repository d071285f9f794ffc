"""Plain data <-> dataclasses, strictly: an unknown key or a value of the wrong type is a
:class:`ConfigError` naming the key, the source and what was allowed; and dataclasses back to
plain data and TOML text (for the resolved config a run writes next to its outputs)."""

from __future__ import annotations

import dataclasses
import difflib
import typing
from typing import Any, Union


class ConfigError(ValueError):
    """A config that cannot be used; the message says where and why."""




def from_dict(cls: type, data: Any, where: str = "", source: str = "config") -> Any:
    """Build dataclass ``cls`` from ``data``; every key and type is checked."""
    label = f"[{where}]" if where else "the top level"
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: {label} must be a table, got {type(data).__name__}")
    fields = {f.name: f for f in dataclasses.fields(cls)}
    hints = typing.get_type_hints(cls)
    unknown = [k for k in data if k not in fields]
    if unknown:
        key = unknown[0]
        close = difflib.get_close_matches(key, list(fields), n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ConfigError(
            f"{source}: unknown key {_join(where, key)!r}{hint}; allowed keys in {label}: "
            f"{', '.join(fields)}"
        )
    kwargs = {}
    for name, f in fields.items():
        key = _join(where, name)
        if name not in data:
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise ConfigError(f"{source}: missing required key {key!r}")
            continue
        kwargs[name] = _convert(hints[name], data[name], key, source)
    return cls(**kwargs)


def _join(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


def _type_name(tp: Any) -> str:
    origin = typing.get_origin(tp)
    if origin is Union:
        return " or ".join(_type_name(a) for a in typing.get_args(tp))
    if origin is not None:
        return str(tp).replace("typing.", "")
    return "null" if tp is type(None) else getattr(tp, "__name__", str(tp))


def _convert(tp: Any, value: Any, key: str, source: str) -> Any:
    origin = typing.get_origin(tp)
    if dataclasses.is_dataclass(tp):
        return from_dict(tp, value, key, source)
    if origin is Union:
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if len(args) == 1 and dataclasses.is_dataclass(args[0]):
            return _convert(args[0], value, key, source)
        for arg in typing.get_args(tp):
            if arg is type(None):
                continue
            try:
                return _convert(arg, value, key, source)
            except ConfigError:
                pass
    elif origin is list:
        (item,) = typing.get_args(tp)
        if isinstance(value, list):
            return [_convert(item, v, f"{key}[{i}]", source) for i, v in enumerate(value)]
    elif origin is dict:
        if isinstance(value, dict):
            return dict(value)
    elif tp is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
    elif tp is int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    elif isinstance(value, tp):
        return value
    raise ConfigError(
        f"{source}: {key!r} must be {_type_name(tp)}, got {value!r} ({type(value).__name__})"
    )


def to_dict(config: Any) -> dict[str, Any]:
    """The config as plain data, ``None`` values dropped (TOML has no null)."""
    def clean(v: Any) -> Any:
        if isinstance(v, dict):
            return {k: clean(x) for k, x in v.items() if x is not None}
        if isinstance(v, list):
            return [clean(x) for x in v]
        return v

    return clean(dataclasses.asdict(config))


def dumps_toml(data: dict[str, Any]) -> str:
    """Write plain nested data as TOML (scalars and lists first, then sub-tables)."""
    lines: list[str] = []

    def emit(table: dict[str, Any], prefix: str) -> None:
        subtables = {k: v for k, v in table.items() if isinstance(v, dict)}
        for k, v in table.items():
            if not isinstance(v, dict):
                lines.append(f"{k} = {_toml_value(v)}")
        for k, v in subtables.items():
            name = f"{prefix}.{k}" if prefix else k
            lines.append("")
            lines.append(f"[{name}]")
            emit(v, name)

    emit(data, "")
    return "\n".join(lines).lstrip("\n") + "\n"


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    raise TypeError(f"cannot write {type(v).__name__} as TOML")
