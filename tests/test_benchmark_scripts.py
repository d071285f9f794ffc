"""The benchmark harnesses run and report (their numbers are read by people, not asserted)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"


@pytest.mark.slow
def test_benchmark_2d_reports_modes(in_tmp):
    out = subprocess.run(
        [sys.executable, str(SCRIPTS / "benchmark_2d.py"), "--presets", "gan_2d_ring",
         "--set", "train.steps=30", "--set", "train.sample_every=30", "--out", "r.json"],
        cwd=in_tmp, capture_output=True, text=True, timeout=600,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    (row,) = json.loads((in_tmp / "r.json").read_text())
    assert row["total_modes"] == 8 and 0 <= row["high_quality"] <= 1 and row["steps"] == 30
    assert "published" in out.stdout
