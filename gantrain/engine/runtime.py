"""Process-wide MindSpore setup, owned in one place so users never meet its silent traps.

Importing :mod:`gantrain` calls :func:`prepare_environment` before anything imports mindspore:

* ``ONEDNN_MAX_CPU_ISA=AVX2``: the oneDNN bundled with mindspore picks a reference convolution
  kernel on AVX-512 CPUs, ~100x slower; AVX2 takes the JIT GEMM path (same results to ~1e-6).
  A value the user set is kept.
* ``GLOG_v=3``: MindSpore's C++ warnings stay out of the terminal (errors still show).
* ``MS_OM_PATH``: failed graph compiles write ``rank_0/om/analyze_fail.ir``; they go to a temp
  folder instead of the user's working directory.

:func:`setup` leaves mindspore's inter-op scheduling at its default on purpose:
``inter_op_parallel_num=1`` made DCGAN steps 1.09x faster on the idle machine (1.46x under
load), but a run resumed from a checkpoint then no longer matched the uninterrupted run bit for
bit (tests/test_resume.py, mixture case), so exact resume wins (docs/performance.md, "Levers").
"""

from __future__ import annotations

import os
import sys
import tempfile
import warnings

DEVICES = ("CPU", "GPU", "Ascend")
_ENV_DEFAULTS = {
    "ONEDNN_MAX_CPU_ISA": "AVX2",
    "GLOG_v": "3",
    "MS_OM_PATH": os.path.join(tempfile.gettempdir(), f"gantrain-mindspore-{os.getuid()}"),
}


def prepare_environment() -> None:
    """Set gantrain's environment defaults; must run before mindspore is first imported."""
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


def setup(device: str = "CPU", seed: int | None = 0) -> None:
    """Choose the device and seed mindspore's global RNG (numpy RNGs are owned by the loop)."""
    import mindspore as ms

    if device not in DEVICES:
        raise ValueError(f"device must be one of {DEVICES}, got {device!r}")
    ms.set_device(device)
    ms.set_context(mode=ms.PYNATIVE_MODE)  # our steps are compiled explicitly with @ms.jit
    if seed is not None:
        ms.set_seed(seed)
