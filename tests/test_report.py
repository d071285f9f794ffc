"""report.html: curves of every logged scalar as inline SVG, warnings, resume records, sample
grids by relative path, several runs overlaid, the atomic write, the CLI, and the live report a
real training run writes."""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from pathlib import Path
from types import SimpleNamespace
from urllib.parse import unquote

import pytest
from PIL import Image

from gantrain.cli.main import main
from gantrain.viz import report as report_mod
from gantrain.viz import svg
from gantrain.viz.report import build_report
from gantrain.viz.runlog import load_run, read_records

POLYLINE = re.compile(r'<polyline class="(raw|smooth)" data-series="([^"]*)" '
                      r'data-run="([^"]*)" stroke="([^"]*)" points="([^"]*)"')

# every record kind the framework writes, a NaN, an inf, a null (how JsonlWriter logs NaN),
# iteration 30 logged again after a resume (the later value wins), and a cut last line
LINES = [
    {"iteration": 10, "elapsed": 1.0, "D/loss": 0.5, "G/loss": 1.5, "D/grad_norm": 2.0},
    {"iteration": 10, "kind": "eval", "eval/modes": 2, "eval/high_quality": 0.25},
    {"iteration": 20, "elapsed": 2.0, "it_per_s": 10.0, "D/loss": 0.4, "G/loss": None,
     "D/grad_norm": float("nan")},
    {"iteration": 20, "kind": "eval", "eval/modes": 5, "eval/high_quality": float("inf")},
    {"kind": "warning", "iteration": 20, "warning": "d_collapse", "message": "D wins outright"},
    {"iteration": 30, "elapsed": 3.0, "it_per_s": 11.0, "D/loss": 1.0, "G/loss": 1.2,
     "D/grad_norm": 3.0},
    {"iteration": 25, "kind": "rollback", "message": "rolled back to iteration 20"},
    {"iteration": 20, "kind": "resume", "changed": ["train.steps"]},
    {"iteration": 30, "elapsed": 3.5, "it_per_s": 12.0, "D/loss": 2.0, "G/loss": 1.1,
     "D/grad_norm": 4.0},
    {"iteration": 30, "kind": "quality", "fd": 12.5, "kid": 0.01, "kid_std": 0.002},
    {"iteration": 30, "kind": "episodes", "episodes": 3, "episodes/return_mean": 20.0},
]
# points each series keeps: NaN, inf and null skipped, iteration 30 counted once
EXPECTED = {"D/loss": 3, "G/loss": 2, "D/grad_norm": 2, "it_per_s": 2, "eval/modes": 2,
            "eval/high_quality": 1, "fd": 1, "kid": 1, "kid_std": 1, "episodes": 1,
            "episodes/return_mean": 1}


def make_run(folder: Path, lines=LINES, tail: str = '{"iteration": 40, "D/loss": 0.',
             grids=(10, 20)) -> Path:
    folder.mkdir(parents=True)
    (folder / "config.toml").write_text('name = "demo"\nnote = "a<b"\n[train]\nsteps = 40\n')
    text = "".join(json.dumps(r) + "\n" for r in lines)  # json writes NaN / Infinity
    (folder / "metrics.jsonl").write_text(text + tail)
    samples = folder / "samples"
    samples.mkdir()
    for step in grids:
        Image.new("L", (8, 8), step).save(samples / f"step_{step:06d}.png")
    if grids:
        Image.new("L", (8, 8)).save(samples / "final.png")
        Image.new("L", (8, 8)).save(samples / "progress.gif")
    return folder


def polylines(html: str, kind: str = "raw") -> list[tuple[str, str, str, int]]:
    """(series, run, colour, number of points) of every polyline of that class."""
    return [(s, r, c, len(p.split())) for k, s, r, c, p in POLYLINE.findall(html) if k == kind]


def image_refs(html: str) -> list[str]:
    refs = re.findall(r'src="([^"]+)"', html)
    for frames in re.findall(r'data-frames="([^"]+)"', html):
        refs += [f[1] for f in json.loads(frames.replace("&quot;", '"'))]
    return refs


