"""The supported Python and MindSpore versions: one clear message for anything else, and the
ranges in gantrain/engine/runtime.py agree with pyproject.toml."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from gantrain.engine import runtime

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("version", ["(3, 9, 18)", "(3, 13, 0)"])
def test_import_gantrain_names_an_unsupported_python_and_the_range(version, tmp_path):
    code = f"import sys; sys.version_info = {version} + ('final', 0); import gantrain"
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                         text=True, timeout=60, env={"PYTHONPATH": str(ROOT), "PATH": ""})
    assert out.returncode != 0
    message = out.stderr.strip().splitlines()[-1]
    found = version.strip("()").replace(", ", ".")
    assert message == (f"ImportError: gantrain supports Python 3.10 to 3.12 (the versions it is "
                       f"tested on with mindspore 2.10), but this is Python {found}.")


@pytest.mark.parametrize("version, ok", [((3, 10, 0), True), ((3, 12, 9), True),
                                         ((3, 9, 18), False), ((3, 13, 0), False)])
def test_python_range_boundaries(monkeypatch, version, ok):
    monkeypatch.setattr(runtime, "_python_version", lambda: version)
    if ok:
        runtime.prepare_environment()
    else:
        with pytest.raises(ImportError, match=r"supports Python 3\.10 to 3\.12"):
            runtime.prepare_environment()


@pytest.mark.parametrize("found", ["2.9.0", "2.11.0", "2.3.1", "3.0.0rc1"])
def test_setup_names_an_unsupported_mindspore_and_how_to_install_the_right_one(monkeypatch,
                                                                               found):
    monkeypatch.setattr(runtime, "_mindspore_version", lambda: found)
    with pytest.raises(RuntimeError) as e:
        runtime.setup("CPU", 0)
    assert str(e.value) == (
        f"gantrain needs mindspore 2.10.x (mindspore>=2.10,<2.11), but mindspore {found} is "
        'installed; install the supported version with: pip install "mindspore>=2.10,<2.11"')


@pytest.mark.parametrize("found", ["2.10.0", "2.10.1", "2.10.0rc1"])
def test_mindspore_2_10_is_accepted(monkeypatch, found):
    monkeypatch.setattr(runtime, "_mindspore_version", lambda: found)
    runtime.check_mindspore()


def test_the_installed_versions_are_supported():
    runtime.check_python()
    runtime.check_mindspore()
    assert runtime._mindspore_version().startswith("2.10.")


def test_pyproject_declares_the_same_ranges():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    (lo_major, lo_minor), (hi_major, hi_minor) = runtime.PYTHON_RANGE
    assert project["requires-python"] == f">={lo_major}.{lo_minor},<{hi_major}.{hi_minor + 1}"
    assert runtime.MINDSPORE_REQUIREMENT in project["dependencies"]


@pytest.mark.parametrize("value", ["1", "true"])
def test_mindspore_compile_cache_is_turned_off_with_a_warning(monkeypatch, value):  # notes 29
    monkeypatch.setenv("MS_COMPILER_CACHE_ENABLE", value)
    with pytest.warns(RuntimeWarning, match="item 29"):
        runtime.prepare_environment()
    assert os.environ["MS_COMPILER_CACHE_ENABLE"] == "0"
