#!/usr/bin/env python
"""Record, or check, the exact numbers of short seeded GAN runs.

Each case is a preset with overrides, trained for a few iterations through the public run API
(``build_run(config, folder).train()``), so the script does not depend on how ``build_gan`` is
written. For every iteration it records each phase's loss and logged aux values as float hex
strings, and at the end a sha256 of every parameter of every player (weights, optimizer
moments, counters). Used to prove that a refactoring of the GAN recipe reproduces the old code
bit for bit::

    PYTHONPATH=. python scripts/gan_traces.py record traces.json      # with the old code
    PYTHONPATH=. python scripts/gan_traces.py check traces.json       # with the new code

``check`` exits 1 and names the first differing value of each case that differs.
``tests/fixtures/gan_traces.json`` was recorded with the GAN recipe of b53e855 (the
flag-driven ``build_gan``), except the inline R1/R2 cases (``r1_inline``, ``r2_inline``,
``conditional_r1_inline``), re-recorded on 2026-12-04 when D's adversarial loss got back the
gradient of the logits it shared with the penalty (docs/mindspore-notes.md, item 31), and the
DiffAugment cases (``diffaugment_dcgan``, ``diffaugment_r1_lazy2``,
``relativistic_diffaugment``), re-recorded the same day when ``make_activation("leaky_relu")``
became ``models.layers.LeakyReLU``, whose gradient at exact zeros (which cutout produces) is
the slope, not ``nn.LeakyReLU``'s tie split;
``tests/test_gan_traces.py`` replays some of its cases.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
from pathlib import Path

import gantrain  # noqa: F401  (before mindspore: sets the oneDNN ISA)
from gantrain.engine import runtime
from gantrain.engine.loop import Hook
from gantrain.recipes.registry import build_run, load_config

STEPS = 6
MLP = ["data.batch_size=64", "generator.args.width=32", "discriminator.args.width=32"]
FLAT = [*MLP, "gan.pack=1", "discriminator.args.in_dim=2"]
IMG = ["data.args={n = 64, size = 28}", "data.batch_size=16", "generator.args.width=8",
       "discriminator.args.width=8"]
ACGAN = [*IMG, "gan.aux_weight=1.0", "discriminator.args.aux_classifier=true"]
AUG = ['gan.augment="color,translation,cutout"']
# the DiffAugment cases were recorded on the DCGAN default before it became an SN-DCGAN with
# the hinge loss (2026-12-04) with Adam betas (0, 0.9), a 16-d latent (2026-12-07) and G's
# refine blocks (2026-12-08); these keep that recipe (BatchNorm D, non-saturating, lr 2e-4,
# betas (0.5, 0.999), 64-d latent, plain DCGAN G)
DCGAN_BN = ['discriminator.args.norm="batch"', 'gan.loss="nonsaturating"',
            "optim.generator.lr=2e-4", "optim.discriminator.lr=2e-4",
            "optim.generator.betas=[0.5, 0.999]", "optim.discriminator.betas=[0.5, 0.999]",
            "gan.z_dim=64", "generator.args.refine=0"]

CASES: dict[str, tuple[str, list[str]]] = {
    "plain_nonsaturating": ("gan_2d_ring", FLAT),
    "wgan_gp_ncritic2": ("wgan_gp_2d_grid", [*MLP, "gan.n_critic=2"]),
    "r1_inline": ("gan_2d_ring", [*FLAT, 'gan.penalty="r1"', "gan.penalty_weight=0.5"]),
    "r1_lazy2": ("gan_2d_ring", [*FLAT, 'gan.penalty="r1"', "gan.penalty_weight=0.5",
                                 "gan.penalty_every=2"]),
    "r2_inline": ("gan_2d_ring", [*FLAT, 'gan.penalty="r2"', "gan.penalty_weight=0.5"]),
    "r2_lazy3": ("gan_2d_ring", [*FLAT, 'gan.penalty="r2"', "gan.penalty_weight=0.5",
                                 "gan.penalty_every=3"]),
    "pack2": ("gan_2d_ring", MLP),
    "pack2_gp": ("gan_2d_ring", [*MLP, 'gan.penalty="gp"', "gan.penalty_weight=1.0"]),
    "relativistic_average": ("gan_2d_ring", [*FLAT, 'gan.loss="relativistic_average"']),
    "conditional_hinge": ("cgan_digits", IMG),
    "conditional_r1_inline": ("cgan_digits", [*IMG, 'gan.penalty="r1"',
                                              "gan.penalty_weight=1.0"]),
    "acgan_gp": ("cgan_digits", [*ACGAN, 'gan.penalty="gp"', "gan.penalty_weight=10.0"]),
    "acgan_r1_lazy2": ("cgan_digits", [*ACGAN, 'gan.penalty="r1"', "gan.penalty_weight=1.0",
                                       "gan.penalty_every=2"]),
    "diffaugment_dcgan": ("dcgan_digits", [*IMG, *DCGAN_BN, *AUG]),
    "diffaugment_r1_lazy2": ("dcgan_digits", [*IMG, *DCGAN_BN, *AUG, 'gan.penalty="r1"',
                                              "gan.penalty_weight=1.0", "gan.penalty_every=2"]),
    "relativistic_diffaugment": ("dcgan_digits", [*IMG, *DCGAN_BN, *AUG,
                                                  'gan.loss="relativistic_average"']),
}


class Trace(Hook):
    """Every phase's loss and aux values after every iteration, as float hex strings."""

    def __init__(self) -> None:
        self.rows: list[dict[str, str]] = []

    def after_iteration(self, loop) -> None:
        row = {"iteration": str(loop.iteration)}
        for phase, (loss, aux) in loop.outputs.items():
            row[f"{phase}/loss"] = float(loss.asnumpy()).hex()
            for key, value in aux.items():
                row[f"{phase}/{key}"] = float(value.asnumpy()).hex()
        self.rows.append(row)


