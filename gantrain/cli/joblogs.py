"""Reading a data-parallel job while it runs and after it ends: rank 0's log echoed to the
terminal, the progress bar drawn from ``metrics.jsonl``, each worker's pid from the line it logs
on joining, and which rank failed, how, and where its log is."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

STARTED = re.compile(r"^gantrain worker: rank (\d+) of (\d+), pid (\d+)$", re.M)
FAILED_PID = re.compile(r"Worker process (\d+) exit with exception\. Error code: (-?\d+)")


class Progress:
    """The progress bar of a data-parallel run, drawn by the launcher from the records rank 0
    appends to ``metrics.jsonl`` (rank 0's own bar would go to its log file)."""

    def __init__(self, metrics: Path, steps: int) -> None:
        from tqdm.auto import tqdm

        self.metrics, self.position = metrics, 0
        if metrics.is_file():  # a resume: only the records written from now on
            self.position = metrics.stat().st_size
        self.bar = tqdm(total=steps, unit="it", dynamic_ncols=True, disable=None)

    def update(self) -> None:
        if not self.metrics.is_file():
            return
        with self.metrics.open("rb") as f:
            f.seek(self.position)
            data = f.read()
        complete = data[: data.rfind(b"\n") + 1]  # a line being written waits for next time
        self.position += len(complete)
        for line in complete.decode(errors="replace").splitlines():
            record = json.loads(line)
            if "kind" in record or "iteration" not in record:
                continue
            self.bar.n = record["iteration"]
            losses = {k.replace("/loss", ""): f"{v:.3f}" for k, v in record.items()
                      if k.endswith("/loss") and isinstance(v, float)}
            self.bar.set_postfix(losses, refresh=False)
            self.bar.refresh()

    def close(self) -> None:
        self.update()
        self.bar.close()


def echo(path: Path, position: int) -> int:
    if not path.is_file():
        return position
    with path.open("rb") as f:
        f.seek(position)
        data = f.read()
    text = data.decode(errors="replace")
    # the worker's own start line and MindSpore's log lines stay in the log file only
    lines = [line for line in text.splitlines(keepends=True)
             if not STARTED.match(line.rstrip("\n")) and not line.startswith("[")]
    sys.stderr.write("".join(lines))
    sys.stderr.flush()
    return position + len(data)


def failures(log_dir: Path) -> list[tuple[int, int]]:
    """``(pid, exit code)`` of the workers msrun saw fail, from its log."""
    path = log_dir / "msrun.log"
    if not path.is_file():
        return []
    return [(int(p), int(c)) for p, c in FAILED_PID.findall(path.read_text(errors="replace"))]


def worker_pids(log_dir: Path) -> dict[int, int]:
    """``{rank: pid}`` from the line each worker logs when it joined the job."""
    pids = {}
    for log in sorted(log_dir.glob("worker_*.log")):
        for match in STARTED.finditer(log.read_text(errors="replace")):
            pids[int(match[1])] = int(match[3])
    return pids


def failure_message(log_dir: Path, code: int) -> str:
    """Which rank failed and where its log is, from msrun's log and the workers' logs."""
    by_pid = {pid: rank for rank, pid in worker_pids(log_dir).items()}
    failed = [(by_pid[pid], status) for pid, status in failures(log_dir) if pid in by_pid]
    if failed:
        rank, status = failed[0]
        log = log_dir / f"worker_{rank}.log"
        how = (f"was killed by signal {-status}" if status < 0 else
               f"stopped with exit code {status}")
        last = last_error(log)
        return (f"worker rank {rank} {how}, so the job was stopped"
                + (f" ({last})" if last else "") + f"; its log: {log}")
    crashed = crashed_ranks(log_dir)
    if crashed:  # a rank whose exception left it hanging in MindSpore's teardown
        logs = ", ".join(str(log_dir / f"worker_{rank}.log") for rank in crashed)
        last = last_error(log_dir / f"worker_{crashed[0]}.log")
        ranks = " and ".join(map(str, crashed))
        return (f"worker rank {ranks} stopped with an error, so the job was stopped"
                + (f" ({last})" if last else "") + f"; log: {logs}")
    if not by_pid:
        return (f"the workers did not start or did not join the job (msrun exit code {code}); "
                f"see the logs in {log_dir} (msrun.log, scheduler.log, worker_*.log)")
    return f"the job stopped with exit code {code}; see the logs in {log_dir}"


def crashed_ranks(log_dir: Path) -> list[int]:
    """Ranks whose log shows a Python traceback. After a failed collective a worker can print
    its traceback and then hang in MindSpore's teardown, where msrun does not see it exit."""
    ranks = []
    for log in sorted(log_dir.glob("worker_*.log")):
        if "Traceback (most recent call last)" in log.read_text(errors="replace"):
            ranks.append(int(log.stem.split("_")[1]))
    return ranks


def last_error(log: Path) -> str:
    """The last line of ``log`` that reads like an error (Python's or gantrain's)."""
    if not log.is_file():
        return ""
    lines = [line.strip() for line in log.read_text(errors="replace").splitlines()]
    for line in reversed(lines):
        if re.match(r"^(gantrain \w+: (error|stopped)|\w+(Error|Exception)\b)", line):
            return line
    return ""
