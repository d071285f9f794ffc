"""How far a run resumed on a different number of workers ends from the run it continues.

    python scripts/dist_resume_distances.py [--out FILE.json]

For two tiny 2D GANs (the data-parallel tests' configs: MLPs; and a BatchNorm G with a
spectral-norm D), trains 60 iterations with 1 process and with 2 workers, resumes each from its
checkpoint at 30 with the other number of workers, and prints the largest absolute difference
of any weight at iteration 60 (optimizer moments and counters left out). About 10 minutes on a
loaded 2-core machine, in a temporary folder.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from tests.test_distributed import HERE, checkpoint_arrays, config_text, env  # noqa: E402

STATE = ("global_step", "learning_rate", "beta1_power", "beta2_power")


def cli(*args: str) -> None:
    done = subprocess.run([sys.executable, "-m", "gantrain.cli", *args], env=env(),
                          capture_output=True, text=True, timeout=900)
    if done.returncode:
        raise SystemExit(done.stderr[-3000:])


def cut_at_30(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("step_0000003[6-9]",
                                                             "step_000000[4-6]?"))
    (dst / "checkpoints" / "latest").write_text("step_00000030")
    return dst


def weight_distance(a: Path, b: Path) -> float:
    x = checkpoint_arrays(a / "checkpoints" / "step_00000060")
    y = checkpoint_arrays(b / "checkpoints" / "step_00000060")
    keys = [k for k in x if not k.split("/")[1].startswith(("moment", "ema."))
            and k.split("/")[1] not in STATE and not k.endswith(("updates", "skipped", "lr_scale"))]
    return max(float(np.max(np.abs(x[k].astype(np.float64) - y[k]))) for k in keys)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", help="also write the distances as JSON here")
    args = p.parse_args()
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)
        runs = Path("runs")
        for name, nets in (("mlp", None), ("batchnorm_g_spectral_d", HERE / "nets.py")):
            cfg = Path(f"{name}.toml")
            cfg.write_text(config_text(nets, steps=60, keep_checkpoints=20))
            cli("train", str(cfg), "--name", f"{name}_1")
            cli("train", str(cfg), "--name", f"{name}_2", "--workers", "2")
            cli("train", "--resume", str(cut_at_30(runs / f"{name}_1", runs / f"{name}_1to2")),
                "--workers", "2")
            cli("train", "--resume", str(cut_at_30(runs / f"{name}_2", runs / f"{name}_2to1")))
            out[name] = {
                "1 process vs 2 workers": weight_distance(runs / f"{name}_1", runs / f"{name}_2"),
                "1 -> 2 workers at 30 vs 1 process": weight_distance(runs / f"{name}_1",
                                                                     runs / f"{name}_1to2"),
                "2 -> 1 worker at 30 vs 2 workers": weight_distance(runs / f"{name}_2",
                                                                    runs / f"{name}_2to1"),
            }
            print(name, json.dumps(out[name]), flush=True)
    if args.out:
        Path(args.out).write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
