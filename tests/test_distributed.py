"""Data-parallel training on msrun: 2 workers on loopback, tiny nets (docs/distributed.md).

The launches are slow (msrun and ``init()`` add 15-25 s each), so each test makes the most of
one job; every subprocess is bounded by a timeout.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from gantrain.cli.joblogs import worker_pids
from gantrain.cli.launch import find_msrun
from gantrain.cli.main import main

HERE = Path(__file__).resolve().parent / "data_parallel"
ROOT = Path(__file__).resolve().parents[1]
JOB_TIMEOUT = 240  # seconds for one 2-worker job, start to end


def config_text(nets: Path | None = None, steps: int = 12, **train) -> str:
    """A 2D ring GAN small enough that a 2-worker job is dominated by its start-up: MLPs, or
    with ``nets`` the BatchNorm G and spectral-norm D of tests/data_parallel/nets.py; EMA and PacGAN
    packs of 2 in both."""
    g = (f'model = "{nets}:G"\nargs = {{ z_dim = 2, width = 16 }}' if nets else
         'model = "gantrain.models.mlp:Generator"\n'
         'args = { z_dim = 2, out_dim = 2, width = 32, depth = 2 }')
    d = (f'model = "{nets}:D"\nargs = {{ in_dim = 4, width = 16 }}' if nets else
         'model = "gantrain.models.mlp:Discriminator"\n'
         'args = { in_dim = 4, width = 32, depth = 2 }')
    extra = "".join(f"{k} = {v}\n" for k, v in train.items())
    return f"""name = "dist_test"
