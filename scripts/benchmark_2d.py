"""2D mixture benchmark: train the ring and grid presets and report mode coverage.

    python scripts/benchmark_2d.py [--presets gan_2d_grid gan_2d_ring] [--seeds 0 1 2]
                                   [--set KEY=VALUE ...] [--drs 80 [90 ...]] [--mh 20 ...]
                                   [--rescore] [--out benchmark_2d.json]

For each preset and seed: modes captured, high-quality fraction and reverse KL on 2,500 samples
(the PacGAN Table 1 protocol), wall time of the training (compile included) and iterations/s.
With ``--drs P [P ...]`` the same run is also scored on 2,500 samples kept by discriminator
rejection sampling at each percentile P (``gantrain sample --drs P``), with ``--mh K [K ...]``
on the ends of Metropolis-Hastings chains of K proposals (``gantrain sample --mh K``), and with
``--no-ema`` on its raw generator's samples (``gantrain sample --no-ema``), each reported as rows
of their own. ALI runs also report how well G(E(x)) follows x: the mean squared error of the
reconstructions and, beside it, their error against another example (the chance level of a
reconstruction that ignores its input), and the share of reconstructions that land in their
input's mode; the plain row takes the run's last evaluation (500 fresh mixture draws), the other
rows the 2,500 reconstructions ``gantrain sample`` draws.
``--rescore`` skips the training and scores the runs an earlier invocation left in runs/ that
way only (tuning the percentile costs no training). Then, per preset (and sampler),
the mean, standard deviation and worst seed of each figure, as JSON and as markdown tables:
the summary and every run with its wall time. The JSON is rewritten after every run, so an
interrupted invocation keeps what it measured. Runs write to runs/bench2d-<preset>-s<seed>/
(with ``-<hash>`` of the ``--set`` overrides when given; ``--rescore`` needs the same ones).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import gantrain  # noqa: F401  (sets MindSpore's environment before it loads)
from gantrain.data.mixtures import MIXTURES
from gantrain.metrics.seeds import over_seeds
from gantrain.recipes.benchmark_runs import UnfinishedRun, train_seed
from gantrain.recipes.registry import load_config
from gantrain.recipes.rundir import benchmark_run_dir

RECONSTRUCTION = ("recon_mse", "recon_mse_shuffled", "mode_match")
PUBLISHED = "PacGAN Table 1 (grid): GAN 17.3 modes / 94.8%, PacGAN4 24.8 / 93.6%; " \
            "(ring): GAN 6.3 / 98.2%, PacGAN2 7.9 / 95.6%"


def bench(preset: str, seed: int, overrides: list[str]) -> dict:
    trained = train_seed("bench2d", preset, seed, overrides)
    return {"preset": preset, "seed": seed, "sampler": "plain", **trained.row(),
            **trained.run.last_report.as_dict(), **last_reconstruction(trained.run.dir)}


def last_reconstruction(run_dir: Path) -> dict:
    """The reconstruction figures of the last evaluation a run logged (ALI's evaluation of
    G(E(x))), or nothing for a recipe without reconstructions."""
    for line in reversed((run_dir / "metrics.jsonl").read_text().splitlines()):
        record = json.loads(line)
        if "eval/recon_mse" in record:  # runs before mode_match was logged lack it
            return {k: record[f"eval/{k}"] for k in RECONSTRUCTION if f"eval/{k}" in record}
    return {}


def sample_options(config, seed: int, **options):
    """The recipe's sample options for 2,500 samples with ``options`` (``drs=P``, ``ema=False``),
    refusing by name an option the run cannot take (DRS on an ALI run whose D only judges
    pairs)."""
    from gantrain.cli.sample import FLAGS
    from gantrain.recipes.registry import get_recipe
    from gantrain.recipes.sampling import options_for

    recipe = get_recipe(config.task)
    chosen = options_for(recipe.sample_options, {"n": 2500, "seed": seed, **options},
                         config.task, FLAGS)
    chosen.check(config)
    return recipe, chosen


def score_finished(row: dict, overrides: list[str], sampler: str, **options) -> dict:
    """The finished run of ``row`` scored on 2,500 samples its recipe's ``gantrain sample``
    draws with ``options`` (``drs=P``: kept by discriminator rejection sampling; ``mh=K``: ends
    of Metropolis-Hastings chains; ``ema=False``: the raw generator instead of its EMA weights),
    as a row of its own named ``sampler``."""
    from gantrain.engine import checkpoint
    from gantrain.metrics.mixture import mixture_report
    from gantrain.recipes.rundir import checkpoint_config

    run_dir = benchmark_run_dir("bench2d", row["preset"], row["seed"], overrides)
    if not run_dir.is_dir():
        raise SystemExit(f"--rescore: no run {run_dir} to score; train it first (drop --rescore)")
    ckpt = checkpoint.resolve(run_dir)
    config = checkpoint_config(ckpt)
    recipe, chosen = sample_options(config, row["seed"], **options)
    start = time.perf_counter()
    drawn = recipe.sample(ckpt, config, chosen)
    seconds = time.perf_counter() - start
    mixture = MIXTURES[config.data.args["name"]]()
    report = mixture_report(drawn.arrays, mixture)
    out = {k: v for k, v in row.items() if k not in RECONSTRUCTION}
    out.update(sampler=sampler, sample_s=round(seconds, 1), **report.as_dict())
    if "recon" in drawn.extra:  # (N, 2, ...): x and G(E(x))
        from gantrain.recipes.ali.run import reconstruction_errors

        pairs = drawn.extra["recon"]
        out.update(reconstruction_errors(pairs[:, 0], pairs[:, 1], mixture))
    return out


def summary(rows: list[dict]) -> list[dict]:
    """Mean, standard deviation and worst seed of each figure, per preset and sampler."""
    return over_seeds(rows, ("preset", "sampler"), {"modes": min, "high_quality": min,
                                                    "reverse_kl": max, "recon_mse": max,
                                                    "recon_mse_shuffled": min,
                                                    "mode_match": min, "wall_s": max})


def markdown_runs(rows: list[dict]) -> str:
    """One line per run and sampler: the figures and the wall time of its training."""
    lines = ["| preset | seed | sampler | modes | high quality | reverse KL | reconstruction "
             "mse (another example's) | mode kept | wall s | it/s |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        recon = (f"{r['recon_mse']:.4f} ({r['recon_mse_shuffled']:.4f})" if "recon_mse" in r
                 else "-")
        kept = f"{100 * r['mode_match']:.1f}%" if "mode_match" in r else "-"
        lines.append(
            f"| {r['preset']} | {r['seed']} | {r['sampler']} | {r['modes']}/{r['total_modes']} | "
            f"{100 * r['high_quality']:.1f}% | {r['reverse_kl']:.3f} | {recon} | {kept} | "
            f"{r.get('wall_s', '-')} | {r.get('it_per_s', '-')} |")
    return "\n".join(lines)


def markdown(rows: list[dict]) -> str:
    lines = ["| preset | sampler | seeds | modes (mean +- std, worst) | high quality | "
             "reverse KL | reconstruction mse (worst; another example's) | mode kept (worst) | "
             "wall s (worst) |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        m, h, k = r["modes"], r["high_quality"], r["reverse_kl"]
        w = r.get("wall_s")  # absent when --rescore only sampled
        wall = f"{w['mean']:.0f} ({w['worst']:.0f})" if w else "-"
        e, o = r.get("recon_mse"), r.get("recon_mse_shuffled")
        recon = f"{e['mean']:.4f} ({e['worst']:.4f}; {o['mean']:.4f})" if e and o else "-"
        mm = r.get("mode_match")
        kept = f"{100 * mm['mean']:.1f}% ({100 * mm['worst']:.1f}%)" if mm else "-"
        lines.append(
            f"| {r['preset']} | {r['sampler']} | {len(r['seeds'])} | {m['mean']:.1f} +- "
            f"{m['std']:.1f}, {m['worst']} | {100 * h['mean']:.1f}% +- {100 * h['std']:.1f}, "
            f"{100 * h['worst']:.1f}% | {k['mean']:.3f} +- {k['std']:.3f}, {k['worst']:.3f} | "
            f"{recon} | {kept} | {wall} |")
    return "\n".join(lines)


def save(path: str, rows: list[dict]) -> None:
    with open(path, "w") as f:
        json.dump({"runs": rows, "summary": summary(rows), "published": PUBLISHED}, f, indent=1)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--presets", nargs="+", default=["gan_2d_grid", "gan_2d_ring"])
    p.add_argument("--seeds", nargs="+", type=int, default=[0])
    p.add_argument("--set", dest="overrides", action="append", default=[])
    p.add_argument("--drs", type=float, nargs="+", default=[], metavar="PERCENTILE",
                   help="also score each run with discriminator rejection sampling")
    p.add_argument("--mh", type=int, nargs="+", default=[], metavar="STEPS",
                   help="also score each run with Metropolis-Hastings chains of STEPS proposals")
    p.add_argument("--no-ema", action="store_true",
                   help="also score each run's raw generator (its EMA weights are the default)")
    p.add_argument("--rescore", action="store_true",
                   help="no training: score the runs already in runs/ with --drs/--mh/--no-ema "
                   "only")
    p.add_argument("--out", default="benchmark_2d.json")
    args = p.parse_args()
    samplers = ([("no-ema", {"ema": False})] * args.no_ema
                + [(f"drs{p:g}", {"drs": p}) for p in args.drs]
                + [(f"mh{k}", {"mh": k}) for k in args.mh])
    if args.rescore and not samplers:
        p.error("--rescore scores existing runs again; give --drs, --mh and/or --no-ema")
    for preset in args.presets:  # an option a preset's recipe cannot take fails before training
        config = load_config(preset, args.overrides)
        for _, options in samplers:
            try:
                sample_options(config, 0, **options)
            except ValueError as error:  # ConfigError is one
                p.error(f"{preset}: {error}")
    rows = []
    for preset in args.presets:
        for seed in args.seeds:
            if args.rescore:
                base, found = {"preset": preset, "seed": seed}, []
            else:
                try:
                    base = bench(preset, seed, args.overrides)
                except UnfinishedRun as stopped:
                    raise SystemExit(str(stopped)) from None
                found = [base]
            found += [score_finished(base, args.overrides, name, **options)
                      for name, options in samplers]
            for row in found:
                rows.append(row)
                recon = (f", reconstruction mse {row['recon_mse']:.4f} (another example's "
                         f"{row['recon_mse_shuffled']:.4f})" if "recon_mse" in row else "")
                if "mode_match" in row:
                    recon += f", {100 * row['mode_match']:.1f}% in their input's mode"
                print(f"{preset} seed {seed} {row['sampler']}: {row['modes']}/"
                      f"{row['total_modes']} modes, high-quality "
                      f"{100 * row['high_quality']:.1f}%, reverse KL {row['reverse_kl']:.3f}"
                      f"{recon}, {row.get('wall_s', '-')} s ({row.get('it_per_s', '-')} it/s)",
                      flush=True)
            save(args.out, rows)
    print(markdown(summary(rows)))
    print(markdown_runs(rows))
    print(f"published: {PUBLISHED}")


if __name__ == "__main__":
    main()
