"""ALI / BiGAN (Dumoulin et al. 2017; Donahue et al. 2017): D judges (x, E(x)) against (G(z), z),
the G/E player has D's loss with the labels swapped, each step changes only its own player's
weights, the stochastic encoder's noise comes from the host (exact resume), and the presets
train end to end with mixture metrics, reconstruction grids and `gantrain sample`."""

from __future__ import annotations

import json

import numpy as np
import pytest
from mindspore import Tensor, nn, ops

from gantrain import Adam
from gantrain.blocks.losses import NONSATURATING
from gantrain.blocks.penalties import R1, R2, GradientPenalty
from gantrain.cli.main import main
from gantrain.config import ConfigError
from gantrain.data.registry import build_data
from gantrain.models.ali import JointConvDiscriminator, JointMLPDiscriminator
from gantrain.recipes.ali.build import build_ali, check_ali_shapes
from gantrain.recipes.registry import build_run, load_config

from .tracing import LossTrace, fingerprint

X_DIM, Z_DIM, B = 2, 3, 5


class Linear(nn.Cell):
    """y = x @ W.T + b with seeded weights; D(x, z) = concat(x, z) @ w (x first)."""

    def __init__(self, d_in: int, d_out: int, seed: int, joint: bool = False) -> None:
        super().__init__()
        rng = np.random.default_rng(seed)
        self.fc = nn.Dense(d_in, d_out)
        self.fc.weight.set_data(Tensor(rng.standard_normal((d_out, d_in)).astype(np.float32)))
        self.fc.bias.set_data(Tensor(rng.standard_normal(d_out).astype(np.float32)))
        self.joint = joint

    def construct(self, x, z=None):
        if self.joint:
            return self.fc(ops.concat((x, z), 1)).squeeze(-1)
        return self.fc(x)

    def numpy(self, x, z=None):
        w, b = self.fc.weight.asnumpy(), self.fc.bias.asnumpy()
        h = np.concatenate([x, z], 1) if self.joint else x
        out = h @ w.T + b
        return out[:, 0] if self.joint else out


def softplus(v):
    return np.logaddexp(0.0, v)


def tiny_ali(stochastic: bool, penalty=None, cycle_weight: float = 0.0):
    G = Linear(Z_DIM, X_DIM, 0)
    E = Linear(X_DIM, Z_DIM * (2 if stochastic else 1), 1)
    D = Linear(X_DIM + Z_DIM, 1, 2, joint=True)
    ali = build_ali(G, E, D, z_dim=Z_DIM, batch_size=B, loss=NONSATURATING,
                    g_optimizer=Adam(0.1), d_optimizer=Adam(0.1), stochastic=stochastic,
                    penalty=penalty, cycle_weight=cycle_weight)
    return ali, G, E, D


def inputs(seed: int):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype(np.float32) for s in ((B, X_DIM), (B, Z_DIM),
                                                                  (B, Z_DIM))]


def encode(E, x, eps, stochastic):
    h = E.numpy(x)
    return h[:, :Z_DIM] + np.exp(h[:, Z_DIM:]) * eps if stochastic else h


def snapshot(cells):
    return [p.asnumpy().copy() for c in cells for p in c.trainable_params()]


def changed(before, cells):
    return [not np.array_equal(a, p.asnumpy())
            for a, p in zip(before, [p for c in cells for p in c.trainable_params()])]


@pytest.mark.slow
@pytest.mark.parametrize("stochastic", [False, True])
def test_losses_match_numpy_with_swapped_labels(stochastic):
    ali, G, E, D = tiny_ali(stochastic)
    x, eps, z = inputs(0)
    d_real = D.numpy(x, encode(E, x, eps, stochastic))  # (x, E(x)): labelled real by D
    d_fake = D.numpy(G.numpy(z), z)  # (G(z), z): labelled fake by D
    want_d = softplus(-d_real).mean() + softplus(d_fake).mean()
    before = snapshot([G, E, D])
    loss, aux = ali.discriminator.step(Tensor(x), Tensor(eps), Tensor(z))
    np.testing.assert_allclose(float(loss.asnumpy()), want_d, rtol=1e-5)
    np.testing.assert_allclose(float(aux["real"].asnumpy()), d_real.mean(), rtol=1e-5)
    # D's step moved D only
    moved = changed(before, [G, E, D])
    n_g, n_e = len(G.trainable_params()), len(E.trainable_params())
    assert not any(moved[: n_g + n_e]) and all(moved[n_g + n_e:])

    d_real = D.numpy(x, encode(E, x, eps, stochastic))  # with D's new weights
    d_fake = D.numpy(G.numpy(z), z)
    want_ge = softplus(-d_fake).mean() + softplus(d_real).mean()  # labels swapped
    before = snapshot([G, E, D])
    loss, _ = ali.generator.step(Tensor(x), Tensor(eps), Tensor(z))
    np.testing.assert_allclose(float(loss.asnumpy()), want_ge, rtol=1e-5)
    moved = changed(before, [G, E, D])  # the G/E step moves both G and E, not D
    assert all(moved[: n_g + n_e]) and not any(moved[n_g + n_e:])


