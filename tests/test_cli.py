"""The command line end to end, in a temp working directory: train, sample, resume, and the
errors a user meets for bad input."""

from __future__ import annotations

import json

import numpy as np
import pytest

from gantrain.cli.main import main
from gantrain.engine import checkpoint

TINY = ["--set", "train.steps=40", "--set", "train.log_every=10", "--set",
        "train.sample_every=20", "--set", "train.checkpoint_every=20", "--set",
        "train.progress=false", "--set", "train.samples=200"]


@pytest.mark.slow
def test_train_then_sample_writes_everything_under_runs(in_tmp, capsys):
    assert main(["train", "gan_2d_ring", "--name", "r", *TINY]) == 0
    run = in_tmp / "runs" / "r"
    assert sorted(p.name for p in in_tmp.iterdir()) == ["runs"]  # nothing else in the cwd
    assert (run / "config.toml").is_file()
    rows = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    train_rows = [r for r in rows if "D/loss" in r]
    assert [r["iteration"] for r in train_rows] == [10, 20, 30, 40]
    evals = [r for r in rows if r.get("kind") == "eval"]
    assert [r["iteration"] for r in evals] == [20, 40] and evals[0]["eval/total_modes"] == 8
    assert (run / "samples" / "step_000040.png").is_file()
    assert (run / "checkpoints" / "latest").read_text() == "step_00000040"
    assert "final evaluation: modes" in capsys.readouterr().out

    assert main(["sample", str(run), "--n", "300", "--out", "s.npy", "--seed", "1"]) == 0
    samples = np.load(in_tmp / "s.npy")
    assert samples.shape == (300, 2) and np.isfinite(samples).all()
    assert main(["sample", str(run), "--n", "300", "--out", "t.npy", "--seed", "1"]) == 0
    np.testing.assert_array_equal(samples, np.load(in_tmp / "t.npy"))


@pytest.mark.slow
def test_resume_continues_and_refuses_structural_changes(in_tmp, capsys):
    assert main(["train", "gan_2d_ring", "--name", "r", *TINY]) == 0
    run = str(in_tmp / "runs" / "r")
    assert main(["train", "--resume", run, "--set", "train.steps=60"]) == 0
    assert (in_tmp / "runs" / "r" / "checkpoints" / "latest").read_text() == "step_00000060"
    # the LR decay keeps the length it was resolved to when the run started
    state = checkpoint.read_state(checkpoint.resolve(run))
    assert state["config"]["optim"]["generator"]["decay_steps"] == 40
    assert state["config"]["train"]["steps"] == 60
    resumes = [json.loads(x) for x in (in_tmp / "runs" / "r" / "metrics.jsonl").read_text()
               .splitlines() if '"resume"' in x]
    # the record also says how many workers continued the run (one process here)
    assert resumes == [{"iteration": 40, "kind": "resume", "changed": ["train.steps"],
                        "workers": 1}]
    capsys.readouterr()
    assert main(["train", "--resume", run, "--set", "optim.generator.lr=0.5"]) == 2
    assert "optim.generator.lr" in capsys.readouterr().err

    # a checkpoint written before a key existed resumes: the missing key counts at its default
    # (the legacy ALI run failed here when ALI gained gan.cycle_weight)
    state_file = checkpoint.resolve(run) / "state.json"
    state = json.loads(state_file.read_text())
    del state["config"]["gan"]["penalty_every"]
    state_file.write_text(json.dumps(state))
    assert main(["train", "--resume", run, "--set", "train.steps=80"]) == 0


@pytest.mark.slow
def test_existing_run_dir_is_refused_and_kept(in_tmp, capsys):
    assert main(["train", "gan_2d_ring", "--name", "r", *TINY]) == 0
    before = sorted(p.name for p in (in_tmp / "runs" / "r").rglob("*"))
    assert main(["train", "gan_2d_ring", "--name", "r", *TINY]) == 2
    assert "--resume" in capsys.readouterr().err
    assert sorted(p.name for p in (in_tmp / "runs" / "r").rglob("*")) == before


@pytest.mark.parametrize(
    "args, message",
    [
        (["--set", "train.stpes=3"], "did you mean 'steps'"),
        (["--set", "gan.loss=hinj"], "unknown GAN loss 'hinj'"),
        (["--set", "generator.model=models.mlp:Nope"], "has no attribute 'Nope'"),
        (["--set", "generator.model=no_such_module:G"], "cannot import module 'no_such_module'"),
        (["--set", "generator.args.widht=3"], "unexpected keyword argument 'widht'"),
        (["--set", "generator.args.z_dim=5"], "generator.args.z_dim = 5 but gan.z_dim = 2"),
        (["--set", "discriminator.args.in_dim=6"], "cannot take input of shape"),
        (["--set", "discriminator.args.in_dim=3"], "needs pack >= 2 dividing in_dim"),
        (["--set", "data.dataset=imagenet"], "unknown dataset 'imagenet'"),
        (["--set", "generator.model=gantrain.config.schema:TrainConfig",
          "--set", "generator.args={}"], "not an nn.Cell"),
        (["--set", "optim.discriminator.name=adamw"], "optim.discriminator.name"),
    ],
)
def test_bad_input_is_one_clear_message(in_tmp, capsys, args, message):
    assert main(["train", "gan_2d_grid", "--name", "bad", *args]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert not (in_tmp / "runs").exists()  # nothing written for a run that cannot start


@pytest.mark.slow
def test_user_model_from_a_file(in_tmp):
    (in_tmp / "my_nets.py").write_text(
        "from mindspore import nn\n"
        "class TinyG(nn.Cell):\n"
        "    def __init__(self, z_dim=2):\n"
        "        super().__init__()\n"
        "        self.fc = nn.Dense(z_dim, 2)\n"
        "    def construct(self, z):\n"
        "        return self.fc(z)\n"
    )
    args = ["train", "gan_2d_ring", "--name", "mine", *TINY,
            "--set", "generator.model=my_nets.py:TinyG", "--set", "generator.args={z_dim = 2}"]
    assert main(args) == 0
    assert "my_nets.py:TinyG" in (in_tmp / "runs" / "mine" / "config.toml").read_text()
