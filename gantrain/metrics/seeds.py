"""Figures over seeds: the mean, spread and worst seed of each figure, per group of runs.

A setting tuned on one seed says little about the next user's run, so the benchmarks report
every figure over several seeds, with the worst seed beside the mean (issue 17's protocol).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from typing import Any


def over_seeds(rows: Sequence[dict[str, Any]], group: Sequence[str],
               figures: dict[str, Callable[[list[float]], float]]) -> list[dict[str, Any]]:
    """One row per distinct value of the ``group`` keys (in first-seen order), with ``seeds``
    and, for each figure present in its runs, ``{"mean", "std", "worst"}``; ``figures`` maps
    a figure's key to how its worst seed is chosen (``min`` where higher is better, ``max``
    where lower is). ``std`` is the sample standard deviation (0 for a single seed)."""
    out = []
    for key in dict.fromkeys(tuple(r[g] for g in group) for r in rows):
        runs = [r for r in rows if tuple(r[g] for g in group) == key]
        row: dict[str, Any] = {**dict(zip(group, key)), "seeds": [r["seed"] for r in runs]}
        for name, worst in figures.items():
            values = [r[name] for r in runs if r.get(name) is not None]
            if values:
                row[name] = {"mean": statistics.fmean(values),
                             "std": statistics.stdev(values) if len(values) > 1 else 0.0,
                             "worst": worst(values)}
        out.append(row)
    return out
