"""The start-up dry run of G and D (gantrain/recipes/shapes.py): each mismatch is one
ConfigError naming the model, the shapes and the config keys involved."""

from __future__ import annotations

import pytest
from mindspore import nn

from gantrain.config.strict import ConfigError
from gantrain.recipes.shapes import check_shapes, latent_args


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


def test_gan_z_dim_fills_in_a_net_that_takes_z_dim_and_leaves_others_alone():
    g = "gantrain.models.dcgan:Generator"
    assert latent_args(16, "generator", g, {"width": 32}) == {"width": 32, "z_dim": 16}
    assert latent_args(16, "generator", g, {"z_dim": 16}) == {"z_dim": 16}
    d = "gantrain.models.dcgan:Discriminator"  # takes no z_dim: nothing added
    assert latent_args(16, "discriminator", d, {"width": 32}) == {"width": 32}
    with pytest.raises(ConfigError, match=r"^encoder.args.z_dim = 8 but gan.z_dim = 16: .* "
                                          r"leave encoder.args.z_dim out"):
        latent_args(16, "encoder", "gantrain.models.mlp:Encoder", {"z_dim": 8})
