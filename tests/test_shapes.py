"""The start-up dry run of G and D (gantrain/recipes/shapes.py): each mismatch is one
ConfigError naming the model, the shapes and the config keys involved."""

from __future__ import annotations

import pytest
from mindspore import nn

from gantrain.config.strict import ConfigError
from gantrain.recipes.shapes import check_latent_args, check_shapes


def nets(z_in: int = 4, out: int = 2, d_in: int = 2):
    G = nn.SequentialCell(nn.Dense(z_in, 8), nn.ReLU(), nn.Dense(8, out))
    D = nn.SequentialCell(nn.Dense(d_in, 8), nn.ReLU(), nn.Dense(8, 1))
    return G, D


def check(G, D, z_dim: int = 4, pack: int = 1) -> None:
    check_shapes(G, D, z_dim=z_dim, sample_shape=(2,), num_classes=0, pack=pack,
                 g_name="my.G", d_name="my.D")


def test_matching_nets_pass():
    check(*nets())
    check(*nets(d_in=4), pack=2)  # D reads 2 packed samples


@pytest.mark.parametrize("kw, z_dim, message", [
    # a G whose args carry no z_dim: only the dry run can see what it takes
    ({}, 5, r"generator my.G failed on noise of shape \(2, 5\)"),
    ({"out": 3}, 4, r"generator my.G makes samples of shape \(3,\) but the data has samples "
                    r"of shape \(2,\)"),
    ({"d_in": 3}, 4, r"discriminator my.D cannot take input of shape \(2, 2\) \(generator "
                     r"my.G makes \(2,\)\)"),
])
def test_each_mismatch_names_the_model_and_shapes(kw, z_dim, message):
    with pytest.raises(ConfigError, match=message):
        check(*nets(**kw), z_dim=z_dim)


def test_net_args_must_size_the_latent_as_gan_z_dim():
    check_latent_args(16, generator={"z_dim": 16, "width": 32}, encoder={"width": 8})
    with pytest.raises(ConfigError, match=r"^encoder.args.z_dim = 8 but gan.z_dim = 16"):
        check_latent_args(16, generator={"z_dim": 16}, encoder={"z_dim": 8})