seed = 3
[data]
dataset = "mixture"
args = {{ name = "ring" }}
batch_size = 64
[generator]
{g}
[discriminator]
{d}
[gan]
loss = "nonsaturating"
z_dim = 2
pack = 2
ema_decay = 0.9
[optim.generator]
lr = 1e-3
betas = [0.5, 0.999]
[optim.discriminator]
lr = 1e-3
betas = [0.5, 0.999]
[train]
steps = {steps}
log_every = 4
sample_every = 6
checkpoint_every = 6
progress = false
{extra}"""


ALI_CONFIG = """name = "dist_ali"
task = "ali"
seed = 4
[data]
dataset = "mixture"
args = { name = "ring" }
batch_size = 32
[generator]
model = "gantrain.models.mlp:Generator"
args = { z_dim = 2, out_dim = 2, width = 16, depth = 2 }
[encoder]
model = "gantrain.models.ali:MLPEncoder"
args = { x_dim = 2, z_dim = 2, width = 16, depth = 2, stochastic = true }
[discriminator]
model = "gantrain.models.ali:JointMLPDiscriminator"
args = { x_dim = 2, z_dim = 2, width = 16, depth = 2 }
[gan]
z_dim = 2
ema_decay = 0.9
[train]
steps = 12
sample_every = 6
checkpoint_every = 6
progress = false
"""


def env() -> dict[str, str]:
    e = dict(os.environ)
    e["PYTHONPATH"] = os.pathsep.join([str(ROOT), e.get("PYTHONPATH", "")])
    e["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), e.get("PATH", "")])
    return e


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def msrun_worker(out: Path, configs: list[Path], workers: int = 2) -> None:
    """tests/data_parallel/worker.py on ``workers`` ranks under msrun, started directly (as an
    outside launcher would start gantrain)."""
    cmd = [find_msrun(), f"--worker_num={workers}", f"--local_worker_num={workers}",
           "--master_addr=127.0.0.1", f"--master_port={free_port()}", "--join=True",
           "--cluster_time_out=60", f"--log_dir={out / 'logs'}",
           str(HERE / "worker.py"), str(out), *map(str, configs)]
    done = subprocess.run(cmd, env=env(), cwd=out, timeout=JOB_TIMEOUT, capture_output=True,
                          text=True)
    logs = "".join(p.read_text()[-3000:] for p in sorted((out / "logs").glob("worker_*.log")))
    assert done.returncode == 0, done.stdout[-2000:] + logs


def state(path: Path) -> dict[str, np.ndarray]:
    with np.load(path) as f:
        return dict(f)


def max_difference(a: dict, b: dict, keys=None) -> float:
    keys = sorted(a) if keys is None else keys
    assert sorted(a) == sorted(b)
    return max(float(np.max(np.abs(a[k].astype(np.float64) - b[k]))) for k in keys)


@pytest.mark.slow
def test_ranks_stay_identical_and_match_one_process(tmp_path):
    """Two ranks, each on half of every batch: every parameter a checkpoint holds (weights,
    Adam moments, EMA weights, spectral-norm vectors, counters) is bit-identical on both; the
    BatchNorm statistics differ until averaged; the MLP GAN and a stochastic ALI equal one
    process on the whole batch to 1e-5. A SIGTERM to rank 1 alone stops both ranks after the
    same iteration."""
    mlp, bn_sn, ali = tmp_path / "mlp.toml", tmp_path / "bn_sn.toml", tmp_path / "ali.toml"
    stop = tmp_path / "stop_sigterm.toml"
    mlp.write_text(config_text())
    bn_sn.write_text(config_text(HERE / "nets.py"))
    ali.write_text(ALI_CONFIG)
    stop.write_text(config_text(steps=1000))
    two = tmp_path / "two"
    two.mkdir()
    msrun_worker(two, [mlp, bn_sn, ali, stop])
    stopped = [state(two / "stop_sigterm" / f"rank{r}.npz") for r in range(2)]
    assert [int(s["loop_iteration"]) for s in stopped] == [3, 3]
    assert max_difference(*stopped) == 0.0
    for name in ("mlp", "bn_sn", "ali"):
        r0, r1 = state(two / name / "rank0.npz"), state(two / name / "rank1.npz")
        assert max_difference(r0, r1) == 0.0, name
    raw0, raw1 = state(two / "bn_sn" / "raw0.npz"), state(two / "bn_sn" / "raw1.npz")
    stats = [k for k in raw0 if k.endswith(("moving_mean", "moving_variance"))]
    assert len(stats) == 4  # G's BatchNorm and the EMA copies of its statistics
    assert max_difference(raw0, raw1, stats) > 1e-4  # each rank's own half of the batch
    others = sorted(set(raw0) - set(stats))
    assert any(k.endswith("weight_u") for k in others)  # spectral-norm vectors
    assert any(k.startswith(("moment1.", "ema.")) for k in others)
    assert max_difference(raw0, raw1, others) == 0.0

    one = tmp_path / "one"
    one.mkdir()
    subprocess.run([sys.executable, str(HERE / "worker.py"), str(one), str(mlp), str(ali)],
                   env=env(), cwd=one, timeout=120, check=True)
    for name in ("mlp", "ali"):
        full, halves = state(one / name / "rank0.npz"), state(two / name / "rank0.npz")
        assert 0.0 < max_difference(full, halves) <= 1e-5, name  # only the summation order


def gantrain_cli(*args: str, timeout: float = JOB_TIMEOUT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "gantrain.cli", *args], env=env(),
                          timeout=timeout, capture_output=True, text=True)


def running(pid: int) -> bool:
    """Whether ``pid`` still runs. A killed worker whose parent died is a zombie until init
    reaps it, which some container inits never do; a zombie runs nothing."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/status")
    try:
        return "\nState:\tZ" not in status.read_text()
    except FileNotFoundError:  # gone meanwhile
        return False


def checkpoint_arrays(ckpt: Path) -> dict[str, np.ndarray]:
    import mindspore as ms

    out = {}
    for f in sorted(ckpt.glob("*.ckpt")):
        out.update({f"{f.stem}/{k}": v.asnumpy() for k, v in ms.load_checkpoint(str(f)).items()})
    return out


