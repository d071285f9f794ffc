"""``gantrain sample`` for ALI / BiGAN runs: samples from the prior and reconstructions
``x | G(E(x))`` of held-out examples, with the reconstruction error beside chance level.

``--drs P`` keeps samples by discriminator rejection sampling (Azadi et al. 2019), and ``--mh K``
draws them as the ends of Metropolis-Hastings chains (Turner et al. 2019), both on the x-only
score of a BigBiGAN discriminator (``discriminator.args.unary = true``): trained with the GAN
loss on x alone, ``s_x`` estimates ``log p_data(x) / p_G(x)`` as a GAN's D does. A D that only
judges pairs has no such score, and the options are refused for it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ...blocks import latents
from ...blocks.metropolis import CALIBRATION, mh_sample
from ...blocks.rejection import check_density_ratio_loss, rejection_sample
from ...config.strict import ConfigError
from ...data.registry import DataBundle, build_data
from ..sampling import (
    Drawn,
    SampleOptions,
    check_drs,
    check_mh,
    check_one_critic_method,
    load_player_nets,
)
from .config import ALIConfig
from .examples import evaluation_examples
from .run import (
    RECON_COLS,
    Autoencoder,
    build_discriminator,
    build_nets,
    reconstruction_errors,
    reconstruction_rows,
)


@dataclass
class ALISampleOptions(SampleOptions):
    ema: bool = True  # the averaged weights, when the run kept them
    truncation: float | None = None  # resample noise entries with |z| above this
    interpolate: int | None = None  # rows of this many images along slerp paths
    drs: float | None = None  # rejection sampling on D's x-only score, this percentile of F
    mh: int | None = None  # Metropolis-Hastings chains on D's x-only score, this many steps

    def __post_init__(self) -> None:
        super().__post_init__()
        check_drs(self.drs, self.interpolate)
        check_mh(self.mh, self.interpolate)
        check_one_critic_method(drs=self.drs, mh=self.mh)

    @property
    def flag(self) -> str | None:
        """The option that uses D, if any."""
        return "--drs" if self.drs is not None else "--mh" if self.mh is not None else None

    def check(self, config: ALIConfig) -> None:
        if self.flag is not None:
            x_score(build_discriminator(config), config, self.flag)


def x_score(D, config: ALIConfig, flag: str):
    """``(x, z) -> s_x (N,)``: D's x-only score (column 0 of a unary D's (N, 3) logits; s_x
    does not read z), or a ConfigError saying why this run's D has none for ``flag``."""
    if not getattr(D, "unary", False):
        raise ConfigError(
            f"{flag} on an ALI run needs a discriminator that scores x alone; "
            f"{config.discriminator.model} judges (x, z) pairs only. Train with "
            "discriminator.args.unary = true (BigBiGAN's s_x, s_z and s_xz)")
    if flag == "--drs":  # MH calibrates the score into a log ratio first
        check_density_ratio_loss(config.gan.loss, flag)

    def s_x(x, z):
        return D(x, z)[:, 0]

    return s_x


def x_critic(ckpt: Path, config: ALIConfig, options: ALISampleOptions, generate,
             rng: np.random.Generator):
    """``(draw, score)``: ``k -> k`` samples of G, and D's x-only score of samples."""
    from mindspore import Tensor

    D = build_discriminator(config)
    s_x = x_score(D, config, options.flag)
    load_player_nets(ckpt, "D", {"D": D})
    D.set_train(False)
    z_dim = config.gan.z_dim

    def draw(k: int) -> np.ndarray:
        return generate(latents.draw(rng, k, z_dim, options.truncation, None))

    def score(x: np.ndarray) -> np.ndarray:
        z = Tensor(np.zeros((len(x), z_dim), np.float32))  # s_x does not read z
        return np.asarray(s_x(Tensor(np.asarray(x, np.float32)), z).asnumpy(), np.float64)

    return draw, score


def critic_samples(ckpt: Path, config: ALIConfig, options: ALISampleOptions, generate,
                   rng: np.random.Generator, data: DataBundle) -> tuple[np.ndarray, str]:
    """``options.n`` samples drawn with D's x-only score (``--drs`` or ``--mh``), and a note
    on how."""
    draw, score = x_critic(ckpt, config, options, generate, rng)
    if options.drs is not None:
        samples, kept = rejection_sample(draw, score, options.n, rng, percentile=options.drs)
        return samples, (f" kept by discriminator rejection sampling on D's x-only score "
                         f"({100 * kept:.1f}% of candidates, percentile {options.drs:g})")
    real, _ = evaluation_examples(config, data, max(options.n, 2 * CALIBRATION),
                                  options.seed + 1)
    samples, chains = mh_sample(draw, score, real, options.n, rng, steps=options.mh)
    return samples, (f" at the ends of Metropolis-Hastings chains of {options.mh} proposals on "
                     f"D's x-only score ({100 * chains['acceptance']:.1f}% accepted, "
                     f"{100 * chains['restarted']:.1f}% restarted, calibrated scale "
                     f"{chains['scale']:.3g})")


def sample(ckpt: Path, config: ALIConfig, options: ALISampleOptions) -> Drawn:
    G, E, _ = build_nets(config)
    load_player_nets(ckpt, "GE", {"G": G, "E": E},
                     ema=options.ema and config.gan.ema_decay is not None)
    auto = Autoencoder(G, E, config.gan.z_dim)
    rng = np.random.default_rng(options.seed)
    c = config
    data = build_data(c.data.dataset, c.data.args, c.data.batch_size, c.seed)
    note = ""
    if options.flag is not None:
        samples, note = critic_samples(ckpt, config, options, auto.samples, rng, data)
    else:
        z = latents.draw(rng, options.n, config.gan.z_dim, options.truncation,
                         options.interpolate)
        samples = auto.samples(z)
    x, source = evaluation_examples(c, data, max(options.n, RECON_COLS), options.seed)
    rec = auto.reconstruct(x)
    errors = reconstruction_errors(x, rec, data.mixture)
    kept = (f", {100 * errors['mode_match']:.1f}% in their input's mode"
            if "mode_match" in errors else "")
    summary = (f"{len(samples)} samples of shape {samples.shape[1:]}{note} and {len(x)} "
               f"reconstructions of {source} (x | G(E(x)), mse {errors['recon_mse']:.4f}, "
               f"another example's {errors['recon_mse_shuffled']:.4f}{kept})")
    if samples.ndim == 4:
        return Drawn(samples, summary, images=samples, cols=options.interpolate or None,
                     extra_grids={"recon": (reconstruction_rows(x, rec), RECON_COLS)})
    # (N, 2, ...): x and G(E(x))
    return Drawn(samples, summary, extra={"recon": np.stack([x, rec], axis=1)})