@pytest.mark.parametrize("penalty", [R1(4.0), R2(4.0)])
def test_d_penalty_is_on_the_gradient_for_the_whole_pair(penalty):
    """For a linear joint D(x, z) = [x, z] . w + b the gradient with respect to the pair is w
    at every pair, real or fake: D's loss gains gamma / 2 * ||w||^2 (x's and z's weights both;
    a penalty on x alone would give only x's part)."""
    ali, G, E, D = tiny_ali(False, penalty)
    x, eps, z = inputs(0)
    d_real, d_fake = D.numpy(x, E.numpy(x)), D.numpy(G.numpy(z), z)
    adv = softplus(-d_real).mean() + softplus(d_fake).mean()
    w = D.fc.weight.asnumpy().copy()  # asnumpy shares the parameter's memory
    loss, aux = ali.discriminator.step(Tensor(x), Tensor(eps), Tensor(z))
    np.testing.assert_allclose(float(aux["penalty"].asnumpy()), (w**2).sum(), rtol=1e-5)
    np.testing.assert_allclose(float(aux["adv"].asnumpy()), adv, rtol=1e-5)
    np.testing.assert_allclose(float(loss.asnumpy()), adv + 2.0 * (w**2).sum(), rtol=1e-5)


def test_cycle_term_adds_the_reconstruction_error_to_the_ge_loss():
    """ALICE (Li et al. 2017): G/E's loss gains weight * mean((G(E(x)) - x)^2), per element."""
    ali, G, E, D = tiny_ali(False, cycle_weight=3.0)
    x, eps, z = inputs(0)
    d_real, d_fake = D.numpy(x, E.numpy(x)), D.numpy(G.numpy(z), z)
    adv = softplus(-d_fake).mean() + softplus(d_real).mean()  # labels swapped
    cycle = ((G.numpy(E.numpy(x)) - x) ** 2).mean()
    loss, aux = ali.generator.step(Tensor(x), Tensor(eps), Tensor(z))
    np.testing.assert_allclose(float(aux["cycle"].asnumpy()), cycle, rtol=1e-5)
    np.testing.assert_allclose(float(loss.asnumpy()), adv + 3.0 * cycle, rtol=1e-5)
    with pytest.raises(ValueError, match="cycle_weight must be >= 0"):
        tiny_ali(False, cycle_weight=-1.0)


class Heads(Linear):
    """A joint linear D with three scores per pair, (B, 3), as BigBiGAN's unary form."""

    heads = 3

    def construct(self, x, z=None):
        return self.fc(ops.concat((x, z), 1))

    def numpy(self, x, z=None):
        w, b = self.fc.weight.asnumpy(), self.fc.bias.asnumpy()
        return np.concatenate([x, z], 1) @ w.T + b


def test_each_head_is_scored_and_the_objectives_averaged():
    """BigBiGAN (Donahue & Simonyan 2019): a D with s_x, s_z and s_xz; each player's loss is
    the GAN objective on every head, averaged."""
    G, E = Linear(Z_DIM, X_DIM, 0), Linear(X_DIM, Z_DIM, 1)
    D = Heads(X_DIM + Z_DIM, 3, 2)
    ali = build_ali(G, E, D, z_dim=Z_DIM, batch_size=B, loss=NONSATURATING,
                    g_optimizer=Adam(0.1), d_optimizer=Adam(0.1))
    x, eps, z = inputs(1)
    d_real, d_fake = D.numpy(x, E.numpy(x)), D.numpy(G.numpy(z), z)  # (B, 3) each
    want_d = np.mean([softplus(-d_real[:, h]).mean() + softplus(d_fake[:, h]).mean()
                      for h in range(3)])
    loss, _ = ali.discriminator.step(Tensor(x), Tensor(eps), Tensor(z))
    np.testing.assert_allclose(float(loss.asnumpy()), want_d, rtol=1e-5)
    d_real, d_fake = D.numpy(x, E.numpy(x)), D.numpy(G.numpy(z), z)
    want_ge = np.mean([softplus(-d_fake[:, h]).mean() + softplus(d_real[:, h]).mean()
                       for h in range(3)])
    loss, _ = ali.generator.step(Tensor(x), Tensor(eps), Tensor(z))
    np.testing.assert_allclose(float(loss.asnumpy()), want_ge, rtol=1e-5)


