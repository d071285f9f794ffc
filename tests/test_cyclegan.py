"""CycleGAN (Zhu et al. 2017): the networks' shapes, the history pool, the generator loss
against a numpy recomputation, the unpaired readers, and the digits preset end to end (training,
grids, exact resume, `gantrain sample` in both directions)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from mindspore import Tensor
from PIL import Image

from gantrain.blocks.image_pool import ImagePool
from gantrain.blocks.losses import LEAST_SQUARES
from gantrain.cli.main import main
from gantrain.data.errors import DatasetError
from gantrain.data.unpaired import digit_styles, unpaired_folder
from gantrain.engine.checkpoint import load_parameters, save_parameters
from gantrain.models.cyclegan import InstanceNorm, PatchDiscriminator, ResnetGenerator
from gantrain.recipes.cyclegan.build import _g_loss_fn
from gantrain.recipes.registry import build_run, load_config

from .tracing import LossTrace, fingerprint

# -- networks ----------------------------------------------------------------------------------


@pytest.mark.parametrize("channels, size, down", [(1, 28, 2), (3, 32, 3), (3, 16, 1)])
def test_generator_keeps_the_image_shape_in_tanh_range(channels, size, down):
    G = ResnetGenerator(channels, channels, width=4, downsamplings=down, blocks=2)
    x = np.random.default_rng(0).standard_normal((2, channels, size, size)).astype(np.float32)
    y = G(Tensor(x)).asnumpy()
    assert y.shape == x.shape and np.abs(y).max() <= 1.0


@pytest.mark.parametrize("size, layers, side", [(28, 2, 5), (64, 3, 6), (32, 1, 14)])
def test_patch_discriminator_returns_a_map_of_logits(size, layers, side):
    # stride-2 4x4 convs halve the side `layers` times, the two stride-1 4x4 convs take 1 each
    D = PatchDiscriminator(channels=3, width=4, layers=layers)
    out = D(Tensor(np.zeros((2, 3, size, size), np.float32))).asnumpy()
    assert out.shape == (2, 1, side, side)


def test_instance_norm_normalizes_each_plane():
    x = np.random.default_rng(1).normal(3.0, 2.0, (2, 3, 5, 5)).astype(np.float32)
    y = InstanceNorm()(Tensor(x)).asnumpy()
    mean = x.mean((2, 3), keepdims=True)
    want = (x - mean) / np.sqrt(x.var((2, 3), keepdims=True) + 1e-5)
    np.testing.assert_allclose(y, want, atol=1e-5)


# -- history pool ------------------------------------------------------------------------------


def _images(start: int, n: int) -> np.ndarray:
    """Images whose every pixel is their id, so a returned image tells where it came from."""
    return np.arange(start, start + n, dtype=np.float32)[:, None, None, None] * np.ones(
        (1, 1, 2, 2), np.float32)


def test_pool_returns_the_newest_images_until_it_is_full():
    pool, rng = ImagePool(5, (1, 2, 2)), np.random.default_rng(0)
    np.testing.assert_array_equal(pool.query(_images(0, 3), rng), _images(0, 3))
    np.testing.assert_array_equal(pool.query(_images(3, 2), rng), _images(3, 2))
    assert pool.count == 5
    np.testing.assert_array_equal(ImagePool(0, (1, 2, 2)).query(_images(7, 4), rng),
                                  _images(7, 4))


def test_full_pool_swaps_in_history_half_of_the_time():
    pool, rng = ImagePool(10, (1, 2, 2)), np.random.default_rng(0)
    pool.query(_images(0, 10), rng)
    old = 0
    for k in range(40):
        new = _images(100 + 10 * k, 10)
        out = pool.query(new, rng)[:, 0, 0, 0]
        from_history = out != new[:, 0, 0, 0]
        old += from_history.sum()
        # only images it was given before (earlier in this batch counts, as in the paper's code)
        seen = set(range(10)) | set(range(100, 100 + 10 * (k + 1)))
        assert set(out[from_history].astype(int)) <= seen
    assert 0.4 < old / 400 < 0.6


def test_pool_state_round_trips_through_a_checkpoint_file(tmp_path):
    rng = np.random.default_rng(0)
    pool = ImagePool(4, (1, 2, 2), "pool_a")
    pool.query(_images(0, 6), rng)
    pool.sync_out()
    save_parameters(pool.parameters(), tmp_path / "pool.ckpt")
    other = ImagePool(4, (1, 2, 2), "pool_a")
    load_parameters(other.parameters(), tmp_path / "pool.ckpt")
    other.sync_in()
    assert other.count == pool.count == 4
    state = rng.bit_generator.state
    a = pool.query(_images(50, 8), rng)
    rng.bit_generator.state = state
    np.testing.assert_array_equal(other.query(_images(50, 8), rng), a)


# -- generator loss ----------------------------------------------------------------------------


@pytest.mark.parametrize("cycle_weight, identity_weight", [
    (10.0, 0.5), pytest.param(3.0, 0.0, marks=pytest.mark.slow)])
def test_generator_loss_matches_numpy(cycle_weight, identity_weight):
    nets = [ResnetGenerator(1, 1, width=2, downsamplings=1, blocks=1, outer_kernel=3)
            for _ in range(2)] + [PatchDiscriminator(1, width=2, layers=1) for _ in range(2)]
    G_AB, G_BA, D_A, D_B = nets
    rng = np.random.default_rng(0)
    a, b = (Tensor(rng.uniform(-1, 1, (2, 1, 8, 8)).astype(np.float32)) for _ in range(2))
    loss, aux = _g_loss_fn(G_AB, G_BA, D_A, D_B, LEAST_SQUARES, cycle_weight,
                           identity_weight)(a, b)

    def run(net, x):
        return net(Tensor(x)).asnumpy()

    na, nb = a.asnumpy(), b.asnumpy()
    fake_b, fake_a = run(G_AB, na), run(G_BA, nb)
    terms = {  # the paper's least squares G term E[(D(G(x)) - 1)^2], L1 means
        "adv_ab": np.mean((run(D_B, fake_b) - 1) ** 2),
        "adv_ba": np.mean((run(D_A, fake_a) - 1) ** 2),
        "cycle_a": np.abs(run(G_BA, fake_b) - na).mean(),
        "cycle_b": np.abs(run(G_AB, fake_a) - nb).mean(),
        "identity_a": np.abs(run(G_BA, na) - na).mean() if identity_weight else 0.0,
        "identity_b": np.abs(run(G_AB, nb) - nb).mean() if identity_weight else 0.0,
    }
    for key, want in terms.items():
        np.testing.assert_allclose(float(aux[key].asnumpy()), want, rtol=1e-4, atol=1e-6)
    total = (terms["adv_ab"] + terms["adv_ba"]
             + cycle_weight * (terms["cycle_a"] + terms["cycle_b"])
             + cycle_weight * identity_weight * (terms["identity_a"] + terms["identity_b"]))
    np.testing.assert_allclose(float(loss.asnumpy()), total, rtol=1e-4)
    np.testing.assert_allclose(aux["fake_b"].asnumpy(), fake_b, atol=1e-6)


# -- data --------------------------------------------------------------------------------------


def _write_pngs(folder, n, value, size=(12, 10)):
    folder.mkdir(parents=True)
    for i in range(n):
        Image.fromarray(np.full((*size, 3), value + i, np.uint8)).save(folder / f"{i}.png")


def test_unpaired_folder_reads_the_four_folders(tmp_path):
    _write_pngs(tmp_path / "trainA", 3, 10)
    _write_pngs(tmp_path / "trainB", 2, 200)
    _write_pngs(tmp_path / "testA", 1, 50)
    data = unpaired_folder(tmp_path, size=8, channels=3)
    assert data.train_a.shape == (3, 3, 8, 8) and data.train_b.shape == (2, 3, 8, 8)
    assert data.test_a.shape == (1, 3, 8, 8)
    np.testing.assert_array_equal(data.test_b, data.train_b)  # no testB: the train images
    np.testing.assert_allclose(data.train_b[1, 0, 0, 0], 201 / 127.5 - 1, atol=1e-6)


def test_unpaired_folder_names_a_missing_folder(tmp_path):
    _write_pngs(tmp_path / "trainA", 2, 0)
    with pytest.raises(DatasetError, match=str(tmp_path / "trainB")):
        unpaired_folder(tmp_path, size=8)
    with pytest.raises(DatasetError, match="nowhere"):
        unpaired_folder(tmp_path / "nowhere", size=8)


def test_digit_styles_are_two_visibly_different_domains():
    data = digit_styles(n=40, size=28, test=8, seed=3)
    a, b = data.train_a, data.train_b
    assert a.shape == b.shape == (40, 1, 28, 28)
    assert a.mean() < -0.5 and b.mean() > 0.3  # white on black vs. dark on light
    assert (b < 0).mean() > 1.5 * (a > 0).mean()  # thicker strokes
    np.testing.assert_array_equal(digit_styles(n=40, size=28, test=8, seed=3).test_b,
                                  data.test_b)


# -- the preset end to end ---------------------------------------------------------------------

TINY = ["data.args={n = 48, size = 28, test = 12}", "data.batch_size=4",
        "generator.args.width=4", "generator.args.blocks=1", "discriminator.args.width=4",
        "cyclegan.pool_size=6", "train.progress=false", "train.log_every=2",
        "train.sample_every=3", "train.checkpoint_every=3", "train.grid=24"]


def _make(folder, steps, extra=()):
    run = build_run(load_config("cyclegan_digits", TINY + [f"train.steps={steps}", *extra]),
                    folder)
    trace = LossTrace()
    run.loop.hooks.append(trace)
    return run, trace


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """The tiny preset trained 6 iterations without a break."""
    folder = tmp_path_factory.mktemp("cyclegan") / "straight"
    run, trace = _make(folder, 6)
    g_before = run.cg.generator.parameters[0].asnumpy().copy()
    run.train()
    return run, trace, g_before


@pytest.mark.slow
def test_preset_trains_and_writes_grids_and_cycle_l1(trained):
    run, _, g_before = trained
    assert run.loop.iteration == 6
    assert not np.allclose(g_before, run.cg.generator.parameters[0].asnumpy())
    c = run.config.optim.generator  # linear decay over the second half of the run
    assert (c.lr_schedule, c.decay_steps, c.decay_start) == ("linear_decay", 6, 3)
    samples = run.dir / "samples"
    grid = Image.open(samples / "step_000006.png")  # 6 rows of 4 images, 28 px + 2 px pad, x2
    assert grid.size == (2 * (4 * 30 + 2), 2 * (6 * 30 + 2))
    assert (samples / "final.png").is_file()
    records = [json.loads(line) for line in (run.dir / "metrics.jsonl").read_text().splitlines()]
    evals = [r for r in records if r.get("kind") == "eval"]
    assert [r["iteration"] for r in evals] == [3, 6]
    assert all(0 < r["eval/cycle_l1"] < 2 for r in evals)
    logged = next(r for r in records if "G/loss" in r)
    for term in ("adv_ab", "adv_ba", "cycle_a", "cycle_b", "identity_a", "identity_b"):
        assert f"G/{term}" in logged
    assert {"D/d_a", "D/d_b"} <= set(logged)
    assert run.cg.pools["a"].count == 6  # full: 6 iterations x 4 fakes > pool_size 6


@pytest.mark.slow
def test_interrupted_and_resumed_equals_uninterrupted(trained, tmp_path):
    straight, straight_trace, _ = trained
    first, first_trace = _make(tmp_path / "r", 6)
    first.loop.run(3)  # interrupted at 3; the end hooks save a checkpoint
    resumed, resumed_trace = _make(tmp_path / "r", 6)
    assert resumed.restore(tmp_path / "r") == 3
    np.testing.assert_array_equal(resumed.cg.pools["b"].images, first.cg.pools["b"].images)
    resumed.train()
    assert first_trace.trace + resumed_trace.trace == straight_trace.trace
    assert fingerprint(resumed) == fingerprint(straight)
    for key in ("a", "b"):
        np.testing.assert_array_equal(resumed.cg.pools[key].images,
                                      straight.cg.pools[key].images)


@pytest.mark.slow
def test_sample_translates_both_directions_and_a_folder(trained, in_tmp, capsys):
    run_dir = str(trained[0].dir)
    for direction in ("AB", "BA"):
        assert main(["sample", run_dir, "--direction", direction, "--n", "3"]) == 0
        grid = Image.open(in_tmp / f"translated_{direction}.png")
        assert grid.size == (2 * (6 * 30 + 2), 2 * (30 + 2))  # input | translated, x3
    folder = in_tmp / "mine"
    folder.mkdir()
    for i in range(2):
        Image.fromarray(np.full((40, 40), 30 * i, np.uint8)).save(folder / f"{i}.png")
    assert main(["sample", run_dir, "--input", str(folder), "--grid", "out/g.png",
                 "--out", "out/t.npy"]) == 0
    assert np.load(in_tmp / "out/t.npy").shape == (2, 1, 28, 28)
    assert (in_tmp / "out/g.png").is_file()
    assert main(["sample", run_dir, "--input", str(in_tmp / "missing")]) == 2
    assert "--input" in capsys.readouterr().err
    assert main(["sample", run_dir, "--truncation", "1.0"]) == 2
    assert "--truncation: not an option for 'cyclegan' runs" in capsys.readouterr().err
    assert main(["sample", run_dir, "--no-ema"]) == 2  # no EMA to switch off
    assert "--no-ema: not an option for 'cyclegan' runs" in capsys.readouterr().err


@pytest.mark.slow
def test_two_discriminator_players(in_tmp):
    run, _ = _make("runs/split", 1, ["cyclegan.split_discriminators=true",
                                     "cyclegan.identity_weight=0.0"])
    assert [p.name for p in run.player_list] == ["G", "D_A", "D_B"]
    before = {p.name: p.parameters[0].asnumpy().copy() for p in run.player_list}
    outputs = run.schedule.run_iteration(run.loop.ctx)  # one iteration, without the hooks
    assert list(outputs) == ["G", "D_A", "D_B"]
    for p in run.player_list:
        assert not np.allclose(before[p.name], p.parameters[0].asnumpy()), p.name


def test_linear_decay_starts_halfway_unless_set(tmp_path):
    def resolved(*extra):
        config = load_config("cyclegan_digits", TINY + ["train.steps=1000", *extra])
        return build_run(config, tmp_path / "r").config

    c = resolved()
    assert (c.optim.generator.decay_steps, c.optim.generator.decay_start) == (1000, 500)
    assert (c.optim.discriminator.decay_steps, c.optim.discriminator.decay_start) == (1000, 500)
    c = resolved("optim.generator.decay_start=100", "optim.discriminator.accumulate=2")
    assert c.optim.generator.decay_start == 100
    # D updates every second call: half as many updates to decay over
    assert (c.optim.discriminator.decay_steps, c.optim.discriminator.decay_start) == (500, 250)
