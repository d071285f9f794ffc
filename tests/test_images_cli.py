"""Image GANs end to end on a tiny budget: train on the embedded digits, then sample grids,
single images, class-conditional images and interpolations."""

from __future__ import annotations

import json

import numpy as np
import pytest
from PIL import Image

from gantrain.cli.main import main

TINY = [
    "--set", "data.args={n = 256, size = 28}", "--set", "data.batch_size=16",
    "--set", "generator.args.width=8", "--set", "discriminator.args.width=8",
    "--set", "train.steps=6", "--set", "train.log_every=3", "--set", "train.sample_every=3",
    "--set", "train.checkpoint_every=6", "--set", "train.progress=false",
    "--set", "train.grid=16",
]


@pytest.mark.slow
def test_dcgan_digits_train_and_sample(in_tmp):
    aug = ["--set", "gan.augment=color,translation,cutout"]
    assert main(["train", "dcgan_digits", "--name", "d", *TINY, *aug]) == 0
    run = in_tmp / "runs" / "d"
    samples = run / "samples"
    assert sorted(p.name for p in samples.iterdir()) == [
        "final.png", "progress.gif", "step_000003.png", "step_000006.png"]
    gif = Image.open(samples / "progress.gif")
    assert gif.n_frames == 2
    rows = [json.loads(x) for x in (run / "metrics.jsonl").read_text().splitlines()]
    assert all(np.isfinite(r["D/loss"]) for r in rows if "D/loss" in r)

    assert main(["sample", str(run), "--n", "9", "--grid", "g.png", "--out-dir", "imgs",
                 "--out", "s.npy"]) == 0
    assert Image.open(in_tmp / "g.png").size == (2 * (3 * 30 + 2), 2 * (3 * 30 + 2))
    assert len(list((in_tmp / "imgs").glob("*.png"))) == 9
    s = np.load(in_tmp / "s.npy")
    assert s.shape == (9, 1, 28, 28) and np.abs(s).max() <= 1.0
    # EMA and raw weights differ after training; truncation changes the noise
    assert main(["sample", str(run), "--n", "9", "--out", "raw.npy", "--no-ema"]) == 0
    assert not np.allclose(np.load(in_tmp / "raw.npy"), s)
    assert main(["sample", str(run), "--n", "3", "--interpolate", "5", "--grid", "i.png"]) == 0
    assert Image.open(in_tmp / "i.png").size[0] == 2 * (5 * 30 + 2)


@pytest.mark.slow
def test_conditional_gan_samples_each_class(in_tmp, capsys):
    args = ["train", "cgan_digits", "--name", "c", *TINY]
    assert main(args) == 0
    run = str(in_tmp / "runs" / "c")
    outs = []
    for label in (0, 7):
        assert main(["sample", run, "--n", "4", "--class", str(label), "--out", f"{label}.npy",
                     "--seed", "5"]) == 0
        outs.append(np.load(in_tmp / f"{label}.npy"))
    assert not np.allclose(outs[0], outs[1])  # same noise, different class, different image
    assert main(["sample", run, "--n", "4", "--class", "10"]) == 2
    assert "--class must be in [0, 10)" in capsys.readouterr().err


def test_shape_mismatch_names_both_models(in_tmp, capsys):
    args = ["train", "dcgan_digits", "--name", "x", *TINY, "--set", "generator.args.size=32"]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "models.dcgan:Generator makes samples of shape (1, 32, 32)" in err
    assert "(1, 28, 28)" in err


@pytest.mark.parametrize("preset, section", [("dcgan_digits", "generator"),
                                             ("ali_2d_ring", "encoder")])
def test_a_latent_size_set_twice_must_agree(in_tmp, capsys, preset, section):
    # gan.z_dim draws the noise and sizes the nets; a net's own z_dim must not contradict it
    args = ["train", preset, "--name", "z", "--set", f"{section}.args.z_dim=5"]
    assert main(args) == 2
    z_dim = {"dcgan_digits": 16, "ali_2d_ring": 2}[preset]
    assert (f"{section}.args.z_dim = 5 but gan.z_dim = {z_dim}: the noise has gan.z_dim "
            f"entries; leave {section}.args.z_dim out") in capsys.readouterr().err
    assert not (in_tmp / "runs" / "z" / "checkpoints").exists()


@pytest.mark.slow
def test_gan_z_dim_alone_resizes_the_nets_for_training_and_sampling(in_tmp):
    assert main(["train", "dcgan_digits", "--name", "z", *TINY, "--set", "gan.z_dim=5"]) == 0
    run = in_tmp / "runs" / "z"
    assert "z_dim" not in (run / "config.toml").read_text().split("[generator]")[1].split("[")[0]
    assert main(["sample", str(run), "--n", "2", "--out", "s.npy"]) == 0
    assert np.load(in_tmp / "s.npy").shape == (2, 1, 28, 28)


@pytest.mark.slow
def test_acgan_auxiliary_classifier_loss_is_logged(in_tmp):
    args = ["train", "cgan_digits", "--name", "a", *TINY, "--set", "gan.aux_weight=1.0",
            "--set", "discriminator.args.aux_classifier=true"]
    assert main(args) == 0
    rows = [json.loads(x) for x in (in_tmp / "runs" / "a" / "metrics.jsonl").read_text()
            .splitlines() if "D/class" in x]
    # cross-entropy over 10 classes for real + fake starts near 2 * ln(10)
    assert rows and 2.0 < rows[0]["D/class"] < 7.0 and rows[0]["G/class"] > 0.5


def test_acgan_needs_a_classifying_discriminator(in_tmp, capsys):
    args = ["train", "dcgan_digits", "--name", "a", *TINY, "--set", "gan.aux_weight=1.0"]
    assert main(args) == 2
    assert "aux_weight > 0 (ACGAN) needs num_classes > 0" in capsys.readouterr().err