@pytest.mark.parametrize("form", ["mlp", "conv"])
def test_unary_discriminator_scores_x_and_z_apart(form):
    if form == "mlp":
        D, x_shape = JointMLPDiscriminator(x_dim=2, z_dim=3, width=16, depth=2, unary=True), (2,)
    else:
        D = JointConvDiscriminator(channels=1, size=28, z_dim=3, width=4, z_width=8,
                                   joint_width=8, unary=True)
        x_shape = (1, 28, 28)
    rng = np.random.default_rng(0)
    x, other_x = (Tensor(rng.standard_normal((4, *x_shape)).astype(np.float32)) for _ in "ab")
    z, other_z = (Tensor(rng.standard_normal((4, 3)).astype(np.float32)) for _ in "ab")
    base = D(x, z).asnumpy()
    assert base.shape == (4, 3) and D.heads == 3
    new_z, new_x = D(x, other_z).asnumpy(), D(other_x, z).asnumpy()
    np.testing.assert_array_equal(new_z[:, 0], base[:, 0])  # s_x does not read z
    np.testing.assert_array_equal(new_x[:, 1], base[:, 1])  # s_z does not read x
    assert not np.allclose(new_z[:, 1:], base[:, 1:]) and not np.allclose(new_x[:, ::2],
                                                                           base[:, ::2])


@pytest.mark.parametrize("stochastic, width, message", [
    (False, Z_DIM + 1, rf"returned shape \(2, {Z_DIM + 1}\).*expected \(2, {Z_DIM}\) "
                       r"\(deterministic: z_dim"),
    (True, Z_DIM, rf"returned shape \(2, {Z_DIM}\).*expected \(2, {2 * Z_DIM}\) "
                  r"\(stochastic: 2\*z_dim"),
])
def test_an_encoder_of_the_wrong_width_is_named(stochastic, width, message):
    # an encoder whose args carry no z_dim: only the dry run can see its width
    G, E, D = Linear(Z_DIM, X_DIM, 0), Linear(X_DIM, width, 1), Linear(X_DIM + Z_DIM, 1, 2, True)
    with pytest.raises(ConfigError, match=message):
        check_ali_shapes(G, E, D, z_dim=Z_DIM, sample_shape=(X_DIM,), stochastic=stochastic)


def test_a_d_returning_fewer_scores_than_its_heads_is_named():
    G, E, D = Linear(Z_DIM, X_DIM, 0), Linear(X_DIM, Z_DIM, 1), Linear(X_DIM + Z_DIM, 1, 2, True)
    D.heads = 3
    with pytest.raises(ConfigError, match=r"returned shape \(2,\) for 2 \(x, z\) pairs; "
                                          r"expected 3 logits per pair"):
        check_ali_shapes(G, E, D, z_dim=Z_DIM, sample_shape=(X_DIM,), stochastic=False)


@pytest.mark.parametrize("penalty", [GradientPenalty(10.0), R1(10.0, every=16)])
def test_build_refuses_penalties_ali_cannot_run(penalty):
    with pytest.raises(ValueError, match="inline R1 or R2"):
        tiny_ali(False, penalty)


def test_stochastic_noise_is_drawn_on_the_host():
    ali, *_ = tiny_ali(stochastic=True)

    class Data:
        def next_batch(self):
            return (np.ones((B, X_DIM), np.float32),)

    from gantrain.engine.context import StepContext

    phase = ali.schedule.phases[0]
    a = phase.inputs(StepContext(Data(), np.random.default_rng(7)))
    b = phase.inputs(StepContext(Data(), np.random.default_rng(7)))
    assert a[1].shape == (B, Z_DIM) and a[2].shape == (B, Z_DIM)
    np.testing.assert_array_equal(a[1].asnumpy(), b[1].asnumpy())
    assert not np.array_equal(a[1].asnumpy(), a[2].asnumpy())


SMALL_2D = ["train.progress=false", "train.log_every=10", "train.samples=200",
            "data.batch_size=96"]