def assert_refs_exist(html: str, page: Path) -> list[str]:
    refs = image_refs(html)
    assert refs
    for ref in refs:
        assert not os.path.isabs(unquote(ref)) and "://" not in ref, ref
        assert (page.parent / unquote(ref)).is_file(), ref
    return refs


def test_reading_skips_a_cut_last_line_and_survives_an_empty_file(tmp_path):
    path = tmp_path / "m.jsonl"
    path.write_text('{"iteration": 1}\nnot json\n{"iteration": 2, "D/loss": 0.')
    assert read_records(path) == [{"iteration": 1}]
    path.write_text('{"iteration": 1}\n{"iteration": 2}')  # no newline yet: still being written
    assert read_records(path) == [{"iteration": 1}]
    path.write_text("")
    assert read_records(path) == []
    assert read_records(tmp_path / "missing.jsonl") == []


def test_every_series_is_drawn_with_its_finite_points(tmp_path):
    run = make_run(tmp_path / "demo")
    out = build_report(run)
    assert out == run / "report.html"
    html = out.read_text()
    counts = {series: n for series, _, _, n in polylines(html)}
    assert counts == EXPECTED
    log = load_run(run)
    assert log.series[("D", "D/loss")] == [(10, 0.5), (20, 0.4), (30, 2.0)]  # resume: later
    assert ("quality", "fd") in log.series and ("other", "it_per_s") in log.series
    # the groups, in order: players, then speed, then eval, quality, episodes
    heads = re.findall(r"<h3>([^<]+)</h3><div class=charts>", html)
    assert heads == ["D", "G", "speed and other", "eval", "quality", "episodes"]
    # smoothing only for long series: these are all short
    assert polylines(html, "smooth") == []
    assert "<td>D/loss</td><td title='iteration 30'>2</td>" in html
    table = html[html.index("<table>"):html.index("</table>")]
    assert re.findall(r"<th colspan=2>([^<]+)</th>", table) == heads  # the same groups


def test_warnings_resumes_config_and_samples_are_shown(tmp_path):
    run = make_run(tmp_path / "demo")
    html = build_report(run).read_text()
    assert "iteration 20: d_collapse: D wins outright" in html
    assert "iteration 25: rollback: rolled back to iteration 20" in html
    assert "resumed at iteration 20: train.steps" in html
    assert 'note = &quot;a&lt;b&quot;' in html  # the config, escaped
    d_loss_chart = re.search(r'<svg[^>]*>(?:(?!</svg>).)*data-series="D/loss".*?</svg>', html)
    assert d_loss_chart and d_loss_chart.group(0).count('class="marker"') == 2
    refs = assert_refs_exist(html, run / "report.html")
    assert "samples/step_000010.png" in refs and "samples/step_000020.png" in refs
    assert "samples/final.png" in refs and "samples/progress.gif" in refs
    assert "<input type=range min=0 max=1 value=1" in html
    assert "http://" not in html.replace("http://www.w3.org/2000/svg", "")  # no network


def test_long_series_get_a_smoothed_line(tmp_path):
    lines = [{"iteration": i, "D/loss": float(i % 7)} for i in range(1, 61)]
    html = build_report(make_run(tmp_path / "long", lines, tail="", grids=())).read_text()
    assert polylines(html) == [("D/loss", "long", "#1f77b4", 60)]
    assert polylines(html, "smooth") == [("D/loss", "long", "#1f77b4", 60)]
    assert "No sample grids." in html


def test_a_very_long_series_is_thinned_keeping_its_extremes(tmp_path):
    n = 20_000
    lines = [{"iteration": i, "D/loss": 1.0 + (i % 10) / 100} for i in range(1, n + 1)]
    lines[12_345]["D/loss"] = 50.0  # one spike among twenty thousand points
    lines[777]["D/loss"] = -3.0
    html = build_report(make_run(tmp_path / "long", lines, tail="", grids=())).read_text()
    (_, _, _, raw), = polylines(html)
    (_, _, _, smooth), = polylines(html, "smooth")
    assert raw <= svg.MAX_POINTS and smooth <= svg.MAX_POINTS + 1
    assert len(html) < 100_000
    # the spike and the dip are still drawn: the chart's y range and a point at each
    points = svg.thin([(r["iteration"], r["D/loss"]) for r in lines])
    assert (12_346, 50.0) in points and (778, -3.0) in points
    assert [x for x, _ in points] == sorted(x for x, _ in points)
    assert points[0][0] == 1 and points[-1][0] == n  # the line spans the whole run


