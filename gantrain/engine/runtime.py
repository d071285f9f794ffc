"""Process-wide MindSpore setup, owned in one place so users never meet its silent traps.

Importing :mod:`gantrain` calls :func:`prepare_environment` before anything imports mindspore.
It first refuses a Python outside the tested range, then sets:

* ``ONEDNN_MAX_CPU_ISA=AVX2``: the oneDNN bundled with mindspore picks a reference convolution
  kernel on AVX-512 CPUs, ~100x slower; AVX2 takes the JIT GEMM path (same results to ~1e-6).
  A value the user set is kept.
* ``GLOG_v=3``: MindSpore's C++ warnings stay out of the terminal (errors still show).
* ``MS_OM_PATH``: failed graph compiles write ``rank_0/om/analyze_fail.ir``; they go to a temp
  folder instead of the user's working directory.
* ``MS_COMPILER_CACHE_ENABLE=0``, with a warning, when the user turned MindSpore's compile cache
  on: a cached ``@ms.jit`` function (every player step) is loaded with unbound weights and
  trains on NaN, and the cache is keyed by source files, not shapes (docs/mindspore-notes.md,
  item 29).

:func:`setup` leaves mindspore's inter-op scheduling at its default on purpose:
``inter_op_parallel_num=1`` made DCGAN steps 1.09x faster on the idle machine (1.46x under
load), but a run resumed from a checkpoint then no longer matched the uninterrupted run bit for
bit (tests/test_resume.py, mixture case), so exact resume wins (docs/performance.md, "Levers").
The cause is MindSpore's kernels, not our graphs: with both threads per kernel their reductions
split differently (docs/mindspore-notes.md, item 28).
:func:`setup` also refuses a mindspore outside the tested range before importing it.
"""

from __future__ import annotations

import importlib.metadata
import os
import re
import sys
import tempfile
import warnings
from collections.abc import Callable
from typing import Any

DEVICES = ("CPU", "GPU", "Ascend")
# MindSpore's graph optimisation levels: O0 compiles each op as written; O1 adds its operator
# fusion (experimental in 2.10). On CPU O1 gives O0's bits (docs/mindspore-notes.md, item 34)
# but no measurable speed-up on our presets (docs/performance.md), so O0 is every preset's.
JIT_LEVELS = ("O0", "O1")
# The versions gantrain is tested with (keep in step with pyproject.toml): mindspore 2.10.x ships
# wheels for CPython 3.10 to 3.12, and the code relies on 2.10's behaviour
# (docs/mindspore-notes.md).
PYTHON_RANGE = ((3, 10), (3, 12))
MINDSPORE_REQUIREMENT = "mindspore>=2.10,<2.11"
MINDSPORE_MINOR = (2, 10)
_ENV_DEFAULTS = {
    "ONEDNN_MAX_CPU_ISA": "AVX2",
    "GLOG_v": "3",
    "MS_OM_PATH": os.path.join(tempfile.gettempdir(), f"gantrain-mindspore-{os.getuid()}"),
}


def _python_version() -> tuple[int, ...]:
    return tuple(sys.version_info[:3])


def check_python() -> None:
    """Raise ImportError with one sentence when this interpreter is outside ``PYTHON_RANGE``."""
    version = _python_version()
    (lo_major, lo_minor), (hi_major, hi_minor) = PYTHON_RANGE
    if not PYTHON_RANGE[0] <= version[:2] <= PYTHON_RANGE[1]:
        raise ImportError(
            f"gantrain supports Python {lo_major}.{lo_minor} to {hi_major}.{hi_minor} (the "
            f"versions it is tested on with mindspore 2.10), but this is Python "
            f"{'.'.join(map(str, version))}."
        )


def _mindspore_version() -> str | None:
    """The installed mindspore's version, read without importing it (None: not found)."""
    try:
        return importlib.metadata.version("mindspore")
    except importlib.metadata.PackageNotFoundError:
        return None


def check_mindspore() -> None:
    """Raise RuntimeError naming the installed and the supported mindspore versions, and how to
    install the right one, when the installed mindspore is not 2.10.x."""
    found = _mindspore_version()
    if found is None:  # not installed as a distribution: importing it will say what is wrong
        return
    match = re.match(r"(\d+)\.(\d+)", found)
    if match is None or (int(match[1]), int(match[2])) != MINDSPORE_MINOR:
        raise RuntimeError(
            f"gantrain needs mindspore 2.10.x ({MINDSPORE_REQUIREMENT}), but mindspore {found} "
            f"is installed; install the supported version with: "
            f"pip install \"{MINDSPORE_REQUIREMENT}\""
        )


def prepare_environment() -> None:
    """Check the interpreter and set gantrain's environment defaults; must run before mindspore
    is first imported."""
    check_python()
    if "mindspore" in sys.modules and "ONEDNN_MAX_CPU_ISA" not in os.environ:
        warnings.warn(
            "mindspore was imported before gantrain, so ONEDNN_MAX_CPU_ISA=AVX2 came too late: "
            "convolutions may run ~100x slower on AVX-512 CPUs. Import gantrain first or export "
            "ONEDNN_MAX_CPU_ISA=AVX2.",
            RuntimeWarning,
            stacklevel=3,
        )
    for key, value in _ENV_DEFAULTS.items():
        os.environ.setdefault(key, value)
    if os.environ.get("MS_COMPILER_CACHE_ENABLE", "0") not in ("", "0"):
        warnings.warn(
            "MS_COMPILER_CACHE_ENABLE is turned off for gantrain: MindSpore 2.10 loads a cached "
            "@ms.jit step with unbound weights (NaN results) and does not key the cache on "
            "shapes (docs/mindspore-notes.md, item 29).",
            RuntimeWarning,
            stacklevel=3,
        )
        os.environ["MS_COMPILER_CACHE_ENABLE"] = "0"


_device: str | None = None  # what setup() last passed to ms.set_device
_jit_level = "O0"  # what setup() last chose, for jit()


def setup(device: str = "CPU", seed: int | None = 0, jit_level: str = "O0") -> None:
    """Choose the device and the level :func:`jit` compiles at, and seed mindspore's global RNG
    (numpy RNGs are owned by the loop)."""
    check_mindspore()
    import mindspore as ms

    global _device, _jit_level
    if device not in DEVICES:
        raise ValueError(f"device must be one of {DEVICES}, got {device!r}")
    if jit_level not in JIT_LEVELS:
        raise ValueError(f"jit_level must be one of {JIT_LEVELS}, got {jit_level!r}")
    _jit_level = jit_level
    if device != _device:  # once set, mindspore refuses set_device after communication.init()
        ms.set_device(device)
        _device = device
    ms.set_context(mode=ms.PYNATIVE_MODE)  # our steps are compiled explicitly with @ms.jit
    if seed is not None:
        ms.set_seed(seed)


def jit(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``ms.jit(fn)`` at the ``jit_level`` of the last :func:`setup`: how the player steps, the
    fused iterations and the samplers compile."""
    import mindspore as ms

    return ms.jit(fn, jit_level=_jit_level)