@pytest.mark.slow
def test_stochastic_run_resumes_exactly(tmp_path):
    """Restoring the checkpoint of iteration 6 and training on repeats iterations 7-10 to the
    last bit: the encoder noise comes from the saved host RNG (in-graph noise would not)."""
    overrides = SMALL_2D + ["encoder.args.stochastic=true", "train.steps=10",
                            "train.sample_every=1000", "train.checkpoint_every=6"]
    run = build_run(load_config("ali_2d_ring", overrides), tmp_path / "a")
    assert run.ali.stochastic
    trace = LossTrace()
    run.loop.hooks.append(trace)
    run.train()
    first, straight = trace.trace, fingerprint(run)
    trace.trace = []
    assert run.restore(tmp_path / "a/checkpoints/step_00000006") == 6
    run.train()
    assert trace.trace == [t for t in first if t[0] > 6] and len(trace.trace) == 8
    again = fingerprint(run)
    assert [k for k in straight if straight[k] != again[k]] == []


@pytest.mark.slow
def test_2d_preset_reports_mixture_metrics(in_tmp, capsys):
    config = load_config("ali_2d_grid", SMALL_2D + [
        "train.steps=30", "train.sample_every=30", "train.checkpoint_every=30"])
    run = build_run(config, "runs/ali")
    run.train()
    report = run.last_report
    assert report is not None and report.total_modes == 25 and report.samples == 200
    assert (in_tmp / "runs/ali/samples/step_000030.png").is_file()
    evals = [json.loads(line) for line in open("runs/ali/metrics.jsonl")]
    evals = [r for r in evals if r.get("kind") == "eval"]
    assert {"eval/modes", "eval/high_quality", "eval/reverse_kl", "eval/recon_mse",
            "eval/mode_match"} <= set(evals[-1])
    assert main(["eval", "runs/ali", "--n", "500"]) == 0
    report = json.loads((in_tmp / "runs/ali/eval.json").read_text())
    assert report["mixture"]["total_modes"] == 25 and report["samples"] == 500
    assert report["reconstruction"]["examples"] == 1000 and report["ema"] is True
    assert 0 <= report["reconstruction"]["mode_match"] <= 1
    assert main(["sample", "runs/ali", "--n", "50", "--out", "s.npy"]) == 0
    assert "in their input's mode" in capsys.readouterr().out
    assert np.load("s.npy").shape == (50, 2)
    assert np.load("s_recon.npy").shape == (50, 2, 2)  # (x, G(E(x))) pairs
    assert main(["sample", "runs/ali", "--n", "50", "--drs", "80", "--out", "k.npy"]) == 0
    assert np.load("k.npy").shape == (50, 2)  # the preset's unary D scores x alone


@pytest.mark.slow
def test_drs_and_mh_draw_the_samples_the_x_only_score_rates_more_real(in_tmp, capsys):
    """BigBiGAN's s_x is a GAN discriminator on x alone, so `gantrain sample --drs` can
    reject by it (Azadi et al. 2019) and `--mh` run Metropolis-Hastings chains on it (Turner et
    al. 2019): their samples score higher than plain ones."""
    config = load_config("ali_2d_ring", SMALL_2D + [
        "discriminator.args.unary=true", "train.steps=40", "train.sample_every=40",
        "train.checkpoint_every=40"])
    build_run(config, "runs/u").train()
    assert main(["sample", "runs/u", "--n", "300", "--out", "plain.npy"]) == 0
    assert main(["sample", "runs/u", "--n", "300", "--drs", "90", "--out", "kept.npy"]) == 0
    assert "kept by discriminator rejection sampling on D's x-only score" in \
        capsys.readouterr().out
    assert main(["sample", "runs/u", "--n", "300", "--mh", "20", "--out", "chained.npy"]) == 0
    assert "Metropolis-Hastings chains of 20 proposals on D's x-only score" in \
        capsys.readouterr().out
    from gantrain.engine import checkpoint
    from gantrain.recipes.ali.run import build_nets
    from gantrain.recipes.sampling import load_player_nets

    _, _, D = build_nets(config)
    load_player_nets(checkpoint.resolve("runs/u"), "D", {"D": D})
    D.set_train(False)

    def s_x(path):
        x = np.load(path)
        return D(Tensor(x), Tensor(np.zeros((len(x), 2), np.float32))).asnumpy()[:, 0]

    kept, chained, plain = s_x("kept.npy"), s_x("chained.npy"), s_x("plain.npy")
    assert len(kept) == len(chained) == 300
    # drawn by score: at random the means would differ by ~0.08 std (300 samples each)
    for drawn in (kept, chained):
        assert drawn.mean() - plain.mean() > 0.3 * plain.std(), (drawn.mean(), plain.mean(),
                                                                 plain.std())

    # a D that judges pairs only has no x-only score: refused by name before anything loads
    build_run(load_config("ali_2d_ring", SMALL_2D + [
        "discriminator.args.unary=false", "train.steps=2", "train.sample_every=2",
        "train.checkpoint_every=2"]), "runs/pairs").train()
    capsys.readouterr()
    assert main(["sample", "runs/pairs", "--n", "50", "--drs", "80"]) == 2
    assert "discriminator.args.unary = true" in capsys.readouterr().err
    assert main(["sample", "runs/pairs", "--n", "50", "--mh", "5"]) == 2
    assert "--mh on an ALI run needs a discriminator that scores x alone" in \
        capsys.readouterr().err