@pytest.mark.slow
def test_launcher_resumes_exactly_after_kill9_and_only_rank0_writes(in_tmp):
    """``gantrain train --workers 2``: the run folder is written by rank 0 alone; a job whose
    rank 1 is killed with SIGKILL stops within seconds, naming rank 1 and its log, with
    ``latest`` a complete checkpoint; resumed on 2 workers it ends bit-identical to the
    uninterrupted run, and resumed on 1 worker within 1e-5 of it."""
    cfg = in_tmp / "ring.toml"
    cfg.write_text(config_text(steps=60, keep_checkpoints=20))
    full = gantrain_cli("train", str(cfg), "--workers", "2", "--name", "full")
    assert full.returncode == 0, full.stderr[-3000:]
    run = in_tmp / "runs" / "full"
    assert {p.name for p in run.iterdir()} == {"config.toml", "metrics.jsonl", "checkpoints",
                                               "samples", "report.html", "dist"}
    assert {p.name for p in (run / "dist").iterdir()} >= {"worker_0.log", "worker_1.log"}
    lines = (run / "metrics.jsonl").read_text().splitlines()
    records = [(r["iteration"], r.get("kind")) for r in map(json.loads, lines)]
    assert len(records) == len(set(records)) > 10  # one writer: no record twice

    # the same run, its rank 1 killed with SIGKILL once the first checkpoint is complete
    cut = in_tmp / "runs" / "cut"
    job = subprocess.Popen([sys.executable, "-m", "gantrain.cli", "train", str(cfg),
                            "--workers", "2", "--name", "cut", "--set", "train.steps=100000"],
                           env=env(), stderr=subprocess.PIPE, text=True,
                           start_new_session=True)
    try:
        deadline = time.monotonic() + JOB_TIMEOUT
        while not (cut / "checkpoints" / "latest").is_file():
            assert job.poll() is None and time.monotonic() < deadline, "no checkpoint"
            time.sleep(0.05)
        pids = worker_pids(cut / "dist")
        os.kill(pids[1], signal.SIGKILL)
        killed = time.monotonic()
        _, err = job.communicate(timeout=30)
        assert time.monotonic() - killed < 15  # msrun polls once a second
    finally:
        if job.poll() is None:
            os.killpg(job.pid, signal.SIGKILL)
    assert job.returncode != 0
    assert "worker rank 1 was killed" in err and "runs/cut/dist/worker_1.log" in err, err
    time.sleep(1)
    assert not [pid for pid in pids.values() if running(pid)]  # every worker is gone
    stopped_at = int((cut / "checkpoints" / "latest").read_text().split("_")[1])
    assert 6 <= stopped_at < 60

    again = gantrain_cli("train", "--resume", str(cut), "--workers", "2",
                         "--set", "train.steps=60")
    assert again.returncode == 0, again.stderr[-3000:]
    want = checkpoint_arrays(run / "checkpoints" / "step_00000060")
    got = checkpoint_arrays(cut / "checkpoints" / "step_00000060")
    assert want.keys() == got.keys()
    assert all(np.array_equal(want[k], got[k]) for k in want)

    # 2 -> 1 worker from the checkpoint at 30: the same global batches, summed in another order
    one = in_tmp / "runs" / "one"
    later = shutil.ignore_patterns("step_0000003[6-9]", "step_000000[4-6]?")
    shutil.copytree(run, one, ignore=later)
    (one / "checkpoints" / "latest").write_text("step_00000030")
    assert main(["train", "--resume", str(one)]) == 0
    alone = checkpoint_arrays(one / "checkpoints" / "step_00000060")
    assert max(float(np.max(np.abs(alone[k] - want[k]))) for k in want) <= 1e-5


def refused(capsys, *argv: str) -> str:
    """Run ``gantrain`` in this process; it must refuse (exit 2) and write nothing."""
    assert main(list(argv)) == 2
    assert not Path("runs").exists()
    return capsys.readouterr().err


def test_launcher_refuses_bad_requests_before_writing(in_tmp, capsys, monkeypatch):
    cfg = in_tmp / "ring.toml"
    cfg.write_text(config_text())
    assert "--workers 0: expected 1 or more" in refused(capsys, "train", str(cfg), "--workers", "0")
    err = refused(capsys, "train", str(cfg), "--workers", "3")
    assert "data.batch_size = 64 is the global batch" in err and "divisible" in err
    err = refused(capsys, "train", str(cfg), "--workers", "64")  # 1 sample each, packs of 2
    assert "multiple of gan.pack = 2" in err
    err = refused(capsys, "train", str(cfg), "--workers", "2",
                  "--set", "train.iterations_per_call=2")
    assert "train.iterations_per_call = 2 is not verified with --workers" in err
    err = refused(capsys, "train", "cyclegan_digits", "--workers", "2")
    assert "task 'cyclegan' runs in one process only" in err and "history pool" in err
    err = refused(capsys, "train", "a2c_cartpole", "--workers", "2")
    assert "task 'actor_critic' runs in one process only" in err and "rollouts" in err
    (in_tmp / "broken.py").write_text("import no_such_module\n")
    err = refused(capsys, "train", str(cfg), "--workers", "2",
                  "--set", 'generator.model="broken.py:G"')
    assert "broken.py" in err and "no_such_module" in err
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        err = refused(capsys, "train", str(cfg), "--workers", "2", "--port", port)
    assert f"--port {port} is in use" in err
    monkeypatch.setattr(sys, "executable", str(in_tmp / "python"))
    monkeypatch.setenv("PATH", str(in_tmp))
    assert "msrun (MindSpore's launcher" in refused(capsys, "train", str(cfg), "--workers", "2")


