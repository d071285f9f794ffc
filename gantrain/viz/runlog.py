"""Read a run folder's ``metrics.jsonl`` into curves, warnings and resume records.

The file is appended to while a run trains, so it is read defensively: an empty file gives an
empty log, a last line cut mid-write (no final newline) is ignored, and a line that is not a
JSON object is skipped instead of failing the whole report.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

METRICS_FILE = "metrics.jsonl"
CONFIG_FILE = "config.toml"
# bookkeeping fields, not curves
NOT_SERIES = {"iteration", "elapsed"}
# record kinds that are events, not scalars over time
EVENT_KINDS = {"warning", "resume", "rollback"}
# a record of this kind holds the real-vs-real value of the metrics logged under QUALITY_KIND
BASELINE_KIND, QUALITY_KIND = "quality_baseline", "quality"
NUMERIC = {int, float, type(None)}  # not bool: True is no point on a curve
SeriesKey = tuple[str, str]  # (group, key), e.g. ("D", "D/loss"), ("quality", "fd")


@dataclass
class RunLog:
    """What a report shows of one run.

    ``series`` maps (group, key) to (iteration, value) points sorted by iteration, one per
    iteration (a resumed run that logs an iteration again keeps the later value) and only
    finite values. ``events`` are the warning and rollback records, ``resumes`` the resume
    records, in file order. ``baselines`` maps a series to its real-vs-real value (the last
    ``quality_baseline`` record's), drawn as a reference line on that series' chart.
    """

    dir: Path
    name: str
    config_text: str = ""
    series: dict[SeriesKey, list[tuple[int, float]]] = field(default_factory=dict)
    events: list[dict[str, Any]] = field(default_factory=list)
    resumes: list[dict[str, Any]] = field(default_factory=list)
    baselines: dict[SeriesKey, float] = field(default_factory=dict)


def read_records(path: str | Path) -> list[dict[str, Any]]:
    """The complete JSON-object lines of a JSON-lines file (none for a missing or empty file)."""
    path = Path(path)
    if not path.is_file():
        return []
    text = path.read_text(encoding="utf-8", errors="replace")
    lines = text.split("\n")
    lines.pop()  # after the last newline: "" or a line still being written
    records = []
    for line in lines:
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict):
            records.append(record)
    return records


def is_run_dir(path: str | Path) -> bool:
    """A run folder holds ``metrics.jsonl`` or ``config.toml`` (a run built from Python has
    no config file; one that has not logged yet has no metrics)."""
    path = Path(path)
    return (path / METRICS_FILE).is_file() or (path / CONFIG_FILE).is_file()


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def group_of(key: str, kind: str | None) -> str:
    """The section a curve is shown in: the prefix before ``/`` (``D/loss`` -> ``D``,
    ``eval/modes`` -> ``eval``), else the record kind (``quality``), else ``other``."""
    if "/" in key:
        return key.split("/", 1)[0]
    return kind or "other"


def load_run(run_dir: str | Path) -> RunLog:
    """Read a run folder; raises FileNotFoundError naming a folder that is not a run."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir() or not is_run_dir(run_dir):
        raise FileNotFoundError(f"{str(run_dir)!r} is not a run folder (it has neither "
                                f"{METRICS_FILE} nor {CONFIG_FILE})")
    log = RunLog(dir=run_dir, name=run_dir.resolve().name)
    config = run_dir / CONFIG_FILE
    if config.is_file():
        log.config_text = config.read_text(encoding="utf-8", errors="replace")
    points: dict[SeriesKey, dict[int, float]] = {}
    periodic: list[SeriesKey] = []
    kinded: list[SeriesKey] = []
    keys: dict[tuple[str, Any], SeriesKey] = {}
    for record in read_records(run_dir / METRICS_FILE):
        kind = record.get("kind")
        if kind == "resume":
            log.resumes.append(record)
            continue
        if kind in EVENT_KINDS:
            log.events.append(record)
            continue
        if kind == BASELINE_KIND:
            for key, value in record.items():
                if key not in NOT_SERIES and (v := _number(value)) is not None:
                    log.baselines[(group_of(key, QUALITY_KIND), key)] = v
            continue
        iteration = _number(record.get("iteration"))
        if iteration is None:
            continue
        it = int(iteration)
        for key, value in record.items():
            # numbers are curves; null is how JsonlWriter logs NaN/inf: a gap in the curve
            if key in NOT_SERIES or key == "kind" or value.__class__ not in NUMERIC:
                continue
            skey = keys.get((key, kind))
            if skey is None:
                skey = keys[(key, kind)] = (group_of(key, kind), key)
                points[skey] = {}
                (kinded if kind else periodic).append(skey)
            if value is None or not math.isfinite(value):
                points[skey].pop(it, None)
            else:
                points[skey][it] = float(value)
    # player curves first (in logged order, 'other' last), then eval/quality/episodes
    order = ([k for k in periodic if k[0] != "other"] + [k for k in periodic if k[0] == "other"]
             + kinded)
    for skey in order:
        log.series[skey] = sorted(points[skey].items())
    return log