@pytest.mark.slow
def test_digits_run_writes_reconstructions_and_samples(in_tmp, capsys):
    overrides = ["data.args={n = 256, size = 28}", "data.batch_size=16",
                 "generator.args.width=8", "encoder.args.width=8", "discriminator.args.width=8",
                 "discriminator.args.z_width=16", "discriminator.args.joint_width=16",
                 "train.steps=4", "train.sample_every=4", "train.checkpoint_every=4",
                 "train.log_every=2", "train.grid=16"]
    assert main(["train", "ali_digits", "--name", "d", *sum([["--set", o] for o in overrides],
                                                            [])]) == 0
    folder = in_tmp / "runs/d/samples"
    assert (folder / "recon_step_000004.png").is_file() and (folder / "recon_final.png").is_file()
    records = [json.loads(line) for line in open("runs/d/metrics.jsonl")]
    last = [r for r in records if r.get("kind") == "eval"][-1]
    assert last["eval/recon_mse"] > 0 and last["eval/recon_mse_shuffled"] > 0
    assert last["eval/recon_examples"] == "embedded digits, seed 2000"
    from PIL import Image

    # 4 pairs of rows of 8 images (x, G(E(x))), 28 px + 2 px padding, scaled 2x
    assert Image.open(folder / "recon_final.png").size == (2 * (8 * 30 + 2), 2 * (8 * 30 + 2))
    capsys.readouterr()
    assert main(["sample", "runs/d", "--n", "16", "--grid", "out/s.png"]) == 0
    assert "reconstructions of embedded digits, seed 2000" in capsys.readouterr().out
    assert (in_tmp / "out/s.png").is_file() and (in_tmp / "out/s_recon.png").is_file()


@pytest.mark.parametrize("overrides, message", [
    (["encoder.args.z_dim=3"], r"encoder.args.z_dim = 3 but gan.z_dim = 2: the noise has "
                               r"gan.z_dim entries; leave encoder.args.z_dim out"),
    (["discriminator.args.z_dim=1"], r"discriminator.args.z_dim = 1 but gan.z_dim = 2"),
    (["gan.pack=2"], r"task 'ali' does not read 'gan.pack'.*loss, z_dim, n_critic"),
    (['gan.penalty="gp"'], r"gan.penalty = 'gp'; allowed: none, r1, r2"),
    (["gan.cycle_weight=-0.5"], r"gan.cycle_weight must be >= 0, got -0.5"),
    (["gan.penalty_every=16"], r"task 'ali' does not read 'gan.penalty_every'"),
    (['gan.penalty="r1"', "gan.penalty_weight=-1.0"], r"\[gan\] penalty: R1: the weight must "
                                                      r"be >= 0, got -1.0"),
])
def test_config_mistakes_are_named(overrides, message, tmp_path):
    with pytest.raises(ConfigError, match=message):
        build_run(load_config("ali_2d_ring", overrides), tmp_path / "run")


def test_reconstructions_are_of_examples_the_run_did_not_train_on(tmp_path):
    from gantrain.recipes.ali.examples import evaluation_examples

    from .data.test_idx import write_mnist

    def examples(preset, overrides):
        config = load_config(preset, overrides)
        data = build_data(config.data.dataset, config.data.args, 8, config.seed)
        return data, evaluation_examples(config, data, 6, seed=0)

    data, (x, source) = examples("ali_2d_ring", [])
    assert source == "fresh mixture draws" and x.shape == (6, 2)
    data, (x, source) = examples("ali_digits", ["data.args={n = 64, size = 28}"])
    assert source == "embedded digits, seed 2000" and x.shape == (6, 1, 28, 28)
    gaps = np.abs(x[:, None] - data.dataset.x[None]).reshape(6, 64, -1).max(-1)
    assert gaps.min() > 0.5  # no held-out digit is a training one
    # MNIST without its test files: the first training examples, and the log says why
    write_mnist(tmp_path, "train", n=12)
    data, (x, source) = examples("ali_digits", ['data.dataset="mnist"',
                                                f"data.args={{root = \"{tmp_path}\"}}"])
    assert source.startswith("training examples, none held out"), source
    assert "2 of 2 files missing" in source
    np.testing.assert_array_equal(x, data.dataset.x[:6])
