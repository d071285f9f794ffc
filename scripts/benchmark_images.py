"""Image benchmark over seeds: train an image preset per seed and score its generator with the
evaluation classifier.

    python scripts/benchmark_images.py [--presets dcgan_digits] [--seeds 1 2 3 4 5]
                                       [--set KEY=VALUE ...] [--classifier classifiers/digits]
                                       [--n 10000] [--no-ema] [--dot 20 ...] [--mh 20 ...]
                                       [--truncation 1.0 ...]
                                       [--rescore]
                                       [--out F.json]
                                       [--classifier-data mnist --classifier-root DIR]
                                       [--classifier-epochs N]

For each preset and seed: the Frechet distance on the classifier's features, precision, recall,
density and coverage (Kynkaanniemi et al. 2019; Naeem et al. 2020), the class histogram's KL to
the data's class frequencies and the classes covered, on ``--n`` samples of the EMA generator
(``--no-ema`` adds rows for the raw one; ``--dot STEPS`` adds rows for each sampler's noise
moved by discriminator optimal transport, as ``gantrain sample --dot``, and ``--mh STEPS`` for
the ends of Metropolis-Hastings chains, as ``gantrain sample --mh``, and ``--truncation T``
for noise truncated at |z| <= T, as ``gantrain sample --truncation``), beside the
real-vs-real baseline, with the wall time of the training (compile included). A Stacked MNIST
preset (``data.dataset = "stacked_mnist"``) is scored by its own protocol instead (PacGAN
Sec. 5.2, 26,000 samples unless ``--n``): modes covered out of 1000, the KL of the mode
histogram to uniform, and the share of confident samples that those two count. An ALI preset
(``task = "ali"``) also gets its reconstructions G(E(x)) of 1,000 held-out digits scored: the
share the classifier puts in the input's class, and its accuracy on them. Then per preset
and sampler the mean, standard deviation and worst seed of each figure, as JSON and markdown.
The classifier is trained once on the embedded digits (``gantrain eval train-classifier``,
3 epochs; ``--classifier-data``/``--classifier-root`` for real MNIST, 10 epochs;
``--classifier-epochs`` to change that) when ``--classifier`` does not exist yet. Runs write
to runs/benchimg-<preset>-s<seed>/ (with ``-<hash>`` of the ``--set`` overrides when given) and
keep their sample grids there; ``--rescore`` scores those runs again without training. The JSON is
rewritten after every run.
"""

from __future__ import annotations

import argparse
import itertools
import json
from pathlib import Path

import gantrain  # noqa: F401  (sets MindSpore's environment before it loads)
from gantrain.engine import checkpoint, runtime
from gantrain.metrics.seeds import over_seeds
from gantrain.recipes.benchmark_runs import UnfinishedRun, train_seed
from gantrain.recipes.evaluation import EvalOptions
from gantrain.recipes.registry import get_recipe, load_config
from gantrain.recipes.rundir import benchmark_run_dir, checkpoint_config

#: figure -> how its worst seed is picked
FIGURES = {"fd": max, "precision": min, "recall": min, "density": min, "coverage": min,
           "class_kl": max, "classes_covered": min, "modes": min, "stacked_kl": max,
           "confident": min, "class_match": min, "recon_accuracy": min, "wall_s": max}
STACKED_SAMPLES = 26000  # PacGAN Table 2's protocol


def train(preset: str, seed: int, overrides: list[str]) -> dict:
    try:
        trained = train_seed("benchimg", preset, seed, overrides)
    except UnfinishedRun as stopped:
        raise SystemExit(str(stopped)) from None
    return {"preset": preset, "seed": seed, **trained.row()}


def has_ema(preset: str, overrides: list[str]) -> bool:
    """Whether the preset's generator keeps EMA weights (``gan.ema_decay`` set)."""
    return bool(getattr(load_config(preset, overrides).gan, "ema_decay", None))


