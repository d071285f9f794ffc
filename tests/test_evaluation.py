"""gantrain eval end to end on tiny budgets: a classifier trained with the engine's own loop,
then metrics of a trained run beside the real-vs-real baseline; 2D runs get mode coverage; ALI
runs also get their reconstructions scored."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from gantrain.cli.main import main
from gantrain.config import ConfigError
from gantrain.data.digits import embedded_digits
from gantrain.metrics.classifier import load_classifier, train_classifier
from gantrain.metrics.report import evaluate_samples
from gantrain.recipes.ali.evaluate import class_agreement
from gantrain.recipes.ali.examples import HELD_OUT_DIGITS_SEED

TINY = [
    "--set", "data.args={n = 256, size = 28}", "--set", "data.batch_size=16",
    "--set", "generator.args.width=8", "--set", "discriminator.args.width=8",
    "--set", "train.steps=4", "--set", "train.progress=false", "--set", "train.grid=4",
]


@pytest.fixture(scope="module")
def classifier(tmp_path_factory):
    out = tmp_path_factory.mktemp("clf") / "digits"
    train, test = embedded_digits(600, seed=1), embedded_digits(200, seed=2)
    result = train_classifier(train, test, out, epochs=2, batch_size=32, width=8,
                              progress=False)
    assert result.accuracy > 0.5  # far above the 10% of chance, after 36 steps
    return out


@pytest.mark.slow
def test_classifier_features_separate_real_from_noise(classifier):
    extractor, meta = load_classifier(classifier)
    assert meta["test_accuracy"] > 0.5 and meta["args"]["num_classes"] == 10
    real = embedded_digits(300, seed=3)
    noise = np.random.default_rng(0).uniform(-1, 1, (150, 1, 28, 28)).astype(np.float32)
    rep = evaluate_samples(noise, real, extractor, ("fd", "prdc", "classes"))
    assert rep["real_samples"] == 150
    assert rep["generated"]["fd"] > 5 * rep["real_vs_real"]["fd"]
    assert rep["generated"]["precision"] < rep["real_vs_real"]["precision"]
    assert rep["real_vs_real"]["classes"]["classes_covered"] >= 8  # a weak, quick classifier


@pytest.mark.slow
def test_eval_cli_on_a_trained_run(in_tmp, classifier, capsys):
    assert main(["train", "dcgan_digits", "--name", "d", *TINY]) == 0
    capsys.readouterr()
    assert main(["eval", "runs/d", "--classifier", str(classifier), "--n", "64"]) == 0
    out = capsys.readouterr().out
    assert "real vs real" in out and "fd" in out
    report = json.loads((in_tmp / "runs" / "d" / "eval.json").read_text())
    assert report["samples"] == 64 and report["ema"] is True
    assert set(report["generated"]) >= {"fd", "kid", "precision", "recall", "density",
                                        "coverage", "classes"}


ALI_TINY = [
    "--set", "data.args={n = 256, size = 28}", "--set", "data.batch_size=16",
    "--set", "generator.args.width=8", "--set", "encoder.args.width=8",
    "--set", "discriminator.args.width=8", "--set", "discriminator.args.z_width=16",
    "--set", "discriminator.args.joint_width=16", "--set", "train.steps=4",
    "--set", "train.progress=false", "--set", "train.grid=16",
]


@pytest.mark.slow
def test_eval_cli_on_an_ali_run(in_tmp, classifier, capsys):
    """An ALI run is scored like a GAN's generator, plus its reconstructions of held-out digits
    (a seed no run trains on) classified beside their inputs."""
    assert main(["train", "ali_digits", "--name", "a", *ALI_TINY]) == 0
    capsys.readouterr()
    assert main(["eval", "runs/a", "--classifier", str(classifier), "--n", "64"]) == 0
    out = capsys.readouterr().out
    assert "reconstructions of 1000 embedded digits, seed 2000" in out and "class kept" in out
    report = json.loads((in_tmp / "runs" / "a" / "eval.json").read_text())
    assert report["samples"] == 64 and {"fd", "precision"} <= set(report["generated"])
    rec = report["reconstruction"]
    assert rec["examples"] == 1000 and 0.0 <= rec["class_match"] <= 1.0
    assert rec["input_accuracy"] > 0.5  # the classifier reads the held-out inputs
    assert rec["recon_mse"] > 0 and rec["recon_mse_shuffled"] > 0
    assert main(["eval", "runs/a", "--classifier", str(classifier), "--drs", "80"]) == 2
    assert "`gantrain eval` of ALI runs has no --drs" in capsys.readouterr().err


@pytest.mark.slow
def test_class_agreement_counts_the_classes_a_reconstruction_keeps(classifier):
    """A perfect reconstruction keeps every predicted class; another digit in its place (the
    held-out set shifted by one) keeps about one in ten."""
    extractor, _ = load_classifier(classifier)
    held = embedded_digits(300, seed=HELD_OUT_DIGITS_SEED)
    same = class_agreement(extractor, held.x, held.x, held.y)
    assert same["class_match"] == 1.0 and same["recon_accuracy"] == same["input_accuracy"] > 0.5
    other = class_agreement(extractor, held.x, np.roll(held.x, 1, axis=0), held.y)
    assert other["class_match"] < 0.3 and other["input_accuracy"] == same["input_accuracy"]
    assert class_agreement(extractor, held.x, held.x, None).keys() == {"class_match"}


@pytest.mark.slow
def test_eval_needs_a_classifier_for_images(in_tmp, capsys):
    assert main(["train", "dcgan_digits", "--name", "d", *TINY]) == 0
    assert main(["eval", "runs/d", "--n", "8"]) == 2
    assert "train-classifier" in capsys.readouterr().err
    with pytest.raises(ConfigError, match="no classifier"):
        load_classifier(in_tmp / "nowhere")


@pytest.mark.slow
def test_eval_2d_run_reports_modes(in_tmp, capsys):
    args = ["train", "gan_2d_ring", "--name", "r", "--set", "train.steps=20",
            "--set", "train.progress=false", "--set", "train.samples=100"]
    assert main(args) == 0
    assert main(["eval", "runs/r", "--n", "500"]) == 0
    report = json.loads((in_tmp / "runs" / "r" / "eval.json").read_text())
    assert report["mixture"]["total_modes"] == 8 and report["mixture"]["samples"] == 500


@pytest.mark.slow
def test_train_classifier_cli(in_tmp, capsys):
    assert main(["eval", "train-classifier", "--data", "digits", "--n", "200", "--epochs", "1",
                 "--out", "clf"]) == 0
    assert "test accuracy" in capsys.readouterr().out
    assert (in_tmp / "clf" / "classifier.json").is_file()
    assert main(["eval", "train-classifier", "--data", "mnist"]) == 2
    assert "--root" in capsys.readouterr().err


@pytest.mark.slow
def test_stacked_mnist_modes(in_tmp, classifier, capsys):
    args = ["train", "stacked_mnist_dcgan", "--name", "s", "--set", "data.args.n=256",
            "--set", "data.args.digits=300", "--set", "data.batch_size=16",
            "--set", "generator.args.width=8", "--set", "discriminator.args.width=8",
            "--set", "train.steps=3", "--set", "train.progress=false", "--set", "train.grid=4"]
    assert main(args) == 0
    assert main(["eval", "runs/s", "--classifier", str(classifier), "--n", "200",
                 "--metrics", "stacked"]) == 0
    report = json.loads((in_tmp / "runs" / "s" / "eval.json").read_text())
    gen, real = report["generated"]["stacked"], report["real_vs_real"]["stacked"]
    assert gen["total_modes"] == 1000 and 0 <= gen["modes"] <= 200
    assert real["modes"] > gen["modes"]  # 3 steps of training vs real stacked digits
    # only confident samples count: most real stacked digits are, 3-step blobs mostly not
    assert gen["confidence_threshold"] == real["confidence_threshold"] > 0
    assert real["confident"] > 0.85 and gen["confident"] < real["confident"]
    capsys.readouterr()
    assert main(["eval", "runs/s", "--classifier", str(classifier), "--n", "20"]) == 2
    assert "classifier takes 1-channel images" in capsys.readouterr().err


@pytest.mark.slow
def test_periodic_quality_and_best_checkpoint(in_tmp, classifier):
    args = ["train", "dcgan_digits", "--name", "q", *TINY, "--set", "train.eval_every=2",
            "--set", f'train.eval_classifier="{classifier}"', "--set", "train.eval_samples=32",
            "--set", "train.keep_best=fd"]
    assert main(args) == 0
    run = in_tmp / "runs" / "q"
    rows = [json.loads(x) for x in (run / "metrics.jsonl").read_text().splitlines()]
    quality = [r for r in rows if r.get("kind") == "quality"]
    assert [r["iteration"] for r in quality] == [2, 4]
    # the real-vs-real baseline, once, at the start, on as many real images as are generated
    baseline = [r for r in rows if r.get("kind") == "quality_baseline"]
    assert [r["iteration"] for r in baseline] == [0]
    assert 0 < baseline[0]["fd"] < min(r["fd"] for r in quality)
    assert 0 <= baseline[0]["precision"] <= 1
    html = (run / "report.html").read_text()
    fd_chart = re.search(r'<svg(?:(?!</svg>).)*data-series="fd".*?</svg>', html).group(0)
    assert fd_chart.count('class="ref"') == 1 and "real vs real" in fd_chart
    best_fd = min(r["fd"] for r in quality)
    best = run / "checkpoints" / "best"
    assert f"fd = {best_fd}" in (best / "BEST").read_text()
    assert main(["sample", str(best), "--n", "4", "--out", "b.npy"]) == 0


def test_periodic_quality_needs_a_classifier(in_tmp, capsys):
    assert main(["train", "dcgan_digits", "--name", "q", *TINY,
                 "--set", "train.eval_every=2"]) == 2
    assert "eval_classifier" in capsys.readouterr().err


def test_classifier_training_depends_on_its_seed_not_on_what_ran_before(tmp_path):
    import mindspore as ms

    weights = []
    for i, prior in enumerate((123, 7)):
        ms.set_seed(prior)  # another test, or the GAN before it, moved the global RNG
        ms.nn.Dense(3, 3 + i)  # and drew from it
        train, test = embedded_digits(128, seed=1), embedded_digits(64, seed=2)
        train_classifier(train, test, tmp_path / str(i), epochs=1, batch_size=32, width=4,
                         progress=False)
        extractor, _ = load_classifier(tmp_path / str(i))
        weights.append(extractor(test.x[:8])[1])
    np.testing.assert_array_equal(weights[0], weights[1])
