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
         "--set", "train.checkpoint_every=30", "--drs", "80", "--out", "r.json"],
        cwd=in_tmp, capture_output=True, text=True, timeout=600,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads((in_tmp / "r.json").read_text())
    runs = result["runs"]
    assert [(r["seed"], r["sampler"]) for r in runs] == [(0, "plain"), (0, "drs80"),
                                                         (1, "plain"), (1, "drs80")]
    for row in runs:
        assert row["total_modes"] == 8 and 0 <= row["high_quality"] <= 1
        assert row["steps"] == 30 and row["samples"] == 2500
    plain, drs = result["summary"]
    assert (plain["sampler"], drs["sampler"], plain["seeds"]) == ("plain", "drs80", [0, 1])
    hq = [r["high_quality"] for r in runs if r["sampler"] == "plain"]
    assert plain["high_quality"]["mean"] == pytest.approx(sum(hq) / 2)
    assert plain["high_quality"]["worst"] == min(hq)
    assert "| gan_2d_ring | drs80 | 2 |" in out.stdout and "published" in out.stdout


@pytest.mark.slow
def test_op_levers_check_every_variant_before_timing_it(in_tmp):
    out = subprocess.run(
        [sys.executable, str(SCRIPTS / "bench_op_levers.py"), "--groups", "leaky7", "loss_d",
         "--rounds", "1", "--calls", "1", "--out", "r.json"],
        cwd=in_tmp, capture_output=True, text=True, timeout=600,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    groups = {g["group"]: g["variants"] for g in json.loads((in_tmp / "r.json").read_text())
              ["groups"]}
    leaky = groups["leaky7"]
    # The forms that compute LeakyReLU from the same input agree bit for bit on random inputs.
    for name in ("same forward, bprop with selects", "relu(x) - 0.2 relu(-x)"):
        assert leaky[name]["rel_diff"] == 0.0 and leaky[name]["fb"] > 0
    assert leaky["mint leaky_relu"]["error"].startswith("fails:")  # no CPU kernel
    assert groups["loss_d"]["ops.softplus"]["rel_diff"] < 1e-5
    assert "| D LeakyReLU 128x7x7 | relu(x) - 0.2 relu(-x) | 0.0e+00 |" in out.stdout


@pytest.mark.slow
def test_op_table_compares_two_sides_on_the_same_function(in_tmp):
    out = subprocess.run(
        [sys.executable, str(SCRIPTS / "bench_ops.py"), "--a", "mindspore:2", "--b",
         "mindspore:1", "--rounds", "1", "--calls", "1", "--out", "r.json"],
        cwd=in_tmp, capture_output=True, text=True, timeout=600,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads((in_tmp / "r.json").read_text())
    assert (result["a"], result["b"]) == ("mindspore:2", "mindspore:1")
    assert len(result["rows"]) == 17 and all(r["same_function"] for r in result["rows"])
    assert all(r["a_fb"] > 0 and r["b_fb"] > 0 for r in result["rows"])
    assert "| D Conv 64->128 14->7 |" in out.stdout and "Largest net gaps" in out.stdout