def score(base: dict, overrides: list[str], classifier: Path, n: int | None, ema: bool,
          dot: int | None = None, mh: int | None = None,
          truncation: float | None = None) -> dict:
    """``base``'s finished run scored on ``n`` samples, as a row named by its sampler."""
    folder = benchmark_run_dir("benchimg", base["preset"], base["seed"], overrides)
    if not folder.is_dir():
        raise SystemExit(f"--rescore: no run {folder} to score; train it first (drop --rescore)")
    ckpt = checkpoint.resolve(folder)
    config = checkpoint_config(ckpt)
    runtime.setup(config.device, config.seed)
    sampler = (("ema" if ema else "raw") + (f"-dot{dot}" if dot else "")
               + (f"-mh{mh}" if mh else "") + (f"-trunc{truncation:g}" if truncation else ""))
    stacked = config.data.dataset == "stacked_mnist"
    n = n or (STACKED_SAMPLES if stacked else 10000)
    metrics = ("stacked",) if stacked else ("fd", "prdc", "classes")
    options = EvalOptions(str(classifier), n, metrics, ema, base["seed"], dot=dot, mh=mh,
                          truncation=truncation)
    report = get_recipe(config.task).evaluate(ckpt, config, folder / f"eval-{sampler}.json",
                                              options)
    figures, baseline = (_stacked_figures(report) if stacked else _image_figures(report))
    if "class_match" in report.get("reconstruction", {}):  # ALI: G(E(x)) of held-out digits
        rec = report["reconstruction"]
        figures.update(class_match=rec["class_match"], recon_accuracy=rec["recon_accuracy"])
        baseline["recon_accuracy"] = rec["input_accuracy"]
    return {**base, "sampler": sampler, "samples": n, **figures, "real_vs_real": baseline,
            "grid": str(folder / "samples" / "final.png")}


def _image_figures(report: dict) -> tuple[dict, dict]:
    gen, real = report["generated"], report["real_vs_real"]
    figures = {k: gen[k] for k in ("fd", "precision", "recall", "density", "coverage")}
    figures["class_kl"] = gen["classes"]["kl"]
    figures["classes_covered"] = gen["classes"]["classes_covered"]
    baseline = {"fd": real["fd"], "precision": real["precision"], "recall": real["recall"],
                "class_kl": real["classes"]["kl"]}
    return figures, baseline


def _stacked_figures(report: dict) -> tuple[dict, dict]:
    def pick(r: dict) -> dict:
        return {"modes": r["modes"], "stacked_kl": r["kl"], "confident": r["confident"]}

    return (pick(report["generated"]["stacked"]),
            {**pick(report["real_vs_real"]["stacked"]),
             "samples": report["real_vs_real"]["stacked"]["samples"]})


def ensure_classifier(path: Path, data: str, root: str | None, epochs: int | None) -> None:
    from gantrain.metrics.classifier import META, classifier_data, train_classifier

    if (path / META).is_file():
        return
    trained, test = classifier_data(data, root)
    epochs = epochs or (3 if data == "digits" else 10)
    result = train_classifier(trained, test, path, epochs=epochs, seed=0)
    print(f"trained the evaluation classifier: {100 * result.accuracy:.2f}% test accuracy, "
          f"saved to {result.path}", flush=True)


def _cell(r: dict, key: str, fmt: str) -> str:
    f = r[key]
    return f"{f['mean']:{fmt}} +- {f['std']:{fmt}}, {f['worst']:{fmt}}"


def _wall_cell(r: dict) -> str:
    wall = r.get("wall_s")  # absent when --rescore skipped the training
    return f"{wall['mean']:.0f} ({wall['worst']:.0f})" if wall else "-"


