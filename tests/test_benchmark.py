"""scripts/benchmark.py runs and reports every field (numbers are read by people, not asserted)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"
HAS_TORCH = importlib.util.find_spec("torch") is not None


def _positive(stats):
    return stats is not None and 0 < stats["min"] <= stats["median"] <= stats["max"]


@pytest.mark.slow
def test_benchmark_quick_on_the_2d_preset(in_tmp):
    cmd = [sys.executable, str(SCRIPTS / "benchmark.py"), "--quick", "--presets", "gan_2d_grid",
           "--out", "b.json"]
    out = subprocess.run(cmd, cwd=in_tmp, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    result = json.loads((in_tmp / "b.json").read_text())
    env = result["environment"]
    assert env["mindspore_runtime_num_threads"] >= 1 and len(env["load_average_start"]) == 3
    (row,) = result["presets"]
    assert row["preset"] == "gan_2d_grid" and row["baseline_note"] == ""
    assert _positive(row["steps_only_it_s"]) and row["outside_steps_share"] < 1
    for mode in ("loader", "memory"):
        r = row[mode]
        assert _positive(r["gantrain_it_s"]) and _positive(r["handwritten_it_s"])
        assert r["ratio_gantrain_handwritten"] > 0
        if HAS_TORCH:
            assert _positive(r["torch_it_s"]) and r["ratio_gantrain_torch"] > 0
    st = row["startup"]
    for key in ("import_s", "build_s", "time_to_first_iteration_s", "peak_rss_mb"):
        assert st[key] > 0, key
    assert st["dataset_build_s"] >= 0  # a 2D mixture builds in microseconds
    assert set(st["compile_s"]) == {"D", "G"} and all(v > 0 for v in st["compile_s"].values())
    assert "ratio a/b" in out.stdout


def test_handwritten_loop_trains_the_default_preset_as_a_run_builds_it():
    """The hand-written loop of scripts/benchmark.py builds G as a run does, its latent size
    from gan.z_dim (it once built a 100-d G from G's args for the preset's 16-d noise, and the
    harness failed on every image preset at the first step), and its G's weights move."""
    sys.path.insert(0, str(SCRIPTS))
    from bench_handwritten import Handwritten

    from gantrain.recipes.registry import load_config

    config = load_config("dcgan_digits", ["generator.args.width=8", "discriminator.args.width=8",
                                          "data.batch_size=8"])
    rng = np.random.default_rng(0)
    loop = Handwritten(config, lambda: rng.uniform(-1, 1, (8, 1, 28, 28)).astype(np.float32))
    assert loop.G.fc.weight.shape[1] == config.gan.z_dim == 16
    before = loop.G.fc.weight.asnumpy().copy()
    assert loop.run(2) > 0
    assert not np.array_equal(before, loop.G.fc.weight.asnumpy())
