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
        assert "recon_mse" not in row  # a GAN has no encoder: no reconstruction column
    plain, drs, _ = result["summary"]
    assert (plain["sampler"], drs["sampler"], plain["seeds"]) == ("plain", "drs80", [0, 1])
    hq = [r["high_quality"] for r in runs if r["sampler"] == "plain"]
    assert plain["high_quality"]["mean"] == pytest.approx(sum(hq) / 2)
    assert plain["high_quality"]["worst"] == min(hq)
    assert "| gan_2d_ring | drs80 | 2 |" in out.stdout and "published" in out.stdout
    assert "| gan_2d_ring | 1 | plain |" in out.stdout  # the per-run table, with wall time

    # --rescore: the same runs scored again with DRS and the raw generator, no training; the
    # same seed and percentile draw the same samples
    again = subprocess.run(
        [sys.executable, str(SCRIPTS / "benchmark_2d.py"), "--presets", "gan_2d_ring",
         "--seeds", "1", "--drs", "95", "--no-ema", "--rescore", "--out", "r2.json",
         "--set", "train.steps=30", "--set", "train.sample_every=30",
         "--set", "train.checkpoint_every=30"],  # the same overrides name the same run folder
        cwd=in_tmp, capture_output=True, text=True, timeout=600,
    )
    assert again.returncode == 0, again.stderr[-3000:]
    raw, rescored = json.loads((in_tmp / "r2.json").read_text())["runs"]
    assert raw["sampler"] == "no-ema" and raw["samples"] == 2500 and raw["total_modes"] == 8
    before = next(r for r in runs if (r["seed"], r["sampler"]) == (1, "drs95"))
    assert rescored["sampler"] == "drs95" and "wall_s" not in rescored
    assert rescored["high_quality"] == before["high_quality"]
    assert rescored["modes"] == before["modes"]
    assert "nan" not in again.stdout  # no training, no wall time: the summary shows "-"