def run_case(name: str, folder: Path) -> dict:
    preset, overrides = CASES[name]
    common = [f"train.steps={STEPS}", "train.progress=false", "train.log_every=1000",
              "train.sample_every=1000", "train.checkpoint_every=1000", "train.samples=16",
              "train.grid=4"]
    run = build_run(load_config(preset, overrides + common), folder)
    trace = Trace()
    run.loop.hooks.append(trace)
    run.train()
    weights = {f"{player}/{p.name}": hashlib.sha256(p.asnumpy().tobytes()).hexdigest()
               for player, params in run.checkpoint_state().items() for p in params}
    return {"trace": trace.rows, "weights": weights}


def differences(got: dict, ref: dict) -> list[str]:
    """Every value of ``got`` (a :func:`run_case` result) that is not bit-identical to ``ref``."""
    diffs = [f"iteration {a['iteration']} {k}: {a.get(k)} != {b.get(k)}"
             for a, b in zip(got["trace"], ref["trace"]) for k in sorted(set(a) | set(b))
             if a.get(k) != b.get(k)]
    if len(got["trace"]) != len(ref["trace"]):
        diffs.append(f"{len(got['trace'])} iterations != {len(ref['trace'])}")
    want = _current_names(ref["weights"], got["weights"])
    return diffs + [f"weights {k}" for k in sorted(set(got["weights"]) | set(want))
                    if got["weights"].get(k) != want.get(k)]


def _current_names(ref: dict[str, str], got: dict[str, str]) -> dict[str, str]:
    """``ref`` with each optimizer counter recorded under its bare name (``D/beta1_power``, as
    before players prefixed them) renamed to the player-prefixed name (``D/D.beta1_power``),
    the same rule by which older checkpoints load."""
    out = {}
    for key, digest in ref.items():
        player, name = key.split("/", 1)
        prefixed = f"{player}/{player}.{name}"
        out[prefixed if "." not in name and prefixed in got else key] = digest
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=["record", "check"])
    parser.add_argument("file", type=Path)
    parser.add_argument("--cases", nargs="*", default=sorted(CASES))
    args = parser.parse_args(argv)
    runtime.setup("CPU", 0)
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.cases:
            results[name] = run_case(name, Path(tmp) / name)
            print(f"{name}: {len(results[name]['trace'])} iterations", flush=True)
    if args.mode == "record":
        args.file.write_text(json.dumps(results, indent=1, sort_keys=True) + "\n")
        return 0
    want = json.loads(args.file.read_text())
    failed = 0
    for name, got in results.items():
        diffs = differences(got, want[name])
        verdict = "bit-identical" if not diffs else f"DIFFERS ({len(diffs)}): {diffs[0]}"
        print(f"{name}: {verdict}")
        failed += bool(diffs)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
