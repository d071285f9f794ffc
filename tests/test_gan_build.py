"""How build_gan composes its pieces: which fields each step receives, the host draws and
their order, penalty objects and where a generator penalty goes, and the messages for
combinations that do not fit."""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import pytest
from mindspore import nn, ops

from gantrain.blocks.augment import AugmentPolicy, draw_augment_params
from gantrain.blocks.losses import get_loss
from gantrain.blocks.penalties import R1, R2, GeneratorPenalty, GradientPenalty, PenaltyInput
from gantrain.config import ConfigError
from gantrain.engine.context import StepContext
from gantrain.engine.optim import Adam
from gantrain.recipes.gan.batches import Draws
from gantrain.recipes.gan.build import build_gan
from gantrain.recipes.registry import build_run, load_config

from .test_gan import B, K, LinearG, Source, TanhD, X, Z, check, make, step


@dataclass(frozen=True)
class OutputEnergy(GeneratorPenalty):
    """A stand-in generator penalty: E[||G(z)||^2] / dim."""

    weight: float
    every: int = 1

    @property
    def factor(self) -> float:
        return self.weight

    def function(self, generator):
        def energy(z, y):
            return ops.square(generator(z, y)).mean()

        return energy


def phase_fields(gan, num_classes=0, image=False):
    source = ImageSource() if image else Source(num_classes)
    ctx = StepContext(source, np.random.default_rng(0))
    return {p.name: set(p.inputs(ctx)[0]) for p in gan.schedule.phases}


class ImageSource:
    def next_batch(self):
        return (np.zeros((B, 1, 8, 8), np.float32), np.zeros(B, np.int64))


def test_each_step_gets_exactly_the_fields_its_loss_reads():
    assert phase_fields(make()[0]) == {"D": {"real", "z"}, "G": {"z"}}
    assert phase_fields(make(penalties=[GradientPenalty(1.0)])[0]) == {
        "D": {"real", "z", "eps"}, "G": {"z"}}
    assert phase_fields(make(num_classes=K, penalties=[R2(1.0, every=2)])[0], K) == {
        "D": {"real", "y_real", "z", "y_fake"}, "D_reg": {"z", "y_fake"}, "G": {"z", "y_fake"}}
    assert phase_fields(make(loss="relativistic_average")[0]) == {
        "D": {"real", "z"}, "G": {"real", "z"}}
    augment = AugmentPolicy("color,translation", image_size=(8, 8))
    gan = build_gan(nn.Dense(Z, 64), nn.Dense(64, 1), z_dim=Z, batch_size=B,
                    loss=get_loss("nonsaturating"), g_optimizer=Adam(1e-3),
                    d_optimizer=Adam(1e-3), augment=augment, penalties=[R1(1.0, every=4)])
    assert phase_fields(gan, image=True) == {
        "D": {"real", "z", "aug_real", "aug_fake"}, "D_reg": {"real", "aug_real"},
        "G": {"z", "aug_fake"}}


def test_draws_keep_the_order_and_shapes_of_older_runs():
    """Each D batch: real, z, labels, eps, augmentation of real, of fake; each G batch of a
    relativistic loss: real, its augmentation, z, labels, augmentation of fake. Unread draws
    (labels of an unconditional GAN, eps without WGAN-GP) are still made."""
    policy = AugmentPolicy("color,translation,cutout", image_size=(8, 8))
    draws = Draws(batch_size=B, z_dim=Z, num_classes=0, augment=policy)
    ctx = StepContext(ImageSource(), np.random.default_rng(5))
    d, g = draws.d_batch(ctx), draws.g_batch(ctx, with_real=True)
    rng = np.random.default_rng(5)
    z = rng.standard_normal((B, Z), dtype=np.float32)
    y = rng.integers(0, 1, size=B, dtype=np.int32)
    eps = rng.random((B, 1, 1, 1), dtype=np.float32)
    aug = [np.stack(draw_augment_params(rng, B, (8, 8), policy.policy)) for _ in range(2)]
    g_aug_real = np.stack(draw_augment_params(rng, B, (8, 8), policy.policy))
    g_z = rng.standard_normal((B, Z), dtype=np.float32)
    g_y = rng.integers(0, 1, size=B, dtype=np.int32)
    g_aug_fake = np.stack(draw_augment_params(rng, B, (8, 8), policy.policy))
    for got, want in [(d.z, z), (d.y_fake, y), (d.eps, eps), (d.aug_real, aug[0]),
                      (d.aug_fake, aug[1]), (g.aug_real, g_aug_real), (g.z, g_z),
                      (g.y_fake, g_y), (g.aug_fake, g_aug_fake)]:
        np.testing.assert_array_equal(got.asnumpy(), want.astype(got.asnumpy().dtype))
    assert d.y_real is None and g.y_real is None  # labels only for a conditional GAN


def logged_keys(gan, num_classes=0):
    ctx = StepContext(Source(num_classes), np.random.default_rng(0))
    return {p.name: set(p.target.step(*p.inputs(ctx))[1]) for p in gan.schedule.phases}


def test_each_step_logs_only_the_terms_the_run_has():
    """A plain GAN logs no ``penalty`` or ``class``: a flat zero curve in every report of an
    unconditional run said nothing and hid the terms that do exist."""
    assert logged_keys(make()[0]) == {"D": {"adv", "real", "fake"}, "G": {"adv", "fake"}}
    assert logged_keys(make(penalties=[R1(1.0)])[0])["D"] == {"adv", "real", "fake", "penalty"}
    assert logged_keys(make(penalties=[R1(1.0, every=2)])[0]) == {
        "D": {"adv", "real", "fake"}, "D_reg": {"penalty"}, "G": {"adv", "fake"}}
    assert logged_keys(make(num_classes=K, aux_weight=1.0)[0], K) == {
        "D": {"adv", "real", "fake", "class"}, "G": {"adv", "fake", "class"}}
    gan = build_gan(LinearG(0, 0), TanhD(X, 1, 0), z_dim=Z, batch_size=B,
                    loss=get_loss("nonsaturating"), g_optimizer=Adam(1e-3),
                    d_optimizer=Adam(1e-3), penalties=[OutputEnergy(0.5)])
    assert logged_keys(gan)["G"] == {"adv", "fake", "penalty"}


