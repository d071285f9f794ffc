"""A GAN run written by the old code (tests/fixtures/legacy_runs/gan: build_gan as of be7a7f6)
resumes from its step-2 checkpoint to a step-4 checkpoint equal, bit for bit, to the one the
old code wrote without stopping. This pins the parameter names, the phase list and the order
and shapes of the host RNG draws of the GAN recipe."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import mindspore as ms
import numpy as np

from gantrain.cli.main import main

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "legacy_runs" / "gan"
FINAL = "step_00000004"


def test_legacy_gan_run_resumes_to_the_same_weights(in_tmp):
    run_dir = in_tmp / "gan"
    shutil.copytree(FIXTURE, run_dir)
    shutil.rmtree(run_dir / "checkpoints" / FINAL)
    tmp = run_dir / "checkpoints" / "latest.tmp"
    tmp.write_text("step_00000002")
    os.replace(tmp, run_dir / "checkpoints" / "latest")

    assert main(["train", "--resume", str(run_dir)]) == 0

    want_files = sorted(p.name for p in (FIXTURE / "checkpoints" / FINAL).glob("*.ckpt"))
    assert want_files == ["D.ckpt", "G.ckpt"]
    assert sorted(p.name for p in (run_dir / "checkpoints" / FINAL).glob("*.ckpt")) == want_files
    compared, differ = 0, []
    for name in want_files:
        want = ms.load_checkpoint(str(FIXTURE / "checkpoints" / FINAL / name))
        got = ms.load_checkpoint(str(run_dir / "checkpoints" / FINAL / name))
        assert sorted(got) == sorted(want), name
        for key in want:
            a, b = want[key].asnumpy(), got[key].asnumpy()
            compared += 1
            if a.dtype != b.dtype or not np.array_equal(a, b):
                differ.append(f"{name}:{key}")
    assert differ == []
    assert compared > 40  # weights, Adam moments, EMA copies, counters of both players
