"""Crash safety: a training process killed with SIGKILL, at random moments and in the middle of
writing a checkpoint, always leaves ``latest`` on a complete checkpoint, and the run resumes."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from gantrain.cli.main import main
from gantrain.engine import checkpoint

TRIALS = 4


def start_training(cwd, stdout=subprocess.DEVNULL, checkpoint_every: int = 1) -> subprocess.Popen:
    args = [sys.executable, "-m", "gantrain.cli", "train", "gan_2d_ring", "--name", "k",
            "--set", "train.steps=100000", "--set", f"train.checkpoint_every={checkpoint_every}",
            "--set", "train.keep_checkpoints=2", "--set", "train.progress=false",
            "--set", "train.sample_every=100000", "--set", "train.log_every=1"]
    return subprocess.Popen(args, cwd=cwd, stdout=stdout, stderr=subprocess.PIPE)


def latest_iteration(run_dir) -> int:
    try:
        return checkpoint.read_state(checkpoint.resolve(run_dir))["loop"]["iteration"]
    except checkpoint.CheckpointError:
        return -1


def wait_for_progress(run_dir, proc, beyond: int, timeout: float = 120.0) -> None:
    """Wait until the process has written a checkpoint past iteration ``beyond``."""
    deadline = time.time() + timeout
    while latest_iteration(run_dir) <= beyond:
        assert proc.poll() is None, proc.stderr.read().decode()[-2000:]
        assert time.time() < deadline, "no new checkpoint appeared"
        time.sleep(0.05)


@pytest.mark.slow
def test_sigkill_at_random_points_leaves_a_valid_latest(in_tmp):
    rng = np.random.default_rng(0)
    run_dir = in_tmp / "runs" / "k"
    proc = start_training(in_tmp)
    wait_for_progress(run_dir, proc, beyond=0)
    iterations, mid_write = [], 0
    for trial in range(TRIALS):
        if trial % 2:  # odd trials: kill the moment a checkpoint write is seen in progress
            deadline = time.time() + 10
            while not any((run_dir / "checkpoints").glob(".*.tmp")) and time.time() < deadline:
                pass
        else:
            time.sleep(float(rng.uniform(0.0, 1.0)))
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        mid_write += any((run_dir / "checkpoints").glob(".*.tmp"))
        latest = checkpoint.resolve(run_dir)
        state = checkpoint.read_state(latest)  # complete and readable
        assert (latest / "G.ckpt").is_file() and (latest / "D.ckpt").is_file()
        iterations.append(state["loop"]["iteration"])
        if trial < TRIALS - 1:
            proc = subprocess.Popen(
                [sys.executable, "-m", "gantrain.cli", "train", "--resume", str(run_dir),
                 "--set", "train.progress=false"],
                cwd=in_tmp, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            wait_for_progress(run_dir, proc, beyond=iterations[-1])
    assert iterations == sorted(iterations) and len(set(iterations)) == TRIALS
    # the last survivor resumes and finishes
    assert main(["train", "--resume", str(run_dir), "--set",
                 f"train.steps={iterations[-1] + 5}", "--set", "train.progress=false"]) == 0
    assert checkpoint.read_state(checkpoint.resolve(run_dir))["loop"]["iteration"] == \
        iterations[-1] + 5
    assert list((run_dir / "checkpoints").glob(".*.tmp")) == []  # leftovers cleaned up
    assert mid_write >= 1
    print(f"{TRIALS} kills, {mid_write} while a checkpoint was being written")


@pytest.mark.slow
def test_sigterm_finishes_the_iteration_saves_and_exits_cleanly(in_tmp):
    run_dir = in_tmp / "runs" / "k"
    proc = start_training(in_tmp, stdout=subprocess.PIPE, checkpoint_every=100000)
    log = run_dir / "metrics.jsonl"
    deadline = time.time() + 120
    while not (log.exists() and len(log.read_text().splitlines()) >= 3):
        assert proc.poll() is None and time.time() < deadline
        time.sleep(0.05)
    assert not (run_dir / "checkpoints").exists()  # only the stop will write one
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 0
    stopped = re.search(r"stopped after (\d+) iterations \(SIGTERM\)", out.decode())
    assert stopped, out.decode()[-500:]
    state = checkpoint.read_state(checkpoint.resolve(run_dir))
    assert state["loop"]["iteration"] == int(stopped.group(1))  # saved where it stopped