@pytest.mark.slow
def test_benchmark_2d_scores_an_ali_run_with_its_own_sampler(in_tmp):
    """ALI runs are scored through ALI's sampler (its G lives in the GE player): the raw
    generator, and DRS and MH on the unary D's x-only score; a D that judges pairs only has no
    such score, and --drs is refused by name before anything trains."""
    tiny = ["--set", "train.steps=20", "--set", "train.sample_every=20",
            "--set", "train.checkpoint_every=20"]
    cmd = [sys.executable, str(SCRIPTS / "benchmark_2d.py"), "--presets", "ali_2d_ring",
           "--seeds", "3", "--drs", "80", *tiny]
    out = subprocess.run(cmd + ["--no-ema", "--mh", "5", "--out", "r.json"], cwd=in_tmp,
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    plain, raw, drs, mh = json.loads((in_tmp / "r.json").read_text())["runs"]
    assert [r["sampler"] for r in (plain, raw, drs, mh)] == ["plain", "no-ema", "drs80", "mh5"]
    assert raw["samples"] == drs["samples"] == mh["samples"] == 2500 and raw["total_modes"] == 8
    assert raw["reverse_kl"] != plain["reverse_kl"]  # EMA and raw weights draw apart
    # G(E(x)) against x, and against another example: the run's last evaluation, then 2,500
    run = in_tmp / next((in_tmp / "runs").glob("bench2d-ali_2d_ring-s3-*"))
    logged = [json.loads(x) for x in (run / "metrics.jsonl").read_text().splitlines()]
    last = [r for r in logged if "eval/recon_mse" in r][-1]
    assert plain["recon_mse"] == last["eval/recon_mse"]
    assert plain["recon_mse_shuffled"] == last["eval/recon_mse_shuffled"]
    assert plain["mode_match"] == last["eval/mode_match"]
    assert all(r["recon_mse"] > 0 and r["recon_mse_shuffled"] > 0 for r in (raw, drs, mh))
    assert all(0 <= r["mode_match"] <= 1 for r in (plain, raw, drs, mh))
    assert raw["recon_mse"] != plain["recon_mse"]  # other examples, other weights
    assert "reconstruction mse" in out.stdout and "another example's" in out.stdout
    assert "in their input's mode" in out.stdout and "| mode kept (worst) |" in out.stdout
    refused = subprocess.run(cmd + ["--set", "discriminator.args.unary=false", "--out", "r2.json"],
                             cwd=in_tmp, capture_output=True, text=True, timeout=600)
    assert refused.returncode == 2
    assert ("ali_2d_ring: --drs on an ALI run needs a discriminator that scores x alone"
            in refused.stderr)
    assert not (in_tmp / "r2.json").exists()


@pytest.mark.slow  # trains the evaluation classifier, two tiny DCGANs and two tiny ALIs
def test_benchmark_images_scores_every_seed_and_sampler(in_tmp):
    tiny = ["data.args.n=256", "generator.args.width=8", "discriminator.args.width=8",
            "train.steps=10", "train.sample_every=10", "train.checkpoint_every=10"]
    cmd = [sys.executable, str(SCRIPTS / "benchmark_images.py"), "--seeds", "0", "1",
           "--presets", "dcgan_digits", "ali_digits", "--n", "300", "--no-ema", "--out",
           "r.json", "--classifier-epochs", "1"]
    for o in tiny:
        cmd += ["--set", o]
    out = subprocess.run(cmd, cwd=in_tmp, capture_output=True, text=True, timeout=900)
    assert out.returncode == 0, out.stderr[-3000:]
    classifier = json.loads((in_tmp / "classifiers" / "digits" / "classifier.json").read_text())
    assert classifier["epochs"] == 1  # --classifier-epochs; 3 by default
    result = json.loads((in_tmp / "r.json").read_text())
    runs = [r for r in result["runs"] if r["preset"] == "dcgan_digits"]
    assert [(r["seed"], r["sampler"]) for r in runs] == [
        (0, "ema"), (0, "raw"), (1, "ema"), (1, "raw")]
    ali = [r for r in result["runs"] if r["preset"] == "ali_digits"]
    # ali_digits keeps no EMA weights: one "raw" row per seed, not a mislabelled "ema" twin
    assert [(r["seed"], r["sampler"]) for r in ali] == [(0, "raw"), (1, "raw")]
    assert all(0 <= r["class_match"] <= 1 for r in ali)
    assert all(r["real_vs_real"]["recon_accuracy"] > 0.5 for r in ali)  # the classifier's
    assert "| ali_digits | raw | 2 | " in out.stdout and "class kept by G(E(x))" in out.stdout
    for r in runs:
        assert r["steps"] == 10 and r["samples"] == 300
        assert 0 <= r["precision"] <= 1 and 0 <= r["classes_covered"] <= 10
        assert r["fd"] > r["real_vs_real"]["fd"] > 0  # 10 steps are far from the data
        assert Path(in_tmp / r["grid"]).is_file()
    ema = result["summary"][0]
    fds = [r["fd"] for r in runs if r["sampler"] == "ema"]
    assert (ema["sampler"], ema["seeds"]) == ("ema", [0, 1])
    assert ema["fd"]["mean"] == pytest.approx(sum(fds) / 2) and ema["fd"]["worst"] == max(fds)
    assert "| dcgan_digits | raw | 2 |" in out.stdout

    # --rescore: the same runs scored again without training give the same figures
    again = subprocess.run(
        [sys.executable, str(SCRIPTS / "benchmark_images.py"), "--seeds", "1", "--n", "300",
         "--rescore", "--dot", "3", "--mh", "3", "--truncation", "1", "--out", "r2.json",
         *sum([["--set", o] for o in tiny], [])],
        cwd=in_tmp, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr[-3000:]
    rescored, moved, chained, truncated = json.loads((in_tmp / "r2.json").read_text())["runs"]
    before = runs[2]
    assert "wall_s" not in rescored
    assert (rescored["fd"], rescored["precision"]) == (before["fd"], before["precision"])
    # --dot: the same noise moved by discriminator optimal transport, scored as its own sampler
    assert (moved["sampler"], moved["seed"]) == ("ema-dot3", 1) and moved["fd"] != before["fd"]
    assert "| dcgan_digits | ema-dot3 | 1 |" in again.stdout
    # --mh: the ends of Metropolis-Hastings chains on the (hinge) critic, calibrated
    assert chained["sampler"] == "ema-mh3" and chained["fd"] != before["fd"]
    # --truncation: noise entries above 1 redrawn, as gantrain sample --truncation 1
    assert truncated["sampler"] == "ema-trunc1" and truncated["fd"] != before["fd"]

    # a Stacked MNIST preset is scored by modes, KL and confident share beside real stacked digits
    stacked = [sys.executable, str(SCRIPTS / "benchmark_images.py"), "--presets",
               "stacked_mnist_dcgan", "--seeds", "0", "--n", "300", "--out", "r3.json"]
    for o in [*tiny, "data.args.digits=500"]:
        stacked += ["--set", o]
    out = subprocess.run(stacked, cwd=in_tmp, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    (row,) = json.loads((in_tmp / "r3.json").read_text())["runs"]
    assert "fd" not in row and row["samples"] == 300 and 0 <= row["confident"] <= 1
    assert 0 <= row["modes"] <= 300 and row["stacked_kl"] >= 0
    real = row["real_vs_real"]
    assert real["confident"] > 0.9 and real["modes"] > row["modes"]  # 10 steps make no digits
    assert "| stacked_mnist_dcgan | ema | 1 |" in out.stdout and "confident share" in out.stdout


@pytest.mark.slow  # two fresh processes building and compiling a small DCGAN
def test_bench_startup_compares_cold_and_warm_data_cache_with_rss_stages(in_tmp):
    small = ["data.args.n=256", "generator.args.width=8", "discriminator.args.width=8"]
    cmd = [sys.executable, str(SCRIPTS / "bench_startup.py"), "dcgan_digits", "--iters", "1",
           "--compare", "1"]
    for o in small:
        cmd += ["--set", o]
    out = subprocess.run(cmd, cwd=in_tmp, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    cold, warm, summary = (json.loads(line) for line in out.stdout.strip().splitlines()[-3:])
    assert (cold["cache"], warm["cache"]) == ("cold", "warm")
    stages = ["python", "import", "dataset", "build", "compile_D", "compile_G",
              "first_iteration", "iteration_2", "end_of_run"]
    for row in (cold, warm):
        assert list(row["rss_mb"]) == stages
        for r in row["rss_mb"].values():
            assert abs(r["anon"] + r["file"] - r["rss"]) < 1  # RssShmem is ~0 here
        assert row["rss_mb"]["import"]["rss"] > row["rss_mb"]["python"]["rss"]
        assert row["peak_rss_mb"] >= row["rss_mb"]["end_of_run"]["rss"] - 1
        assert row["dataset_mb"] == pytest.approx(256 * 28 * 28 * 4 / 2**20, abs=0.1)
        assert row["time_to_first_iteration_s"] > row["import_s"] > 0
    assert summary["cold"]["dataset_build_s"] == [cold["dataset_build_s"]]
    assert len(summary["load_average_before"]) == 3


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


def test_benchmark_runs_with_other_overrides_get_their_own_folders():
    """Two settings of one preset and seed benchmarked in one folder must not overwrite each
    other's runs (--rescore finds a run by the same overrides)."""
    from gantrain.recipes.rundir import benchmark_run_dir

    plain = benchmark_run_dir("bench2d", "ali_2d_ring", 101)
    assert plain == Path("runs/bench2d-ali_2d_ring-s101")
    a = benchmark_run_dir("bench2d", "ali_2d_ring", 101, ["gan.cycle_weight=1.0"])
    b = benchmark_run_dir("bench2d", "ali_2d_ring", 101, ["gan.cycle_weight=0.5"])
    assert len({plain, a, b}) == 3 and a.name.startswith("bench2d-ali_2d_ring-s101-")
    assert a == benchmark_run_dir("bench2d", "ali_2d_ring", 101, ["gan.cycle_weight=1.0"])


@pytest.mark.slow
def test_jit_level_bits_compares_both_levels(in_tmp):
    out = subprocess.run(
        [sys.executable, str(SCRIPTS / "jit_level_bits.py"), "gan_2d_ring", "--steps", "4",
         "--set", "train.samples=16"],
        cwd=in_tmp, capture_output=True, text=True, timeout=600,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip().endswith("gan_2d_ring: 0 of 71 parameters differ")
    assert sorted(p.name for p in (in_tmp / "runs").iterdir()) == [
        "jit-level-bits-gan_2d_ring-O0", "jit-level-bits-gan_2d_ring-O1"]


@pytest.mark.slow
def test_a_seed_stopped_by_sigterm_is_not_scored(in_tmp):
    """SIGTERM makes a run save and stop early (crash safety); the benchmark must not then
    score the half-trained generator as if it were a finished seed."""
    import signal
    import time

    cmd = [sys.executable, str(SCRIPTS / "benchmark_2d.py"), "--presets", "gan_2d_ring",
           "--seeds", "0", "--out", "r.json", "--set", "train.steps=100000",
           "--set", "train.log_every=5", "--set", "train.sample_every=100000",
           "--set", "train.checkpoint_every=100000"]
    job = subprocess.Popen(cmd, cwd=in_tmp, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True)
    try:
        deadline = time.monotonic() + 300
        while not list(in_tmp.glob("runs/*/metrics.jsonl")):
            assert job.poll() is None and time.monotonic() < deadline, "no training started"
            time.sleep(0.1)
        job.send_signal(signal.SIGTERM)
        out, err = job.communicate(timeout=120)
    finally:
        if job.poll() is None:
            job.kill()
    assert job.returncode == 1, err[-2000:]
    assert "gan_2d_ring seed 0: training stopped at iteration" in err
    assert "of 100000 (SIGTERM); not scored" in err
    assert not (in_tmp / "r.json").exists() and "modes" not in out
