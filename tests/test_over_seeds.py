"""Figures over seeds: mean, sample spread and the worst seed, per group of runs."""

from __future__ import annotations

import statistics

import pytest

from gantrain.metrics.seeds import over_seeds


def test_each_group_gets_mean_spread_and_worst_in_first_seen_order():
    rows = [{"preset": "b", "seed": 1, "fd": 10.0, "recall": 0.5},
            {"preset": "a", "seed": 1, "fd": 30.0, "recall": 0.9},
            {"preset": "b", "seed": 2, "fd": 14.0, "recall": 0.7},
            {"preset": "b", "seed": 3, "fd": 12.0}]  # recall not measured on this seed
    b, a = over_seeds(rows, ("preset",), {"fd": max, "recall": min, "kl": max})
    assert (b["preset"], b["seeds"], a["seeds"]) == ("b", [1, 2, 3], [1])
    assert b["fd"] == {"mean": 12.0, "std": pytest.approx(2.0), "worst": 14.0}
    assert b["recall"] == {"mean": pytest.approx(0.6),
                           "std": pytest.approx(statistics.stdev([0.5, 0.7])), "worst": 0.5}
    assert a["fd"] == {"mean": 30.0, "std": 0.0, "worst": 30.0}  # one seed: no spread
    assert "kl" not in b  # a figure no run has is left out, not reported as 0


def test_groups_split_on_every_key():
    rows = [{"preset": "p", "sampler": s, "seed": k, "fd": float(k)}
            for k in (1, 2) for s in ("ema", "raw")]
    groups = over_seeds(rows, ("preset", "sampler"), {"fd": max})
    assert [(g["sampler"], g["seeds"], g["fd"]["worst"]) for g in groups] == [
        ("ema", [1, 2], 2.0), ("raw", [1, 2], 2.0)]
