"""``gantrain sample`` and ``gantrain eval`` for GAN runs: the trained generator (EMA weights
by default) and what it draws from plain or truncated noise, interpolations or one class, or
with the trained D: kept by discriminator rejection sampling (``--drs``), as the ends of
Metropolis-Hastings chains (``--mh``), or from noise moved by discriminator optimal transport
(``--dot``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ...blocks import latents
from ...blocks.metropolis import CALIBRATION, mh_sample
from ...blocks.rejection import check_density_ratio_loss, rejection_sample
from ...config.imports import build_cell
from ...config.strict import ConfigError
from ...data.registry import build_data
from ...engine.sampling import Sampler
from ..sampling import (
    Drawn,
    SampleOptions,
    check_drs,
    check_mh,
    check_one_critic_method,
    load_player_nets,
)
from ..shapes import build_latent_net
from .config import GANConfig


@dataclass
class GANSampleOptions(SampleOptions):
    ema: bool = True  # the averaged weights, when the run kept them
    label: int | None = None  # one class of a conditional generator
    truncation: float | None = None  # resample noise entries with |z| above this
    interpolate: int | None = None  # rows of this many images along slerp paths
    drs: float | None = None  # discriminator rejection sampling at this percentile of F
    dot: int | None = None  # discriminator optimal transport of the noise, this many steps
    mh: int | None = None  # Metropolis-Hastings chains of this many proposals

    def __post_init__(self) -> None:
        super().__post_init__()
        check_drs(self.drs, self.interpolate)
        check_mh(self.mh, self.interpolate)
        if self.dot is not None and self.dot < 1:
            raise ConfigError(f"--dot is a number of steps >= 1, got {self.dot}")
        check_one_critic_method(drs=self.drs, dot=self.dot, mh=self.mh)


PARTNERS = 8  # packs a sample is scored in, each with other random samples, when D packs


def load_generator(ckpt: Path, config: GANConfig, ema: bool = True) -> Sampler:
    """The run's generator in eval mode; its EMA weights when it kept them and ``ema``."""
    G = build_latent_net(config.gan.z_dim, "generator", config.generator)
    load_player_nets(ckpt, "G", {"G": G}, ema=ema and config.gan.ema_decay is not None)
    return Sampler(G, config.gan.num_classes > 0)


def load_discriminator(ckpt: Path, config: GANConfig):
    """The run's trained D (the nets a sampling-time method uses next to the generator)."""
    D = build_cell(config.discriminator.model, config.discriminator.args, "discriminator")
    load_player_nets(ckpt, "D", {"D": D})
    return D


def load_critic(ckpt: Path, config: GANConfig, rng: np.random.Generator):
    """``x -> logits (N,)``: the run's D in eval mode (see :func:`critic_score`)."""
    return critic_score(load_discriminator(ckpt, config), config.gan.pack, rng)


def critic_score(D, m: int, rng: np.random.Generator):
    """``x -> logits (N,)``: ``D`` (set to eval mode) scoring each sample.

    A PacGAN D judges packs of m samples; its logit is then the sum of the m samples' log
    ratios (at the optimum), so a sample's score is its pack logit averaged over
    ``PARTNERS`` packs with random other samples of the same batch: the partners add the
    same constant in expectation, which DRS's maximum cancels.
    """
    from mindspore import Tensor

    from .wrappers import packed

    D.set_train(False)
    view = packed(D, m)

    def score(x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=np.float32)
        if m == 1:
            return np.asarray(view(Tensor(x)).asnumpy(), dtype=np.float64).reshape(-1)
        n = len(x)
        total = np.zeros(n)
        for _ in range(PARTNERS):
            others = rng.integers(0, n, size=(n, m - 1))
            packs = np.concatenate([x[:, None], x[others]], axis=1)  # (n, m, ...)
            out = view(Tensor(packs.reshape((n * m,) + x.shape[1:]))).asnumpy()
            total += np.asarray(out, dtype=np.float64).reshape(-1)
        return total / PARTNERS

    return score


def ratio_critic(ckpt: Path, config: GANConfig, options: GANSampleOptions, generate,
                 rng: np.random.Generator, flag: str, raw_ratio: bool):
    """``(draw, score)`` for a method that reads D's logit as a log density ratio (DRS, MH):
    ``k -> k`` samples of the generator, and D's logits for samples. Refuses conditional runs
    and, when the method takes the raw logit as the ratio (``raw_ratio``: DRS; MH calibrates
    it first), losses whose logit is not one, naming ``flag``."""
    if config.gan.num_classes > 0:
        raise ConfigError(f"{flag} is for unconditional GAN runs; this run is class-conditional")
    if raw_ratio:
        check_density_ratio_loss(config.gan.loss, flag)
    score = load_critic(ckpt, config, rng)

    def draw(k: int) -> np.ndarray:
        z = latents.draw(rng, k, config.gan.z_dim, options.truncation, None)
        return generate(z, latents.labels(rng, k, 0, None))

    return draw, score