def markdown(rows: list[dict]) -> str:
    """Mean +- std, worst seed: one table for image presets, one for Stacked MNIST ones."""
    image = [r for r in rows if "fd" in r]
    stacked = [r for r in rows if "modes" in r]
    out = []
    if image:
        out += ["| preset | sampler | seeds | FD | precision | recall | class KL | classes | "
                "wall s (worst) |", "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
        out += [f"| {r['preset']} | {r['sampler']} | {len(r['seeds'])} | "
                f"{_cell(r, 'fd', '.1f')} | {_cell(r, 'precision', '.3f')} | "
                f"{_cell(r, 'recall', '.3f')} | {_cell(r, 'class_kl', '.3f')} | "
                f"{r['classes_covered']['worst']:.0f} (worst) | {_wall_cell(r)} |"
                for r in image]
    if stacked:
        out += [""] if image else []
        out += ["| preset | sampler | seeds | modes /1000 | KL | confident share | "
                "wall s (worst) |", "| --- | --- | --- | --- | --- | --- | --- |"]
        out += [f"| {r['preset']} | {r['sampler']} | {len(r['seeds'])} | "
                f"{_cell(r, 'modes', '.1f')} | {_cell(r, 'stacked_kl', '.3f')} | "
                f"{_cell(r, 'confident', '.3f')} | {_wall_cell(r)} |" for r in stacked]
    recon = [r for r in rows if "class_match" in r]
    if recon:
        out += ["", "| preset | sampler | seeds | class kept by G(E(x)) | classifier accuracy "
                "on G(E(x)) |", "| --- | --- | --- | --- | --- |"]
        out += [f"| {r['preset']} | {r['sampler']} | {len(r['seeds'])} | "
                f"{_cell(r, 'class_match', '.3f')} | {_cell(r, 'recon_accuracy', '.3f')} |"
                for r in recon]
    return "\n".join(out)


def markdown_runs(rows: list[dict]) -> str:
    lines = ["| preset | seed | sampler | figures | wall s | it/s |",
             "| --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        lines.append(f"| {r['preset']} | {r['seed']} | {r['sampler']} | {describe(r)} | "
                     f"{r.get('wall_s', '-')} | {r.get('it_per_s', '-')} |")
    return "\n".join(lines)


def describe(r: dict) -> str:
    if "modes" in r:
        return (f"modes {r['modes']}/1000, KL {r['stacked_kl']:.3f}, confident "
                f"{r['confident']:.3f}")
    text = (f"FD {r['fd']:.1f}, precision {r['precision']:.3f}, recall {r['recall']:.3f}, "
            f"class KL {r['class_kl']:.3f}")
    if "class_match" in r:
        text += f", class kept by G(E(x)) {r['class_match']:.3f}"
    return text


def summary(rows: list[dict]) -> list[dict]:
    return over_seeds(rows, ("preset", "sampler"), FIGURES)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--presets", nargs="+", default=["dcgan_digits"])
    p.add_argument("--seeds", nargs="+", type=int, default=[1, 2, 3, 4, 5])
    p.add_argument("--set", dest="overrides", action="append", default=[])
    p.add_argument("--classifier", type=Path, default=Path("classifiers/digits"))
    p.add_argument("--classifier-data", default="digits",
                   help="what --classifier is trained on when missing: digits | mnist")
    p.add_argument("--classifier-root", help="its dataset folder (all but digits)")
    p.add_argument("--classifier-epochs", type=int, metavar="N",
                   help="its training epochs (default 3 for digits, 10 otherwise)")
    p.add_argument("--n", type=int, help="generated samples per score (default 10,000; "
                   "26,000 for Stacked MNIST)")
    p.add_argument("--no-ema", action="store_true", help="also score the raw generator")
    p.add_argument("--dot", nargs="*", type=int, default=[], metavar="STEPS",
                   help="also score each sampler with DOT of this many steps")
    p.add_argument("--mh", nargs="*", type=int, default=[], metavar="STEPS",
                   help="also score each sampler with Metropolis-Hastings chains of STEPS")
    p.add_argument("--truncation", nargs="*", type=float, default=[], metavar="T",
                   help="also score each sampler on noise truncated at |z| <= T")
    p.add_argument("--rescore", action="store_true", help="no training: score runs/ again")
    p.add_argument("--out", default="benchmark_images.json")
    args = p.parse_args()
    runtime.setup(load_config(args.presets[0], args.overrides).device, 0)
    ensure_classifier(args.classifier, args.classifier_data, args.classifier_root,
                      args.classifier_epochs)
    rows: list[dict] = []
    for preset in args.presets:
        for seed in args.seeds:
            base = ({"preset": preset, "seed": seed} if args.rescore
                    else train(preset, seed, args.overrides))
            # a run without EMA weights has one generator: score it once, as "raw"
            emas = (True, False)[: 1 + args.no_ema] if has_ema(preset, args.overrides) \
                else (False,)
            methods = ([{}] + [{"dot": k} for k in args.dot] + [{"mh": k} for k in args.mh]
                       + [{"truncation": t} for t in args.truncation])
            for ema, method in itertools.product(emas, methods):
                row = score(base, args.overrides, args.classifier, args.n, ema, **method)
                rows.append(row)
                print(f"{preset} seed {seed} {row['sampler']}: {describe(row)}, "
                      f"{row.get('wall_s', '-')} s", flush=True)
            Path(args.out).write_text(json.dumps(
                {"runs": rows, "summary": summary(rows), "overrides": args.overrides},
                indent=1))
    print(markdown(summary(rows)))
    print(markdown_runs(rows))


if __name__ == "__main__":
    main()
