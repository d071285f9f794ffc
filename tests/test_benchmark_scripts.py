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
         "--seeds", "0", "1", "--set", "train.steps=30", "--set", "train.sample_every=30",
         "--set", "train.checkpoint_every=30", "--drs", "80", "95", "--out", "r.json"],
        cwd=in_tmp, capture_output=True, text=True, timeout=600,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads((in_tmp / "r.json").read_text())
    runs = result["runs"]
    assert [(r["seed"], r["sampler"]) for r in runs] == [
        (0, "plain"), (0, "drs80"), (0, "drs95"), (1, "plain"), (1, "drs80"), (1, "drs95")]
    for row in runs:
        assert row["total_modes"] == 8 and 0 <= row["high_quality"] <= 1
        assert row["steps"] == 30 and row["samples"] == 2500
    plain, drs, _ = result["summary"]
    assert (plain["sampler"], drs["sampler"], plain["seeds"]) == ("plain", "drs80", [0, 1])
    hq = [r["high_quality"] for r in runs if r["sampler"] == "plain"]
    assert plain["high_quality"]["mean"] == pytest.approx(sum(hq) / 2)
    assert plain["high_quality"]["worst"] == min(hq)
    assert "| gan_2d_ring | drs80 | 2 |" in out.stdout and "published" in out.stdout
    assert "| gan_2d_ring | 1 | plain |" in out.stdout  # the per-run table, with wall time

    # --rescore: the same runs scored again with DRS, no training; the same seed and
    # percentile draw the same samples
    again = subprocess.run(
        [sys.executable, str(SCRIPTS / "benchmark_2d.py"), "--presets", "gan_2d_ring",
         "--seeds", "1", "--drs", "95", "--rescore", "--out", "r2.json"],
        cwd=in_tmp, capture_output=True, text=True, timeout=600,
    )
    assert again.returncode == 0, again.stderr[-3000:]
    (rescored,) = json.loads((in_tmp / "r2.json").read_text())["runs"]
    before = next(r for r in runs if (r["seed"], r["sampler"]) == (1, "drs95"))
    assert rescored["sampler"] == "drs95" and "wall_s" not in rescored
    assert rescored["high_quality"] == before["high_quality"]
    assert rescored["modes"] == before["modes"]
