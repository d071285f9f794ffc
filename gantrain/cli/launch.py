"""``gantrain train --workers N``: run the same command as N data-parallel workers under msrun.

The launcher checks everything it can before starting anything (worker count, batch size,
recipe, model imports, port, msrun), so a bad request writes nothing. It then runs msrun on
this machine with a free port on loopback, a bounded cluster time-out, every rank's log under
``<run>/dist/`` and the interpreter's folder first on PATH (msrun starts workers with the first
``python`` on PATH). While the job runs it shows rank 0's log and a progress bar; when a worker
dies, msrun kills the others (it polls once a second), the launcher ends the job a few seconds
later at the latest and names the rank and its log.

Ctrl-C (or SIGTERM) is passed on to the workers as SIGTERM: they agree to stop after the same
iteration and save (engine/loop.py, ``agree``). A second Ctrl-C ends the job at once.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import fields
from pathlib import Path

from .joblogs import Progress, crashed_ranks, echo, failure_message, failures, worker_pids

MASTER_ADDR = "127.0.0.1"
# msrun kills the other workers at once when one fails, but then waits for its scheduler, which
# takes 30-60 s to notice, and a worker whose collective failed may print its traceback and then
# hang in MindSpore's teardown; the launcher ends the job this long after either sign
GRACE_SECONDS = 3.0


class LaunchError(ValueError):
    """A request the launcher refuses before starting anything."""


def free_port() -> int:
    """A TCP port on loopback that nothing listens on right now."""
    with socket.socket() as s:
        s.bind((MASTER_ADDR, 0))
        return s.getsockname()[1]


def check_port(port: int) -> None:
    if not 1024 <= port <= 65535:
        raise LaunchError(f"--port {port}: expected a port number from 1024 to 65535")
    with socket.socket() as s:
        try:
            s.bind((MASTER_ADDR, port))
        except OSError as e:
            raise LaunchError(f"--port {port} is in use on {MASTER_ADDR} ({e.strerror}); pick "
                              "another or leave --port out to get a free one") from None


def find_msrun() -> str:
    """msrun next to this interpreter (it ships with mindspore), else on PATH."""
    here = Path(sys.executable).parent / "msrun"
    if here.is_file() and os.access(here, os.X_OK):
        return str(here)
    found = shutil.which("msrun")
    if found is None:
        raise LaunchError(f"msrun (MindSpore's launcher, installed with mindspore) was found "
                          f"neither next to {sys.executable} nor on PATH; install mindspore in "
                          "this environment or put its bin folder on PATH")
    return found


def check_config(config, workers: int) -> None:
    """Refuse what the workers would refuse, before any of them starts."""
    from ..config.imports import load_object
    from ..config.schema import ModelConfig
    from ..config.strict import ConfigError
    from ..recipes.registry import get_recipe

    get_recipe(config.task).run.check_data_parallel(config, workers)
    for f in fields(config):  # a model file that cannot be imported fails here, not in N logs
        section = getattr(config, f.name)
        if isinstance(section, ModelConfig):
            try:
                load_object(section.model, f.name)
            except ConfigError as e:
                raise LaunchError(str(e)) from None


def worker_command(args: argparse.Namespace, run_dir: Path) -> list[str]:
    """The ``gantrain train`` command each worker runs (always naming the run folder)."""
    cmd = ["python", "-m", "gantrain.cli", "train"]
    if args.resume:
        cmd += ["--resume", str(run_dir)]
    else:
        cmd += [args.config, "--runs-dir", str(run_dir.parent), "--name", run_dir.name]
    for item in args.overrides:
        cmd += ["--set", item]
    return cmd


def launch(args: argparse.Namespace) -> int:
    """Check the request, start msrun, follow rank 0's log; return the job's exit status."""
    from ..recipes.registry import load_config, load_stored_config
    from ..recipes.rundir import (
        CONFIG_FILE,
        LOG_DIR,
        check_resumable,
        check_run_dir_free,
        default_run_dir,
    )

    workers = args.workers
    msrun = find_msrun()
    port = args.port if args.port is not None else free_port()
    if args.port is not None:
        check_port(port)
    if args.resume:
        run_dir = Path(args.resume)
        config = load_stored_config(run_dir / CONFIG_FILE, args.overrides)
        check_resumable(run_dir, config)
    else:
        config = load_config(args.config, args.overrides)
        run_dir = Path(args.runs_dir) / args.name if args.name else default_run_dir(
            config, args.runs_dir)
        check_run_dir_free(run_dir, overwrite=args.overwrite)
    check_config(config, workers)
    if not args.resume and args.overwrite and run_dir.exists():
        shutil.rmtree(run_dir)
    log_dir = run_dir / LOG_DIR
    if log_dir.exists():  # logs of an earlier launch of this run (a resume)
        shutil.rmtree(log_dir)
    log_dir.mkdir(parents=True)
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    # and the gantrain this launcher runs, whatever the workers' current folder holds
    package_root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p)
    cmd = [msrun, f"--worker_num={workers}", f"--local_worker_num={workers}",
           f"--master_addr={MASTER_ADDR}", f"--master_port={port}", "--join=True",
           f"--cluster_time_out={args.cluster_timeout}", f"--log_dir={log_dir}",
           *worker_command(args, run_dir)]
    print(f"gantrain: {workers} workers under msrun (port {port}); logs in {log_dir}",
          file=sys.stderr)
    with (log_dir / "msrun.log").open("w") as out:
        job = subprocess.Popen(cmd, env=env, stdout=out, stderr=subprocess.STDOUT,
                               start_new_session=True)  # Ctrl-C reaches only the launcher
        bar = Progress(run_dir / "metrics.jsonl", config.train.steps) \
            if config.train.progress else None
        try:
            code = _follow(job, log_dir, bar)
        finally:
            if bar is not None:
                bar.close()
    if code == 0:
        return 0
    message = failure_message(log_dir, code)
    if not args.resume and not (run_dir / "checkpoints" / "latest").is_file():
        _drop_partial_run(run_dir, LOG_DIR)
        message += "; the run folder keeps only these logs"
    print(f"gantrain train: error: {message}", file=sys.stderr)
    return 4


def _drop_partial_run(run_dir: Path, keep: str) -> None:
    """Remove what rank 0 wrote before the job failed without a checkpoint (its config, first
    metrics), so the folder holds nothing a resume would mistake for a run."""
    for path in run_dir.iterdir():
        if path.name != keep:
            shutil.rmtree(path) if path.is_dir() else path.unlink()


def _follow(job: subprocess.Popen, log_dir: Path, bar: Progress | None = None) -> int:
    """Echo rank 0's log while the job runs, with the progress bar; pass Ctrl-C/SIGTERM on to
    the workers."""
    interrupts = []

    def on_signal(signum, frame):
        interrupts.append(signum)
        if len(interrupts) == 1:
            for pid in worker_pids(log_dir).values():
                _signal(pid, signal.SIGTERM)
        else:
            _signal(job.pid, signal.SIGINT)  # msrun then kills every worker

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    position, failed_at = 0, None
    try:
        while True:
            code = job.poll()
            position = echo(log_dir / "worker_0.log", position)
            if bar is not None:
                bar.update()
            if code is not None:
                return code
            if failed_at is None and (failures(log_dir) or crashed_ranks(log_dir)):
                failed_at = time.monotonic()
            if failed_at is not None and time.monotonic() - failed_at > GRACE_SECONDS:
                for pid in worker_pids(log_dir).values():  # each in its own session
                    _signal(pid, signal.SIGKILL)
                _kill_group(job.pid)  # msrun and its scheduler
                return job.wait()
            time.sleep(0.5)
    finally:
        for s, h in previous.items():
            signal.signal(s, h)


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _signal(pid: int, signum: int) -> None:
    try:
        os.kill(pid, signum)
    except ProcessLookupError:
        pass