def test_a_quality_baseline_is_a_reference_line_on_its_chart(tmp_path):
    lines = LINES + [{"iteration": 0, "kind": "quality_baseline", "fd": 3.0, "kid": 0.001,
                      "precision": 0.7}]
    run = make_run(tmp_path / "q", lines, tail="")
    log = load_run(run)
    assert log.baselines == {("quality", "fd"): 3.0, ("quality", "kid"): 0.001,
                             ("quality", "precision"): 0.7}
    assert ("quality", "precision") not in log.series  # a baseline alone is not a curve
    html = build_report(run).read_text()
    charts = dict(re.findall(r'<text x="52" y="14" class="title">([^<]+)</text>(.*?)</svg>',
                             html))
    assert charts["fd"].count('class="ref"') == 1 and charts["kid"].count('class="ref"') == 1
    assert 'class="ref"' not in charts["kid_std"] and 'class="ref"' not in charts["D/loss"]


@pytest.mark.parametrize("content", ["", '{"iteration": 5, "D/lo'])
def test_an_empty_or_half_written_log_gives_a_page(tmp_path, content):
    run = make_run(tmp_path / "new", lines=[], tail=content, grids=())
    html = build_report(run).read_text()
    assert polylines(html) == [] and "No scalars logged yet." in html
    assert 'name = &quot;demo&quot;' in html


def test_two_runs_are_overlaid(tmp_path):
    a = make_run(tmp_path / "runs" / "a")
    b = make_run(tmp_path / "runs" / "b", lines=LINES[:2], tail="")
    out = build_report([a, b], tmp_path / "cmp" / "ab.html")
    html = out.read_text()
    drawn = polylines(html)
    per_series = Counter(series for series, _, _, _ in drawn)
    assert per_series["D/loss"] == 2 and per_series["eval/modes"] == 2 and per_series["fd"] == 1
    colours = {run: colour for _, run, colour, _ in drawn}
    assert set(colours) == {"a", "b"} and colours["a"] != colours["b"]
    assert ("D/loss", "b", colours["b"], 1) in drawn
    refs = assert_refs_exist(html, out)
    assert "../runs/a/samples/final.png" in refs and "../runs/b/samples/final.png" in refs
    assert html.count("<div class=card>") == 2  # final grids side by side
    assert "<th>metric (last value)</th>" in html and "<td>fd</td><td title='iteration 30'>" \
        "12.5</td><td>-</td>" in html


