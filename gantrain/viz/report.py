"""``report.html``: one self-contained page showing one or several run folders.

The page needs no network and no server: curves are inline SVG (:mod:`.svg`), the only script
is a few lines switching the shown sample grid, and images are referenced by paths relative to
the page, so a run folder with its report can be zipped and opened anywhere. The page is
written to a temporary file beside the target and renamed over it, so a browser reloading it
while training rewrites it never sees half a page.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import time
from collections.abc import Sequence
from html import escape
from pathlib import Path
from urllib.parse import quote

from .runlog import RunLog, SeriesKey, load_run
from .svg import PALETTE, Line, Marker, Reference, line_chart

REPORT_FILE = "report.html"
STEP_RE = re.compile(r"step_(\d+)\.png$")

STYLE = """
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}
h2{border-bottom:1px solid #ccc;margin-top:1.6em}
.charts{display:flex;flex-wrap:wrap;gap:8px}
.chart{background:#fff}.chart .title{font-size:12px;font-weight:600}
.chart .frame{fill:none;stroke:#999}.chart .grid{stroke:#eee}.chart .tick{stroke:#999}
.chart .xl{font-size:10px;text-anchor:middle;fill:#555}
.chart .yl{font-size:10px;text-anchor:end;fill:#555}
.chart .empty{font-size:11px;text-anchor:middle;fill:#999}
.chart polyline{fill:none}.chart .raw{stroke-width:1;opacity:.55}
.chart .smooth{stroke-width:2.2}.chart .marker{stroke-dasharray:3 3;stroke-width:1.2}
.chart .ref{stroke-dasharray:6 3;stroke-width:1.2}
.legend{position:sticky;top:0;background:#fffe;z-index:1;list-style:none;padding:4px}
.swatch{display:inline-block;width:12px;height:12px;margin-right:4px;vertical-align:middle}
table{border-collapse:collapse}td,th{border:1px solid #ddd;padding:2px 8px;text-align:right}
th:first-child,td:first-child{text-align:left}
.runs{display:flex;flex-wrap:wrap;gap:16px}.card{border:1px solid #ddd;padding:8px}
.card img{max-width:420px;image-rendering:pixelated;display:block}
pre{background:#f6f6f6;padding:8px;overflow:auto;max-height:30em}
"""
SCRIPT = """
function gtShow(input){var box=input.closest('.timeline');
var frames=JSON.parse(box.dataset.frames);var f=frames[+input.value];
box.querySelector('img').src=f[1];box.querySelector('.step').textContent='iteration '+f[0];}
"""


def _href(path: Path, page_dir: Path) -> str:
    """``path`` relative to the page's folder, as a URL path (forward slashes, quoted)."""
    rel = os.path.relpath(path.resolve(), page_dir.resolve())
    return quote(Path(rel).as_posix())


def _smoothing(n: int) -> int:
    return max(3, n // 15) if n >= 10 else 0


def _all_keys(logs: Sequence[RunLog]) -> list[SeriesKey]:
    """Every run's series keys, in order of first appearance, each group kept together."""
    keys: list[SeriesKey] = []
    for log in logs:
        keys += [k for k in log.series if k not in keys]
    groups = list(dict.fromkeys(k[0] for k in keys))
    return sorted(keys, key=lambda k: groups.index(k[0]))


def _curves(logs: Sequence[RunLog], colors: dict[str, str]) -> str:
    """One section per group, one chart per series, every run overlaid on the same axes."""
    keys = _all_keys(logs)
    xs = [x for log in logs for pts in log.series.values() for x, _ in pts]
    x_range = (min(xs), max(xs)) if xs else (0.0, 1.0)
    groups: dict[str, list[SeriesKey]] = {}
    for key in keys:
        groups.setdefault(key[0], []).append(key)
    parts = []
    for group, members in groups.items():
        charts = []
        for key in members:
            lines = [Line(log.name, log.series[key], colors[log.name])
                     for log in logs if key in log.series]
            markers = []
            if key[1].endswith("/loss"):
                markers = [Marker(e["iteration"], _event_text(log, e, len(logs) > 1),
                                  colors[log.name] if len(logs) > 1 else "#e08000")
                           for log in logs for e in log.events
                           if isinstance(e.get("iteration"), (int, float))]
            refs = [Reference(log.baselines[key], f"{log.name}: real vs real" if len(logs) > 1
                              else "real vs real", colors[log.name] if len(logs) > 1 else "#555")
                    for log in logs if key in log.baselines]
            longest = max((len(line.points) for line in lines), default=0)
            charts.append(line_chart(key[1], lines, x_range, markers, _smoothing(longest),
                                     refs=refs))
        title = {"other": "speed and other"}.get(group, group)
        parts.append(f"<h3>{escape(title)}</h3><div class=charts>{''.join(charts)}</div>")
    return "".join(parts) or "<p>No scalars logged yet.</p>"


def _event_text(log: RunLog, event: dict, with_run: bool) -> str:
    what = event.get("warning") or event.get("kind", "")
    text = f"iteration {event.get('iteration')}: {what}: {event.get('message', '')}"
    return f"{log.name}: {text}" if with_run else text


def _events(logs: Sequence[RunLog]) -> str:
    items = [f"<li>{escape(_event_text(log, e, len(logs) > 1))}</li>"
             for log in logs for e in log.events]
    return f"<ul>{''.join(items)}</ul>" if items else "<p>None.</p>"


def _final_table(logs: Sequence[RunLog], colors: dict[str, str]) -> str:
    """The last finite value of every series, one column per run."""
    keys = _all_keys(logs)
    head = "".join(f"<th><span class=swatch style='background:{colors[log.name]}'></span>"
                   f"{escape(log.name)}</th>" for log in logs)
    rows, group = [], None
    for key in keys:
        if key[0] != group:  # a heading row per group: 'env_steps' of eval vs of episodes
            group = key[0]
            title = {"other": "speed and other"}.get(group, group)
            rows.append(f"<tr><th colspan={len(logs) + 1}>{escape(title)}</th></tr>")
        cells = []
        for log in logs:
            pts = log.series.get(key) or []
            cells.append(f"<td title='iteration {pts[-1][0]}'>{pts[-1][1]:.4g}</td>" if pts
                         else "<td>-</td>")
        rows.append(f"<tr><td>{escape(key[1])}</td>{''.join(cells)}</tr>")
    return f"<table><tr><th>metric (last value)</th>{head}</tr>{''.join(rows)}</table>"


def _timeline(folder: Path, pattern: str, page_dir: Path, label: str) -> str:
    """A slider over the grids ``folder/pattern`` (``<prefix>step_NNNNNN.png``)."""
    steps = sorted((int(m.group(1)), p) for p in folder.glob(pattern)
                   if (m := STEP_RE.search(p.name)))
    if not steps:
        return ""
    frames = [[step, _href(p, page_dir)] for step, p in steps]
    last = len(frames) - 1
    return (f"<p>{escape(label)}</p>"
            f"<div class=timeline data-frames=\"{escape(json.dumps(frames))}\">"
            f"<input type=range min=0 max={last} value={last} oninput='gtShow(this)'> "
            f"<span class=step>iteration {frames[-1][0]}</span>"
            f"<img src=\"{frames[-1][1]}\" alt='{escape(label)}'></div>")


def _samples(log: RunLog, page_dir: Path, color: str) -> str:
    """The run's grids: a slider over ``samples/step_*.png`` (and over ALI's reconstructions
    ``samples/recon_step_*.png``), the final grid, the GIF."""
    folder = log.dir / "samples"
    parts = [f"<h3><span class=swatch style='background:{color}'></span>{escape(log.name)}</h3>"]
    for pattern, label in (("step_*.png", "samples"),
                           ("recon_step_*.png", "reconstructions: rows x, then G(E(x))")):
        timeline = _timeline(folder, pattern, page_dir, label)
        if timeline:
            parts.append(timeline)
    for name, caption in (("final.png", "final grid"), ("progress.gif", "progress")):
        if (folder / name).is_file():
            parts.append(f"<p>{caption}</p><img src=\"{_href(folder / name, page_dir)}\" "
                         f"alt='{caption}'>")
    if len(parts) == 1:
        parts.append("<p>No sample grids.</p>")
    return f"<div class=card>{''.join(parts)}</div>"


def _evaluation(log: RunLog) -> str:
    """``eval.json`` (``gantrain eval``): each number beside its real-vs-real baseline."""
    path = log.dir / "eval.json"
    try:
        report = json.loads(path.read_text())
    except (OSError, ValueError):
        return ""
    rows = []
    if isinstance(report.get("mixture"), dict):
        rows = [(k, v, None) for k, v in report["mixture"].items()
                if isinstance(v, (int, float))]
    generated, baseline = report.get("generated") or {}, report.get("real_vs_real") or {}
    for key, value in generated.items():
        if isinstance(value, dict):  # classes, stacked: their numeric entries
            rows += [(f"{key} {k}", v, (baseline.get(key) or {}).get(k))
                     for k, v in value.items() if isinstance(v, (int, float))]
        elif isinstance(value, (int, float)):
            rows.append((key, value, baseline.get(key)))
    if not rows:
        return ""
    body = "".join(f"<tr><td>{escape(k)}</td><td>{v:.4g}</td><td>"
                   f"{'-' if b is None else f'{b:.4g}'}</td></tr>" for k, v, b in rows)
    return (f"<h3>{escape(log.name)}: eval.json ({report.get('samples', '?')} samples)</h3>"
            f"<table><tr><th>metric</th><th>generated</th><th>real vs real</th></tr>"
            f"{body}</table>")


def _config(log: RunLog) -> str:
    resumes = "".join(
        f"<li>resumed at iteration {r.get('iteration')}: "
        f"{escape(', '.join(r.get('changed') or []) or 'no config change')}</li>"
        for r in log.resumes)
    resumes = f"<ul>{resumes}</ul>" if resumes else "<p>Never resumed.</p>"
    text = escape(log.config_text) or "(no config.toml)"
    return (f"<h3>{escape(log.name)}</h3>{resumes}"
            f"<details open><summary>config.toml</summary><pre>{text}</pre></details>")


def _evaluations(logs: Sequence[RunLog]) -> str:
    tables = "".join(_evaluation(log) for log in logs)
    return f"<h2>Evaluation</h2>{tables}" if tables else ""


def render(logs: Sequence[RunLog], page_dir: Path) -> str:
    """The report page for ``logs`` (image paths relative to ``page_dir``)."""
    colors = {log.name: PALETTE[i % len(PALETTE)] for i, log in enumerate(logs)}
    names = ", ".join(log.name for log in logs)
    legend = "".join(f"<li><span class=swatch style='background:{colors[log.name]}'></span>"
                     f"{escape(log.name)} <small>({escape(_href(log.dir, page_dir))})</small>"
                     "</li>" for log in logs)
    stamp = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    return (
        f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{escape(names)}</title>"
        f"<style>{STYLE}</style><script>{SCRIPT}</script></head><body>"
        f"<h1>gantrain: {escape(names)}</h1><p>Written {stamp}; rewritten at every sample "
        f"grid while training (reload to update).</p><ul class=legend>{legend}</ul>"
        f"<h2>Final values</h2>{_final_table(logs, colors)}"
        f"<h2>Warnings</h2>{_events(logs)}"
        f"<h2>Curves</h2>{_curves(logs, colors)}"
        f"{_evaluations(logs)}"
        f"<h2>Samples</h2><div class=runs>"
        f"{''.join(_samples(log, page_dir, colors[log.name]) for log in logs)}</div>"
        f"<h2>Config</h2>{''.join(_config(log) for log in logs)}"
        "</body></html>\n")


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to a temporary file beside ``path``, then rename it over ``path``."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, 0o644)  # mkstemp makes it private; a report is for reading
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def default_out(run_dirs: Sequence[str | Path]) -> Path:
    """``RUN/report.html`` for one run, ``report.html`` in the current folder for several."""
    return Path(run_dirs[0]) / REPORT_FILE if len(run_dirs) == 1 else Path(REPORT_FILE)


def build_report(run_dirs: str | Path | Sequence[str | Path],
                 out: str | Path | None = None) -> Path:
    """Write the report of one run folder or several (overlaid) and return its path.

    Raises FileNotFoundError naming a folder that is not a run folder.
    """
    dirs = [run_dirs] if isinstance(run_dirs, (str, Path)) else list(run_dirs)
    if not dirs:
        raise ValueError("build_report needs at least one run folder")
    logs = [load_run(d) for d in dirs]
    seen: dict[str, int] = {}
    for log in logs:  # two runs with the same folder name still get their own colour
        seen[log.name] = seen.get(log.name, 0) + 1
        if seen[log.name] > 1:
            log.name = f"{log.name} ({seen[log.name]})"
    out = Path(out) if out is not None else default_out(dirs)
    out.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(out, render(logs, out.parent))
    return out