def test_penalty_objects_know_their_input_and_schedule():
    r1, r2, gp = R1(gamma=10.0, every=16), R2(gamma=4.0), GradientPenalty()
    assert (r1.reads, r2.reads, gp.reads) == (PenaltyInput.REAL, PenaltyInput.FAKE,
                                              PenaltyInput.INTERPOLATES)
    assert (r1.lazy, r2.lazy, gp.lazy) == (True, False, False)
    assert (r1.coefficient, r2.coefficient, gp.coefficient) == (5.0 * 16, 2.0, 10.0)
    with pytest.raises(ValueError, match="every D step"):
        GradientPenalty(10.0, every=2)
    with pytest.raises(ValueError, match="every must be an int >= 1"):
        R1(1.0, every=0)
    with pytest.raises(ValueError, match="weight must be >= 0"):
        R2(float("nan"))


@pytest.mark.parametrize("every", [1, 2])
def test_a_generator_penalty_belongs_to_g(every):
    gan, G, D = make(penalties=[OutputEnergy(0.3, every=every)])
    names = [(p.name, p.every) for p in gan.schedule.phases]
    if every == 1:  # inline: a term of G's loss
        assert names == [("D", 1), ("G", 1)]
        b, out, g, d = step(gan, "G", G, D)
        assert set(b) == {"z"}
        fake = g(b["z"])
        energy = (fake**2).mean()
        adv = np.logaddexp(0.0, -d(fake)[0]).mean()
        check(out, adv + 0.3 * energy, adv=adv, penalty=energy)
    else:  # lazy: G's own objective, weight x every
        assert names == [("D", 1), ("G", 1), ("G_reg", 2)]
        b, out, g, d = step(gan, "G_reg", G, D)
        assert set(b) == {"z"}
        energy = (g(b["z"]) ** 2).mean()
        check(out, 0.3 * 2 * energy, penalty=energy)
        assert gan.schedule.phases[2].target.player is gan.generator


def test_bad_combinations_are_refused_where_they_are_built():
    with pytest.raises(ValueError, match=r"pack > 1 \(PacGAN\) is for unconditional GANs"):
        make(num_classes=K, pack=2)
    # ACGAN with R1 inline or lazy: both build (inline was refused while R1 returned logits)
    assert phase_fields(make(num_classes=K, aux_weight=1.0, penalties=[R1(1.0)])[0], K) == {
        "D": {"real", "y_real", "z", "y_fake"}, "G": {"z", "y_fake"}}
    make(num_classes=K, aux_weight=1.0, penalties=[R1(1.0, every=2)])
    with pytest.raises(ValueError, match=r"aux_weight > 0 \(ACGAN\) needs num_classes > 0"):
        build_gan(LinearG(0), TanhD(2, 1), z_dim=Z, batch_size=B, loss=get_loss("hinge"),
                  g_optimizer=Adam(1e-3), d_optimizer=Adam(1e-3), aux_weight=1.0)
    with pytest.raises(ValueError, match="at most one penalty per player"):
        make(penalties=[R1(1.0), GradientPenalty(1.0)])
    with pytest.raises(TypeError, match="Penalty objects"):
        build_gan(LinearG(0), TanhD(2, 1), z_dim=Z, batch_size=B, loss=get_loss("hinge"),
                  g_optimizer=Adam(1e-3), d_optimizer=Adam(1e-3), penalties=["r1"])
    with pytest.raises(ValueError, match="divides batch_size"):
        make(pack=3)


def test_config_penalties_map_to_penalty_objects(in_tmp):
    base = ["gan.pack=1", "discriminator.args.in_dim=2", "data.batch_size=64",
            "generator.args.width=8", "discriminator.args.width=8"]
    run = build_run(load_config("gan_2d_ring", base + ['gan.penalty="r2"',
                                                       "gan.penalty_weight=0.5",
                                                       "gan.penalty_every=3"]), "runs/a")
    assert [(p.name, p.every) for p in run.schedule.phases] == [("D", 1), ("D_reg", 3),
                                                                ("G", 1)]
    with pytest.raises(ConfigError, match="gan.penalty = 'r3'; allowed: none, gp, r1, r2"):
        build_run(load_config("gan_2d_ring", base + ['gan.penalty="r3"']), "runs/b")
    with pytest.raises(ConfigError, match="gan.augment = 'color' augments images"):
        build_run(load_config("gan_2d_ring", base + ['gan.augment="color"']), "runs/c")


def test_d_step_compiles_once_for_fresh_batches():
    """The step input, an ms.mutable dict of Tensors, does not recompile per call; a NamedTuple
    or a plain dict argument would (docs/mindspore-notes.md, item 12)."""
    gan = make(penalties=[GradientPenalty(1.0)])[0]
    phase = gan.schedule.phases[0]
    ctx = StepContext(Source(), np.random.default_rng(0))
    times = []
    for _ in range(6):
        (batch,) = phase.inputs(ctx)
        start = time.perf_counter()
        phase.target.step(batch)[0].asnumpy()
        times.append(time.perf_counter() - start)
    assert np.median(times[1:]) < 0.25 * times[0], times
