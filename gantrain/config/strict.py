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


def from_dict(cls: type, data: Any, where: str = "", source: str = "config",
              owner: str = "") -> Any:
    """Build dataclass ``cls`` from ``data``; every key and type is checked.

    ``owner`` names who reads the config (e.g. ``task 'cyclegan'``); an unknown key is then
    reported as one that owner would not read, with the keys it does read.
    """
    label = f"[{where}]" if where else "the top level"
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: {label} must be a table, got {type(data).__name__}")
    fields = {f.name: f for f in dataclasses.fields(cls)}
    hints = typing.get_type_hints(cls)
    unknown = [k for k in data if k not in fields]
    if unknown:
        keys = ", ".join(repr(_join(where, k)) for k in unknown)
        close = difflib.get_close_matches(unknown[0], list(fields), n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        who = f"{owner} does not read" if owner else "unknown key"
        raise ConfigError(
            f"{source}: {who} {keys}{hint}; the keys it reads in {label}: {', '.join(fields)}"
            if owner else
            f"{source}: unknown key {keys}{hint}; allowed keys in {label}: {', '.join(fields)}"
        )
    kwargs = {}
    for name, f in fields.items():
        key = _join(where, name)
        if name not in data:
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise ConfigError(f"{source}: missing required key {key!r}"
                                  + (f" ({owner} needs it)" if owner else ""))
            continue
        kwargs[name] = _convert(hints[name], data[name], key, source, owner)
    return cls(**kwargs)


def defaults_of(cls: type) -> dict[str, Any]:
    """The default value of every key of ``cls`` that has one, nested like the config."""
    out: dict[str, Any] = {}
    hints = typing.get_type_hints(cls)
    for f in dataclasses.fields(cls):
        if f.default is not dataclasses.MISSING:
            if f.default is not None:
                out[f.name] = f.default
        elif f.default_factory is not dataclasses.MISSING:
            value = f.default_factory()
            out[f.name] = to_dict(value) if dataclasses.is_dataclass(value) else value
        else:
            tp = _dataclass_in(hints[f.name])
            if tp is not None:
                out[f.name] = defaults_of(tp)
    return out


def _dataclass_in(tp: Any) -> type | None:
    if dataclasses.is_dataclass(tp):
        return tp
    args = [a for a in typing.get_args(tp) if a is not type(None)]
    return args[0] if len(args) == 1 and dataclasses.is_dataclass(args[0]) else None


def drop_unread(data: dict[str, Any], cls: type, defaults: dict[str, Any],
                where: str = "") -> tuple[dict[str, Any], list[str]]:
    """``data`` without the keys ``cls`` does not read, and those of the dropped keys whose
    value is not their default in ``defaults`` (nested defaults some recipe gives them).

    For configs a run wrote itself: before recipes had their own sections, gantrain stored
    every key of every section, and a key the recipe did not read had no effect on that run,
    whatever its value. Configs a user writes are checked strictly instead.
    """
    fields = {f.name: f for f in dataclasses.fields(cls)}
    hints = typing.get_type_hints(cls)
    out: dict[str, Any] = {}
    changed: list[str] = []
    for key, value in data.items():
        dotted = _join(where, key)
        default = defaults.get(key, _NO_DEFAULT) if isinstance(defaults, dict) else _NO_DEFAULT
        if key not in fields:
            changed += _non_default(value, default, dotted)
            continue
        inner = _dataclass_in(hints[key])
        if inner is not None and isinstance(value, dict):
            out[key], more = drop_unread(value, inner, default if isinstance(default, dict)
                                         else {}, dotted)
            changed += more
        else:
            out[key] = value
    return out, changed


def _non_default(value: Any, default: Any, dotted: str) -> list[str]:
    if isinstance(value, dict):
        inner = default if isinstance(default, dict) else {}
        return [k for key, v in value.items()
                for k in _non_default(v, inner.get(key, _NO_DEFAULT), f"{dotted}.{key}")]
    return [] if value == default else [f"{dotted} = {value!r}"]


_NO_DEFAULT = object()


def _join(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


def _type_name(tp: Any) -> str:
    origin = typing.get_origin(tp)
    if origin is Union:
        return " or ".join(_type_name(a) for a in typing.get_args(tp))
    if origin is not None:
        return str(tp).replace("typing.", "")
    return "null" if tp is type(None) else getattr(tp, "__name__", str(tp))


def _convert(tp: Any, value: Any, key: str, source: str, owner: str = "") -> Any:
    origin = typing.get_origin(tp)
    if dataclasses.is_dataclass(tp):
        return from_dict(tp, value, key, source, owner)
    if origin is Union:
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if len(args) == 1 and dataclasses.is_dataclass(args[0]):
            return _convert(args[0], value, key, source, owner)
        for arg in typing.get_args(tp):
            if arg is type(None):
                continue
            try:
                return _convert(arg, value, key, source, owner)
            except ConfigError:
                pass
    elif origin is list:
        (item,) = typing.get_args(tp)
        if isinstance(value, list):
            return [_convert(item, v, f"{key}[{i}]", source, owner) for i, v in enumerate(value)]
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
