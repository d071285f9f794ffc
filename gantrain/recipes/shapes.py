"""Start-up dry run: does the generator's output fit the data and the discriminator?

Run once in PyNative mode on a tiny batch, before anything compiles, so that a mismatch is one
clear message naming both models and both shapes instead of a graph-compiler stack trace.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from mindspore import Tensor, nn

from ..config.imports import build_cell, load_object, takes_argument
from ..config.schema import ModelConfig
from ..config.strict import ConfigError


def _first_line(e: Exception) -> str:
    lines = [ln.strip() for ln in str(e).splitlines() if ln.strip() and not ln.startswith("-")]
    return lines[0] if lines else type(e).__name__


def call_net(net: nn.Cell, args: tuple, what: str) -> np.ndarray:
    """``net(*args)`` in eval mode as numpy (the first output of a tuple); a failure becomes a
    ConfigError that starts with ``what``. Used by the shape checks of every recipe."""
    was_training = net.training
    net.set_train(False)  # no BatchNorm statistics move during the check
    try:
        out = net(*args)
        if isinstance(out, (tuple, list)):  # e.g. an ACGAN D: (logits, class logits)
            out = out[0]
        return out.asnumpy()
    except Exception as e:  # mindspore raises ValueError/TypeError/RuntimeError for shapes
        raise ConfigError(f"{what}: {_first_line(e)}") from None
    finally:
        net.set_train(was_training)


def latent_args(z_dim: int, section: str, model: str, args: dict[str, Any]) -> dict[str, Any]:
    """The constructor ``args`` of the net in ``[section]``, given the noise size ``gan.z_dim``.

    A config states the latent size once, as ``gan.z_dim``: a net whose constructor takes a
    ``z_dim`` and whose ``args`` leave it out gets ``gan.z_dim``. One that sets it to another
    value is refused (the first matrix product would fail with a message naming neither key).
    Nets that call it something else keep their args, and the dry run checks their shapes."""
    if "z_dim" in args:
        if args["z_dim"] != z_dim:
            raise ConfigError(
                f"{section}.args.z_dim = {args['z_dim']} but gan.z_dim = {z_dim}: the noise "
                f"has gan.z_dim entries; leave {section}.args.z_dim out (it is filled in from "
                "gan.z_dim) or set both to the same size")
        return args
    if takes_argument(load_object(model, section), "z_dim"):
        return {**args, "z_dim": z_dim}
    return args


def build_latent_net(z_dim: int, section: str, net: ModelConfig) -> nn.Cell:
    """The net of config section ``[section]``, its ``z_dim`` from ``gan.z_dim`` (see
    :func:`latent_args`)."""
    return build_cell(net.model, latent_args(z_dim, section, net.model, net.args), section)


def check_shapes(
    G: nn.Cell, D: nn.Cell, *, z_dim: int, sample_shape: tuple[int, ...], num_classes: int,
    pack: int, g_name: str = "generator", d_name: str = "discriminator",
) -> None:
    """Raise ConfigError unless G(z) has the data's sample shape and D maps a batch to one
    logit per sample (per pack of samples with PacGAN)."""
    d_pack = getattr(D, "pack", 1)
    if d_pack > 1 and d_pack != pack:
        # A D that splits its input into d_pack samples would read a pack of another size
        # without a shape error whenever the widths happen to divide (6 features: 2 x 3, 3 x 2).
        raise ConfigError(
            f"discriminator {d_name} splits its input into pack = {d_pack} samples but "
            f"gan.pack = {pack}: set the discriminator's args.pack to gan.pack")
    n = 2 * pack
    z = Tensor(np.zeros((n, z_dim), np.float32))
    y = Tensor(np.zeros(n, np.int32))
    g_args = (z, y) if num_classes else (z,)
    fake = call_net(G, g_args, f"generator {g_name} failed on noise of shape {(n, z_dim)}")
    if tuple(fake.shape[1:]) != tuple(sample_shape):
        raise ConfigError(
            f"generator {g_name} makes samples of shape {tuple(fake.shape[1:])} but the data "
            f"has samples of shape {tuple(sample_shape)} (check the generator's args and "
            "gan.z_dim against the dataset)"
        )
    x = np.zeros((n // pack, pack * sample_shape[0], *sample_shape[1:]), np.float32)
    d_args = (Tensor(x), Tensor(np.zeros(n // pack, np.int32))) if num_classes else (Tensor(x),)
    out = call_net(
        D, d_args,
        f"discriminator {d_name} cannot take input of shape {x.shape} (generator {g_name} "
        f"makes {tuple(fake.shape[1:])}" + (f", packed x{pack}" if pack > 1 else "") + ")",
    )
    if out.size != n // pack:
        raise ConfigError(
            f"discriminator {d_name} returned shape {out.shape} for {n // pack} inputs; "
            "expected one logit per input, shape (B,) or (B, 1)"
        )
