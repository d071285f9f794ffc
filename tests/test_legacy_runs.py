"""Run folders written before the recipes were rebuilt (commit be7a7f6, one tiny run per task
in tests/fixtures/legacy_runs, with what that code sampled from them) still sample the same
numbers and resume to the same weights, bit for bit."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import mindspore as ms
import numpy as np
import pytest

from gantrain.cli.main import main
from gantrain.config import ConfigError
from gantrain.config.schema import read_config
from gantrain.recipes.registry import stored_config

FIXTURES = Path(__file__).parent / "fixtures" / "legacy_runs"
TASKS = ("gan", "cyclegan", "ali", "actor_critic")


def _copy(task: str, tmp_path: Path) -> Path:
    run = tmp_path / task
    shutil.copytree(FIXTURES / task, run)
    for path in run.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)  # mindspore writes .ckpt files 0400
    return run


def _expected(task: str) -> dict:
    return json.loads((FIXTURES / task / "expected.json").read_text())


def _array(entry: dict) -> np.ndarray:
    return np.asarray(entry["values"], dtype=entry["dtype"]).reshape(entry["shape"])


def _sample(run: Path, out: Path, *flags: str) -> np.ndarray:
    assert main(["sample", str(run), "--out", str(out), *flags]) == 0
    return np.load(out)


@pytest.mark.parametrize("ema", [True, False])
def test_gan_samples_are_unchanged(tmp_path, ema):
    run, want = _copy("gan", tmp_path), _expected("gan")["sample"]
    flags = ["--n", "8", "--seed", "0"] + ([] if ema else ["--no-ema"])
    got = _sample(run, tmp_path / "x.npy", *flags)
    np.testing.assert_array_equal(got, _array(want["ema" if ema else "no_ema"]["samples"]))


@pytest.mark.parametrize("ema", [True, False])
def test_ali_samples_and_reconstructions_are_unchanged(tmp_path, ema):
    run, want = _copy("ali", tmp_path), _expected("ali")["sample"]["ema" if ema else "no_ema"]
    flags = ["--n", "8", "--seed", "0"] + ([] if ema else ["--no-ema"])
    got = _sample(run, tmp_path / "x.npy", *flags)
    np.testing.assert_array_equal(got, _array(want["samples"]))
    np.testing.assert_array_equal(np.load(tmp_path / "x_recon.npy"), _array(want["recon"]))


@pytest.mark.parametrize("direction", ["AB", "BA"])
def test_cyclegan_translations_are_unchanged(tmp_path, direction):
    run, want = _copy("cyclegan", tmp_path), _expected("cyclegan")["sample"][direction]
    got = _sample(run, tmp_path / "t.npy", "--direction", direction, "--n", "4")
    np.testing.assert_array_equal(got, _array(want["translated"]))


def test_actor_critic_episodes_are_unchanged(tmp_path, capsys):
    run, want = _copy("actor_critic", tmp_path), _expected("actor_critic")["sample"]
    got = _sample(run, tmp_path / "r.npy", "--n", "3", "--seed", "0")
    assert got.tolist() == want["returns"]
    assert want["stdout"].splitlines()[0] in capsys.readouterr().out


def test_actor_and_critic_load_the_same_weights():
    """The returns of an untrained policy say little; its logits and values say it all."""
    from gantrain.recipes.actor_critic.run import build_actor
    from gantrain.recipes.registry import load_stored_config
    from gantrain.recipes.sampling import load_player_nets

    config = load_stored_config(FIXTURES / "actor_critic" / "config.toml")
    ckpt = FIXTURES / "actor_critic" / "checkpoints" / "step_00000004"
    probe = _expected("actor_critic")["sample"]["probe"]
    actor = build_actor(config)
    load_player_nets(ckpt, "actor", {"actor": actor})
    logits = actor(ms.Tensor(_array(probe["obs"]))).asnumpy()
    np.testing.assert_array_equal(logits, _array(probe["actor_logits"]))


@pytest.mark.slow
@pytest.mark.parametrize("task", TASKS)
def test_resuming_an_old_run_reaches_its_own_final_weights(task, tmp_path):
    run = _copy(task, tmp_path)
    shutil.rmtree(run / "checkpoints" / "step_00000004")
    (run / "checkpoints" / "latest").write_text("step_00000002")
    assert main(["train", "--resume", str(run)]) == 0
    reference = FIXTURES / task / "checkpoints" / "step_00000004"
    files = sorted(p.name for p in reference.glob("*.ckpt"))
    assert files == sorted(p.name for p in (run / "checkpoints" / "step_00000004").glob("*.ckpt"))
    for name in files:
        want = ms.load_checkpoint(str(reference / name))
        got = ms.load_checkpoint(str(run / "checkpoints" / "step_00000004" / name))
        # players now prefix their optimizer's counters (D.learning_rate, was learning_rate)
        player = name.removesuffix(".ckpt")
        got = {k.removeprefix(f"{player}.") if k.removeprefix(f"{player}.") in want
               and k not in want else k: v for k, v in got.items()}
        assert sorted(got) == sorted(want), name
        for key in want:
            np.testing.assert_array_equal(got[key].asnumpy(), want[key].asnumpy(),
                                          err_msg=f"{task}: {name}: {key}")


def test_old_configs_drop_the_keys_their_recipe_never_read(capsys):
    """Old run folders stored every section (gan.n_critic = 1 in a CycleGAN run); those keys
    had no effect on the run and are dropped, with a notice naming any the user had changed."""
    data, source = read_config(str(FIXTURES / "cyclegan" / "config.toml"))
    assert data["gan"]["n_critic"] == 1 and data["train"]["samples"] == 64
    config = stored_config(data, source)
    assert config.task == "cyclegan" and not hasattr(config.gan, "n_critic")
    notice = capsys.readouterr().err
    assert "ignored train.samples = 64" in notice and "n_critic" not in notice
    with pytest.raises(ConfigError, match=r"task 'cyclegan' does not read 'gan.n_critic'"):
        stored_config(data, source, overrides=["gan.n_critic=5"])  # a new setting is checked


@pytest.mark.parametrize("player", ["D", "G"])
def test_a_run_saved_with_mint_adam_resumes_on_the_fused_kernel(tmp_path, player):
    """Until 2026-12-07 beta1 = 0 ran ``mint.optim.Adam`` (state ``exp_avg.*``,
    ``exp_avg_sq.*``, ``state_step``). ``adam_beta1_zero`` is a 4-iteration WGAN-GP run with
    betas (0, 0.9) written by that code (e184eba: ``gantrain train config.toml``). Resumed from
    iteration 2, today's code reaches that code's iteration-4 weights up to where the two put
    eps (1e-8 here: 1e-5 is a hundredth of one update at lr 1e-3, which lost moments or a wrong
    bias correction would exceed), with the moments under ``nn.Adam``'s names."""
    run = _copy("adam_beta1_zero", tmp_path)
    shutil.rmtree(run / "checkpoints" / "step_00000004")
    (run / "checkpoints" / "latest").write_text("step_00000002")
    assert main(["train", "--resume", str(run)]) == 0
    want = ms.load_checkpoint(str(FIXTURES / "adam_beta1_zero" / "checkpoints" / "step_00000004"
                                  / f"{player}.ckpt"))
    got = ms.load_checkpoint(str(run / "checkpoints" / "step_00000004" / f"{player}.ckpt"))
    renamed = {k.replace("exp_avg_sq.", "moment2.").replace("exp_avg.", "moment1."): v
               for k, v in want.items() if k != f"{player}.state_step"}
    assert f"{player}.state_step" in want and any(k.startswith("exp_avg.") for k in want)
    for key, value in renamed.items():
        np.testing.assert_allclose(got[key].asnumpy(), value.asnumpy(), rtol=1e-4, atol=1e-5,
                                   err_msg=f"{player}.ckpt: {key}")
    assert int(got[f"{player}.global_step"].asnumpy()[0]) == int(want[f"{player}.state_step"]
                                                                 .asnumpy()[0])
    np.testing.assert_allclose(got[f"{player}.beta2_power"].asnumpy(),
                               0.9 ** int(want[f"{player}.state_step"].asnumpy()[0]), rtol=1e-6)