def test_the_write_is_atomic(tmp_path, monkeypatch):
    run = make_run(tmp_path / "demo")
    build_report(run)
    before = (run / "report.html").read_text()
    assert sorted(p.name for p in run.iterdir()) == ["config.toml", "metrics.jsonl",
                                                     "report.html", "samples"]

    def fail(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(report_mod.os, "replace", fail)
    with (run / "metrics.jsonl").open("a") as f:
        f.write('0}\n{"iteration": 50, "D/loss": 9.0}\n')
    with pytest.raises(OSError, match="disk full"):
        build_report(run)
    assert (run / "report.html").read_text() == before  # the old page, whole
    assert sorted(p.name for p in run.iterdir()) == ["config.toml", "metrics.jsonl",
                                                     "report.html", "samples"]


def test_cli_writes_the_default_paths_and_refuses_a_non_run(in_tmp, capsys):
    make_run(in_tmp / "runs" / "a"), make_run(in_tmp / "runs" / "b")
    a, b = Path("runs/a"), Path("runs/b")
    assert main(["report", str(a)]) == 0
    assert (a / "report.html").is_file() and "wrote runs/a/report.html" in capsys.readouterr().out
    assert main(["report", str(a), str(b)]) == 0
    assert (in_tmp / "report.html").is_file()
    assert main(["report", str(a), "--out", "x/one.html"]) == 0
    assert_refs_exist((in_tmp / "x" / "one.html").read_text(), in_tmp / "x" / "one.html")
    (in_tmp / "empty").mkdir()
    assert main(["report", str(a), "empty"]) == 2
    err = capsys.readouterr().err
    assert "'empty' is not a run folder" in err and "metrics.jsonl" in err
    assert main(["report", "missing"]) == 2
    assert "'missing' is not a run folder" in capsys.readouterr().err


def test_a_failing_report_does_not_stop_training(tmp_path, capsys):
    from gantrain.recipes.base import Run

    fake = SimpleNamespace(dir=tmp_path / "not-a-run", report_path=None)
    assert Run.write_report(fake) is None
    assert "could not write" in capsys.readouterr().out


@pytest.mark.slow
def test_training_writes_the_report_live_and_at_the_end(in_tmp, capsys, monkeypatch):
    calls = []
    original = report_mod.build_report

    def counting(run_dirs, out=None):
        calls.append(sorted(p.name for p in (Path(run_dirs) / "samples").glob("*.png")))
        return original(run_dirs, out)

    monkeypatch.setattr(report_mod, "build_report", counting)
    assert main(["train", "gan_2d_ring", "--name", "r", "--set", "train.steps=40",
                 "--set", "train.sample_every=20", "--set", "train.log_every=10",
                 "--set", "train.progress=false", "--set", "data.batch_size=64"]) == 0
    page = in_tmp / "runs" / "r" / "report.html"
    assert "report: runs/r/report.html" in capsys.readouterr().out
    # at each sample grid (20, 40), once more after training ended
    assert calls == [["step_000020.png"], ["step_000020.png", "step_000040.png"],
                     ["step_000020.png", "step_000040.png"]]
    html = page.read_text()
    refs = assert_refs_exist(html, page)
    assert refs[-1] == "samples/step_000040.png"
    counts = {series: n for series, _, _, n in polylines(html)}
    assert counts["D/loss"] == 4 and counts["G/loss"] == 4  # logged at 10, 20, 30, 40
    assert any(s.startswith("eval/") and n == 2 for s, n in counts.items())
    assert [p.name for p in page.parent.iterdir() if p.name.startswith(".")] == []


def test_reconstruction_grids_get_their_own_timeline(tmp_path):
    run = make_run(tmp_path / "ali", grids=(10, 20))
    for step in (10, 20, 30):
        Image.new("L", (8, 8), step).save(run / "samples" / f"recon_step_{step:06d}.png")
    html = build_report(run).read_text()
    timelines = [json.loads(f.replace("&quot;", '"'))
                 for f in re.findall(r'data-frames="([^"]+)"', html)]
    assert [[s for s, _ in t] for t in timelines] == [[10, 20], [10, 20, 30]]
    assert "reconstructions: rows x, then G(E(x))" in html
    assert_refs_exist(html, run / "report.html")


def test_eval_json_is_shown_beside_its_real_vs_real_baseline(tmp_path):
    run = make_run(tmp_path / "scored")
    assert "<h2>Evaluation</h2>" not in build_report(run).read_text()  # no eval.json yet
    (run / "eval.json").write_text(json.dumps({
        "samples": 1000, "generated": {"fd": 12.5, "kid": 0.01, "classes": {"kl": 0.2}},
        "real_vs_real": {"fd": 3.25, "kid": 0.001, "classes": {"kl": 0.01}}}))
    html = build_report(run).read_text()
    assert "eval.json (1000 samples)" in html
    assert "<tr><td>fd</td><td>12.5</td><td>3.25</td></tr>" in html
    assert "<tr><td>classes kl</td><td>0.2</td><td>0.01</td></tr>" in html
    (run / "eval.json").write_text(json.dumps({"samples": 2500, "mixture": {
        "modes": 25, "high_quality": 0.71, "reverse_kl": 0.04}}))
    html = build_report(run).read_text()
    assert "<tr><td>modes</td><td>25</td><td>-</td></tr>" in html
