"""Load networks by import path, the one mechanism for built-in and user models.

``"models.dcgan:Generator"`` imports a module; ``"path/to/nets.py:MyG"`` loads a file. The
config's kwargs are checked against the constructor's signature before anything is built.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import sys
from pathlib import Path
from typing import Any

from .schema import ConfigError

LEGACY_PREFIX = "models."


def reference_module(where: str) -> str:
    """``models.dcgan`` (the reference networks' import path before they moved into the
    package) -> ``gantrain.models.dcgan``, so existing configs and run folders keep working.
    Any other module path, a user's own ``models`` package included, is imported as given."""
    if where.startswith(LEGACY_PREFIX):
        leaf = where[len(LEGACY_PREFIX):]
        if importlib.util.find_spec(f"gantrain.models.{leaf.split('.')[0]}") is not None:
            return f"gantrain.models.{leaf}"
    return where


def load_object(spec: str, role: str = "object") -> Any:
    """Resolve ``module.path:Name`` or ``file.py:Name``."""
    if ":" not in spec:
        raise ConfigError(f"{role}: {spec!r} is not an import path like 'models.mlp:Generator'")
    where, name = spec.rsplit(":", 1)
    if where.endswith(".py"):
        module = _load_file(Path(where), role)
    else:
        try:
            module = importlib.import_module(reference_module(where))
        except ModuleNotFoundError as e:
            raise ConfigError(f"{role}: cannot import module {where!r} of {spec!r}: {e}") from None
    try:
        return getattr(module, name)
    except AttributeError:
        public = sorted(n for n in dir(module) if not n.startswith("_"))
        raise ConfigError(
            f"{role}: {where!r} has no attribute {name!r}; it defines: {', '.join(public)}"
        ) from None


_NOTIFIED: set[Path] = set()  # model files outside the working directory already announced


def _notice_outside_cwd(path: Path) -> None:
    """Say once per file, on stderr, that code from outside the working directory tree is run:
    a run folder or config names its model files, and resuming, sampling or evaluating it
    imports and executes them."""
    resolved = path.resolve()
    if resolved in _NOTIFIED or resolved.is_relative_to(Path.cwd().resolve()):
        return
    _NOTIFIED.add(resolved)
    print(f"gantrain: importing model code from {resolved}, outside the current directory. "
          "Run folders and configs run the model code they name; only use ones you trust.",
          file=sys.stderr)


def _load_file(path: Path, role: str) -> Any:
    if not path.is_file():
        raise ConfigError(f"{role}: model file {str(path)!r} does not exist")
    module_name = f"gantrain_user_{path.stem}_{abs(hash(str(path.resolve())))}"
    if module_name in sys.modules:
        return sys.modules[module_name]
    _notice_outside_cwd(path)
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as e:  # the user's code failed: name the file, keep no half-run module
        del sys.modules[module_name]
        raise ConfigError(f"{role}: importing model file {str(path)!r} failed: "
                          f"{type(e).__name__}: {e}") from e
    return module


def check_kwargs(fn: Any, kwargs: dict[str, Any], role: str) -> None:
    """Raise a ConfigError naming any kwarg ``fn`` does not accept, or a missing one."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return
    try:
        sig.bind(**kwargs)
    except TypeError as e:
        accepted = [p for p in sig.parameters if p not in ("self", "args", "kwargs")]
        raise ConfigError(f"{role}: {e}; it accepts: {', '.join(accepted)}") from None


def build_cell(spec: str, kwargs: dict[str, Any], role: str) -> Any:
    """Build an ``nn.Cell`` from an import path and kwargs, with errors that name the role."""
    from mindspore import nn

    factory = load_object(spec, role)
    if not callable(factory):
        raise ConfigError(f"{role}: {spec!r} is not callable")
    check_kwargs(factory, kwargs, f"{role} {spec}")
    try:
        cell = factory(**kwargs)
    except (ValueError, TypeError) as e:
        raise ConfigError(f"{role} {spec}: {e}") from None
    if not isinstance(cell, nn.Cell):
        raise ConfigError(f"{role}: {spec!r} built a {type(cell).__name__}, not an nn.Cell")
    return cell


def takes_argument(fn: Any, name: str) -> bool:
    """Whether ``fn`` (a function or a class) has a parameter called ``name``."""
    try:
        return name in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