def drs_samples(ckpt: Path, config: GANConfig, options: GANSampleOptions, generate,
                rng: np.random.Generator) -> tuple[np.ndarray, float]:
    """``options.n`` samples kept by discriminator rejection sampling, and the share kept."""
    draw, score = ratio_critic(ckpt, config, options, generate, rng, "--drs", raw_ratio=True)
    return rejection_sample(draw, score, options.n, rng, percentile=options.drs)


def real_samples(config: GANConfig, n: int, rng: np.random.Generator) -> np.ndarray:
    """Real samples for MH's chains and calibration: fresh draws of a 2D mixture, else up to
    ``n`` random examples of the run's dataset."""
    data = build_data(config.data.dataset, config.data.args, config.data.batch_size, config.seed)
    if data.mixture is not None:
        return data.mixture.sample(rng, n).astype(np.float32)
    x = data.dataset.x
    return np.asarray(x[np.sort(rng.choice(len(x), size=min(n, len(x)), replace=False))],
                      np.float32)


def mh_samples(ckpt: Path, config: GANConfig, options: GANSampleOptions, generate,
               rng: np.random.Generator) -> tuple[np.ndarray, dict[str, float]]:
    """``options.n`` samples, each the end of a calibrated Metropolis-Hastings chain. Any
    critic serves: the calibration maps its logit to a log ratio (Turner et al. wrap WGAN
    critics too)."""
    draw, score = ratio_critic(ckpt, config, options, generate, rng, "--mh", raw_ratio=False)
    real = real_samples(config, max(options.n, 2 * CALIBRATION), rng)
    return mh_sample(draw, score, real, options.n, rng, steps=options.mh)


def draw_samples(ckpt: Path, config: GANConfig,
                 options: GANSampleOptions) -> tuple[np.ndarray, str]:
    """``options.n`` samples (images, or points of a 2D run) drawn as ``options`` ask, and a
    line saying how. ``gantrain eval`` scores what this draws."""
    generate = load_generator(ckpt, config, options.ema)
    rng = np.random.default_rng(options.seed)
    if options.drs is not None:
        samples, kept = drs_samples(ckpt, config, options, generate, rng)
        return samples, (f"{len(samples)} samples of shape {samples.shape[1:]} kept by "
                         f"discriminator rejection sampling ({100 * kept:.1f}% of candidates, "
                         f"percentile {options.drs:g})")
    if options.mh is not None:
        samples, chains = mh_samples(ckpt, config, options, generate, rng)
        return samples, (f"{len(samples)} samples of shape {samples.shape[1:]} at the ends of "
                         f"Metropolis-Hastings chains of {options.mh} proposals "
                         f"({100 * chains['acceptance']:.1f}% accepted, "
                         f"{100 * chains['restarted']:.1f}% of chains restarted, calibrated "
                         f"logit scale {chains['scale']:.3g})")
    z = latents.draw(rng, options.n, config.gan.z_dim, options.truncation, options.interpolate)
    y = latents.labels(rng, len(z), config.gan.num_classes, options.label)
    how = []
    if options.truncation:
        ends = "with ends " if options.interpolate else ""
        how.append(f"{ends}truncated at |z| <= {options.truncation:g}")
    if options.dot is not None:
        from .transport import dot_latents

        z, moved = dot_latents(generate.generator, load_discriminator(ckpt, config), config,
                               z, options.dot, rng)
        how.append(f"moved by discriminator optimal transport ({options.dot} steps, "
                   f"k_eff {moved['k_eff']:.3g}, mean D {moved['critic_before']:.3f} -> "
                   f"{moved['critic_after']:.3f}, mean |dz| {moved['moved']:.3f})")
    samples = generate(z, y)
    note = " from noise " + ", then ".join(how) if how else ""
    return samples, f"{len(samples)} samples of shape {samples.shape[1:]}{note}"


def sample(ckpt: Path, config: GANConfig, options: GANSampleOptions) -> Drawn:
    samples, summary = draw_samples(ckpt, config, options)
    images = samples if samples.ndim == 4 else None
    return Drawn(samples, summary, images, cols=options.interpolate or None)