def test_one_process_adds_nothing_to_the_graphs():
    """Without msrun the gradient function is returned as it is, so single-process step graphs
    are the ones they were before data parallelism existed; BatchNorm averaging is a no-op."""
    from gantrain.engine import dist

    def grad_fn(*inputs):
        return inputs

    assert dist.world() == dist.World(0, 1)
    assert dist.reduce_gradients(grad_fn, []) is grad_fn
    assert dist.any_rank(True) is True and dist.any_rank(False) is False


def test_each_rank_takes_its_slice_of_every_field():
    """Ranks draw the same global batch and keep their contiguous share: along axis 0, and
    along axis 1 for the (P, B) DiffAugment parameters."""
    from mindspore import Tensor

    from gantrain.engine.dist import World
    from gantrain.recipes.gan.batches import DBatch, step_input

    real = np.arange(8 * 3, dtype=np.float32).reshape(8, 3)
    aug = np.arange(2 * 8, dtype=np.float32).reshape(2, 8)
    batch = DBatch(Tensor(real), None, Tensor(real + 100), Tensor(np.zeros(8, np.int32)),
                   Tensor(np.ones((8, 1), np.float32)), Tensor(aug), Tensor(aug + 50))
    parts = [step_input(batch, {"real", "z", "aug_real"}, World(r, 2).shard(8))[0]
             for r in range(2)]
    assert sorted(parts[0]) == ["aug_real", "real", "z"]
    np.testing.assert_array_equal(np.concatenate([p["real"].asnumpy() for p in parts]), real)
    np.testing.assert_array_equal(np.concatenate([p["aug_real"].asnumpy() for p in parts], 1),
                                  aug)
    with pytest.raises(ValueError, match="cannot be split evenly over 3 workers"):
        World(0, 3).shard(8)


def test_a_stop_wanted_by_any_rank_stops_every_rank_after_the_same_iteration():
    """The loop's ``agree`` hears every rank each iteration (in a job, a one-number all-reduce):
    a rank that does not want to stop still stops when another does, so no rank is left
    waiting in a collective."""
    from tests.test_loop import Recorder, make_loop

    asked = []

    def other_rank_stops_at_3(stop: bool) -> bool:  # what dist.any_rank returns on this rank
        asked.append(stop)
        return stop or len(asked) == 3

    recorder = Recorder()
    loop, player = make_loop([recorder])
    loop.agree = other_rank_stops_at_3
    loop.run(100)
    assert loop.iteration == 3 == player.calls and asked == [False] * 3
    assert loop.stop_reason == "stopped by another worker"
    assert recorder.events[-1] == ("end", 3)


def test_a_signal_after_the_agreement_waits_for_the_next_one():
    """A signal that lands right after this iteration's agreement must not end the loop here:
    the other ranks were told "go on" and start the next iteration's collectives (seen as a
    hang, then a failed all-reduce, before the loop acted only on agreed answers)."""
    from tests.test_loop import make_loop

    loop, player = make_loop()
    answers = []

    def agree(stop: bool) -> bool:  # one rank: nobody else wants to stop
        answers.append(stop)
        if len(answers) == 2:
            loop.request_stop("SIGTERM")  # the signal arrives just after the all-reduce
        return stop

    loop.agree = agree
    loop.run(100)
    assert answers == [False, False, True] and loop.iteration == player.calls == 3
    assert loop.stop_reason == "SIGTERM"
