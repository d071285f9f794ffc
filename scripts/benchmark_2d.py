"""2D mixture benchmark: train the ring and grid presets and report mode coverage.

    python scripts/benchmark_2d.py [--presets gan_2d_grid gan_2d_ring] [--seeds 0 1 2]
                                   [--set KEY=VALUE ...] [--drs 80] [--out benchmark_2d.json]

For each preset and seed: modes captured, high-quality fraction and reverse KL on 2,500 samples
(the PacGAN Table 1 protocol), wall time of the training (compile included) and iterations/s.
With ``--drs P`` the same run is also scored on 2,500 samples kept by discriminator rejection
sampling at percentile P (``gantrain sample --drs P``), reported as its own rows. Then, per
preset (and sampler), the mean, standard deviation and worst seed of each figure, as JSON and
as a markdown table. Runs write to runs/bench2d-<preset>-s<seed>/.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import gantrain  # noqa: F401  (sets MindSpore's environment before it loads)
from gantrain.data.mixtures import MIXTURES
from gantrain.recipes.registry import build_run, load_config
from gantrain.recipes.rundir import prepare_run_dir

PUBLISHED = "PacGAN Table 1 (grid): GAN 17.3 modes / 94.8%, PacGAN4 24.8 / 93.6%; " \
            "(ring): GAN 6.3 / 98.2%, PacGAN4 7.9 / 95.6%"


def bench(preset: str, seed: int, overrides: list[str]) -> dict:
    config = load_config(preset, [f"seed={seed}", "train.progress=false", *overrides])
    run_dir = f"runs/bench2d-{preset}-s{seed}"
    start = time.perf_counter()
    run = build_run(config, run_dir)
    prepare_run_dir(run.dir, run.config, overwrite=True)
    loop = run.train()
    wall = time.perf_counter() - start
    report = run.last_report
    return {
        "preset": preset, "seed": seed, "sampler": "plain", "steps": loop.iteration,
        "wall_s": round(wall, 1), "it_per_s": round(loop.iteration / loop.elapsed, 1),
        **report.as_dict(),
    }


def bench_drs(row: dict, percentile: float) -> dict:
    """The finished run of ``row`` scored on samples kept by discriminator rejection sampling."""
    from gantrain.engine import checkpoint
    from gantrain.metrics.mixture import mixture_report
    from gantrain.recipes.gan.sample import GANSampleOptions, sample
    from gantrain.recipes.rundir import checkpoint_config

    ckpt = checkpoint.resolve(Path(f"runs/bench2d-{row['preset']}-s{row['seed']}"))
    config = checkpoint_config(ckpt)
    start = time.perf_counter()
    drawn = sample(ckpt, config, GANSampleOptions(n=2500, seed=row["seed"], drs=percentile))
    seconds = time.perf_counter() - start
    report = mixture_report(drawn.arrays, MIXTURES[config.data.args["name"]]())
    return {**row, "sampler": f"drs{percentile:g}", "sample_s": round(seconds, 1),
            **report.as_dict()}


def summary(rows: list[dict]) -> list[dict]:
    """Mean, standard deviation and worst seed of each figure, per preset and sampler."""
    out = []
    for key in dict.fromkeys((r["preset"], r["sampler"]) for r in rows):
        group = [r for r in rows if (r["preset"], r["sampler"]) == key]
        row = {"preset": key[0], "sampler": key[1], "seeds": [r["seed"] for r in group]}
        for name, worst in (("modes", min), ("high_quality", min), ("reverse_kl", max),
                            ("wall_s", max)):
            values = [r[name] for r in group]
            row[name] = {"mean": statistics.fmean(values),
                         "std": statistics.stdev(values) if len(values) > 1 else 0.0,
                         "worst": worst(values)}
        out.append(row)
    return out


def markdown(rows: list[dict]) -> str:
    lines = ["| preset | sampler | seeds | modes (mean +- std, worst) | high quality | "
             "reverse KL | wall s (worst) |", "| --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        m, h, k, w = r["modes"], r["high_quality"], r["reverse_kl"], r["wall_s"]
        lines.append(
            f"| {r['preset']} | {r['sampler']} | {len(r['seeds'])} | {m['mean']:.1f} +- "
            f"{m['std']:.1f}, {m['worst']} | {100 * h['mean']:.1f}% +- {100 * h['std']:.1f}, "
            f"{100 * h['worst']:.1f}% | {k['mean']:.3f} +- {k['std']:.3f}, {k['worst']:.3f} | "
            f"{w['mean']:.0f} ({w['worst']:.0f}) |")
    return "\n".join(lines)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--presets", nargs="+", default=["gan_2d_grid", "gan_2d_ring"])
    p.add_argument("--seeds", nargs="+", type=int, default=[0])
    p.add_argument("--set", dest="overrides", action="append", default=[])
    p.add_argument("--drs", type=float, metavar="PERCENTILE",
                   help="also score each run with discriminator rejection sampling")
    p.add_argument("--out", default="benchmark_2d.json")
    args = p.parse_args()
    rows = []
    for preset in args.presets:
        for seed in args.seeds:
            found = [bench(preset, seed, args.overrides)]
            if args.drs is not None:
                found.append(bench_drs(found[0], args.drs))
            for row in found:
                rows.append(row)
                print(f"{preset} seed {seed} {row['sampler']}: {row['modes']}/"
                      f"{row['total_modes']} modes, high-quality "
                      f"{100 * row['high_quality']:.1f}%, reverse KL {row['reverse_kl']:.3f}, "
                      f"{row['wall_s']} s ({row['it_per_s']} it/s)", flush=True)
    table = summary(rows)
    print(markdown(table))
    print(f"published: {PUBLISHED}")
    with open(args.out, "w") as f:
        json.dump({"runs": rows, "summary": table, "published": PUBLISHED}, f, indent=1)


if __name__ == "__main__":
    main()
