"""scripts/torch_baseline.py builds the nets of the presets scripts/benchmark.py times: the
PyTorch column must train the same architectures as gantrain, or its ratio means nothing.
Runs where torch is installed (CI installs it after the main suite)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
from torch_baseline import TorchLoop, build_nets  # noqa: E402

from gantrain.config.imports import build_cell  # noqa: E402
from gantrain.recipes.registry import load_config  # noqa: E402
from gantrain.recipes.shapes import build_latent_net  # noqa: E402

PRESETS = ["gan_2d_grid", "dcgan_digits", "wgan_gp_mnist", "sngan_hinge_cifar10"]


def _ms_count(cell) -> int:
    return sum(int(np.prod(p.shape)) for p in cell.trainable_params())


def _torch_count(module) -> int:
    return sum(p.numel() for p in module.parameters() if p.requires_grad)


@pytest.mark.parametrize("preset, overrides", [(p, []) for p in PRESETS] + [
    ("dcgan_digits", ["generator.args.refine=2", 'generator.args.norm="batch"'])])
def test_torch_nets_have_gantrain_parameter_counts(preset, overrides):
    c = load_config(preset, overrides)
    G, D = build_nets(c)
    # G as a run builds it: its latent size comes from gan.z_dim, not from its args
    assert _torch_count(G) == _ms_count(build_latent_net(c.gan.z_dim, "g", c.generator))
    assert _torch_count(D) == _ms_count(build_cell(c.discriminator.model, c.discriminator.args,
                                                   "d"))


def test_torch_loop_runs_the_grid_preset_with_its_penalty():
    c = load_config("gan_2d_grid")
    assert c.gan.penalty == "r1"  # the case this covers: R1 and the per-sample D
    rng = np.random.default_rng(0)
    loop = TorchLoop(c, lambda: rng.standard_normal((c.data.batch_size, 2), dtype=np.float32))
    before = [p.detach().clone() for p in loop.D.parameters()]
    assert loop.run(2) > 0
    assert any(not torch.equal(a, b) for a, b in zip(before, loop.D.parameters()))


def test_roofline_counts_the_flops_of_a_double_backward():
    """bench_roofline's FLOP count (issue 18's evidence of what the CPU allows) counts every
    matmul of forward, gradient and gradient-of-gradient, and survives ``autograd.grad`` on a
    leaf, which torch's own FlopCounterMode refuses (the WGAN-GP penalty does it)."""
    from bench_roofline import count_flops

    m, k, n = 8, 4, 3
    w = torch.randn(k, n, requires_grad=True)

    class Loop:
        def iteration(self):
            x = torch.randn(m, k, requires_grad=True)
            y = x @ w                                                      # 2mkn
            (g,) = torch.autograd.grad(y.sum(), x, create_graph=True)     # g = 1 @ w.T: 2mkn
            g.square().sum().backward()                                    # dw: 2mkn

    total, by_op = count_flops(Loop())
    assert total == 6 * m * k * n
    assert set(by_op) == {"aten.mm"}
