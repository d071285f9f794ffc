"""PyTorch eager versions of the benchmark presets' nets and training step (column (c) of
``scripts/benchmark.py``).

Only the benchmark imports this, and only when ``torch`` is importable: torch is never a
dependency of gantrain. The nets mirror ``models/mlp.py``, ``models/dcgan.py`` (28/32/64,
BatchNorm in G and optionally in D, LeakyReLU 0.2, N(0, 0.02) init) and ``models/sngan.py``
(ResNet blocks, nearest upsampling, 2x2 average pooling, spectral norm on every D weight through
``torch.nn.utils.parametrizations.spectral_norm``). The step is the seed-style loop a PyTorch
user writes: ``n_critic`` D updates on fresh real batches, one G update, an optional WGAN-GP
penalty (Gulrajani et al. 2017) and an EMA of G's weights.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils.parametrizations import spectral_norm

from gantrain.models.dcgan import GEOMETRY as _GEOMETRY  # the same layer plan as the MindSpore nets


def _act(name: str) -> nn.Module:
    return {"relu": nn.ReLU(), "leaky_relu": nn.LeakyReLU(0.2), "elu": nn.ELU(),
            "silu": nn.SiLU()}[name]


def _init_normal(module: nn.Module, std: float = 0.02) -> None:
    for m in module.modules():
        if isinstance(m, (nn.Linear, nn.Conv2d, nn.ConvTranspose2d)):
            nn.init.normal_(m.weight, 0.0, std)
            if m.bias is not None:
                nn.init.zeros_(m.bias)


# --- models/mlp.py -----------------------------------------------------------------------------

def _hidden(d_in: int, width: int, depth: int, activation: str) -> list[nn.Module]:
    dims = [d_in] + [width] * depth
    layers: list[nn.Module] = []
    for a, b in zip(dims[:-1], dims[1:]):
        layers += [nn.Linear(a, b), _act(activation)]
    return layers


def mlp(d_in: int, d_out: int, width: int = 128, depth: int = 3,
        activation: str = "relu") -> nn.Sequential:
    return nn.Sequential(*_hidden(d_in, width, depth, activation), nn.Linear(width, d_out))


class PackedMLP(nn.Module):
    """mlp.Discriminator(pack, shared): the first ``shared`` hidden layers read each of the
    ``pack`` samples alone (same weights), the rest read their features together."""

    def __init__(self, in_dim: int, width: int, depth: int, activation: str, pack: int,
                 shared: int) -> None:
        super().__init__()
        self.pack = pack
        self.per_sample = nn.Sequential(*_hidden(in_dim // pack, width, shared, activation))
        self.joint = mlp(pack * width, 1, width, depth - shared, activation)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n = x.shape[0]
        h = self.per_sample(x.reshape(n * self.pack, x.shape[1] // self.pack))
        return self.joint(h.reshape(n, -1))


# --- models/dcgan.py ---------------------------------------------------------------------------

def _refine(ch: int, n: int, bn: bool, activation: str) -> list[nn.Module]:
    """``refine`` 3x3 stride-1 conv -> norm -> activation blocks at one resolution."""
    layers: list[nn.Module] = []
    for _ in range(n):
        layers += [nn.Conv2d(ch, ch, 3, 1, 1, bias=not bn),
                   nn.BatchNorm2d(ch) if bn else nn.Identity(), _act(activation)]
    return layers


class DCGANGenerator(nn.Module):
    def __init__(self, z_dim: int = 100, channels: int = 1, size: int = 28, width: int = 64,
                 norm: str = "batch", activation: str = "relu", refine: int = 0,
                 **_: Any) -> None:
        super().__init__()
        start, n_up = _GEOMETRY[size]
        widths = [width * 2 ** (n_up - 1 - i) for i in range(n_up)]
        bn = norm == "batch"
        self.shape = (-1, widths[0], start, start)
        self.fc = nn.Linear(z_dim, widths[0] * start * start, bias=not bn)
        layers: list[nn.Module] = [nn.BatchNorm2d(widths[0]) if bn else nn.Identity(),
                                   _act(activation), *_refine(widths[0], refine, bn, activation)]
        for a, b in zip(widths[:-1], widths[1:]):
            layers += [nn.ConvTranspose2d(a, b, 4, 2, 1, bias=not bn),
                       nn.BatchNorm2d(b) if bn else nn.Identity(), _act(activation),
                       *_refine(b, refine, bn, activation)]
        layers += [nn.ConvTranspose2d(widths[-1], channels, 4, 2, 1), nn.Tanh()]
        self.body = nn.Sequential(*layers)
        _init_normal(self)

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        return self.body(self.fc(z).view(self.shape))


class DCGANDiscriminator(nn.Module):
    def __init__(self, channels: int = 1, size: int = 28, width: int = 64, norm: str = "none",
                 activation: str = "leaky_relu", **_: Any) -> None:
        super().__init__()
        end, n_down = _GEOMETRY[size]
        widths = [width * 2 ** i for i in range(n_down)]
        sn = spectral_norm if norm == "spectral" else (lambda m: m)
        layers: list[nn.Module] = [sn(nn.Conv2d(channels, widths[0], 4, 2, 1)), _act(activation)]
        for a, b in zip(widths[:-1], widths[1:]):
            layers += [sn(nn.Conv2d(a, b, 4, 2, 1, bias=norm != "batch")),
                       nn.BatchNorm2d(b) if norm == "batch" else nn.Identity(), _act(activation)]
        self.body = nn.Sequential(*layers, nn.Flatten())
        self.head = sn(nn.Linear(widths[-1] * end * end, 1))
        _init_normal(self)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.body(x)).view(-1)


# --- models/sngan.py ---------------------------------------------------------------------------

def _conv(a: int, b: int, k: int, sn: bool = False) -> nn.Module:
    conv = nn.Conv2d(a, b, k, 1, k // 2)
    nn.init.xavier_uniform_(conv.weight)
    nn.init.zeros_(conv.bias)
    return spectral_norm(conv) if sn else conv


class _GBlock(nn.Module):
    def __init__(self, a: int, b: int) -> None:
        super().__init__()
        self.n1, self.c1 = nn.BatchNorm2d(a), _conv(a, b, 3)
        self.n2, self.c2 = nn.BatchNorm2d(b), _conv(b, b, 3)
        self.sc = _conv(a, b, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = F.interpolate(F.relu(self.n1(x)), scale_factor=2, mode="nearest")
        h = self.c2(F.relu(self.n2(self.c1(h))))
        return h + self.sc(F.interpolate(x, scale_factor=2, mode="nearest"))


class SNGANGenerator(nn.Module):
    def __init__(self, z_dim: int = 128, channels: int = 3, size: int = 32, width: int = 256,
                 **_: Any) -> None:
        super().__init__()
        self.width = width
        self.fc = nn.Linear(z_dim, width * 16)
        nn.init.xavier_uniform_(self.fc.weight)
        self.blocks = nn.Sequential(*[_GBlock(width, width) for _ in range({32: 3, 64: 4}[size])])
        self.out = nn.Sequential(nn.BatchNorm2d(width), nn.ReLU(), _conv(width, channels, 3),
                                 nn.Tanh())

    def forward(self, z: torch.Tensor) -> torch.Tensor:
        return self.out(self.blocks(self.fc(z).view(-1, self.width, 4, 4)))


class _DBlock(nn.Module):
    def __init__(self, a: int, b: int, sn: bool, down: bool, first: bool = False) -> None:
        super().__init__()
        self.first, self.down = first, down
        self.c1, self.c2 = _conv(a, b, 3, sn), _conv(b, b, 3, sn)
        self.sc = _conv(a, b, 1, sn) if (down or a != b) else None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.first:  # SNGAN's "optimized" first block: no pre-activation on pixels
            h = F.avg_pool2d(self.c2(F.relu(self.c1(x))), 2)
            return h + self.sc(F.avg_pool2d(x, 2))
        h = self.c2(F.relu(self.c1(F.relu(x))))
        sc = self.sc(x) if self.sc is not None else x
        if self.down:
            h, sc = F.avg_pool2d(h, 2), F.avg_pool2d(sc, 2)
        return h + sc


class SNGANDiscriminator(nn.Module):
    def __init__(self, channels: int = 3, size: int = 32, width: int = 128,
                 norm: str = "spectral", **_: Any) -> None:
        super().__init__()
        sn = norm == "spectral"
        n_down = {32: 2, 64: 3}[size]
        blocks = [_DBlock(channels, width, sn, True, first=True)]
        blocks += [_DBlock(width, width, sn, True) for _ in range(n_down - 1)]
        blocks += [_DBlock(width, width, sn, False) for _ in range(2)]
        self.blocks = nn.Sequential(*blocks)
        head = nn.Linear(width, 1)
        nn.init.xavier_uniform_(head.weight)
        nn.init.zeros_(head.bias)
        self.head = spectral_norm(head) if sn else head

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(F.relu(self.blocks(x)).sum(dim=(2, 3))).view(-1)


# --- losses and the training step ----------------------------------------------------------------

def _losses(name: str) -> tuple[Callable, Callable]:
    if name == "nonsaturating":
        return (lambda r, f: F.softplus(-r).mean() + F.softplus(f).mean(),
                lambda f: F.softplus(-f).mean())
    if name == "hinge":
        return (lambda r, f: F.relu(1 - r).mean() + F.relu(1 + f).mean(), lambda f: -f.mean())
    if name == "wasserstein":
        return (lambda r, f: f.mean() - r.mean(), lambda f: -f.mean())
    raise ValueError(f"torch baseline: loss {name!r} not reproduced")


def build_nets(config: Any) -> tuple[nn.Module, nn.Module]:
    """Torch G and D for a gantrain Config whose models are models.{mlp,dcgan,sngan}. G's
    latent size is ``gan.z_dim``, as gantrain fills it in (``recipes.shapes.latent_args``)."""
    g, d = config.generator, config.discriminator
    kind = g.model.split(":")[0].split(".")[-1]
    ga, da = {**g.args, "z_dim": config.gan.z_dim}, dict(d.args)
    if kind == "mlp":
        if "maxout" in (ga.get("activation"), da.get("activation")):
            raise ValueError("torch baseline: maxout MLPs not reproduced")
        G = mlp(ga["z_dim"], ga.get("out_dim", 2), ga.get("width", 128),
                ga.get("depth", 3), ga.get("activation", "relu"))
        d_args = (da.get("in_dim", 2), da.get("width", 128), da.get("depth", 3),
                  da.get("activation", "relu"))
        if da.get("shared", 0):
            return G, PackedMLP(*d_args, da["pack"], da["shared"])
        return G, mlp(d_args[0], 1, *d_args[1:])
    if kind == "dcgan":
        return DCGANGenerator(**ga), DCGANDiscriminator(**da)
    if kind == "sngan":
        return SNGANGenerator(**ga), SNGANDiscriminator(**da)
    raise ValueError(f"torch baseline: model {g.model!r} not reproduced")


def _sq_norm(g: torch.Tensor) -> torch.Tensor:
    """Per-sample squared norm of an input gradient, (B, ...) -> (B,)."""
    return g.reshape(g.shape[0], -1).square().sum(1)


class TorchLoop:
    """The preset's recipe in PyTorch eager: same nets, batch, Adam settings, loss, n_critic,
    WGAN-GP or R1 penalty, PacGAN packing and G EMA. ``next_x()`` returns a numpy real batch (the
    loader); with ``fixed`` given, every D step reuses that one batch (data in memory)."""

    def __init__(self, config: Any, next_x: Callable[[], np.ndarray],
                 fixed: np.ndarray | None = None, threads: int = 2, seed: int = 0) -> None:
        torch.set_num_threads(threads)
        torch.manual_seed(seed)
        c = config
        self.G, self.D = build_nets(c)
        self.G.train()
        self.D.train()
        self.d_loss, self.g_loss = _losses(c.gan.loss)
        og, od = c.optim.generator, c.optim.discriminator
        self.opt_g = torch.optim.Adam(self.G.parameters(), lr=og.lr, betas=tuple(og.betas))
        self.opt_d = torch.optim.Adam(self.D.parameters(), lr=od.lr, betas=tuple(od.betas))
        self.batch, self.z_dim, self.n_critic = c.data.batch_size, c.gan.z_dim, c.gan.n_critic
        if c.gan.penalty not in ("none", "gp", "r1"):
            raise ValueError(f"torch baseline: gan.penalty = {c.gan.penalty!r} not reproduced")
        self.pack = c.gan.pack
        self.penalty, self.penalty_weight = c.gan.penalty, c.gan.penalty_weight
        self.next_x = next_x
        self.fixed = torch.from_numpy(fixed) if fixed is not None else None
        self.rng = np.random.default_rng(seed)
        self.ema_decay = c.gan.ema_decay
        self.g_params = list(self.G.parameters())
        self.ema = [p.detach().clone() for p in self.g_params] if self.ema_decay else None

    def _d(self, x: torch.Tensor) -> torch.Tensor:
        if self.pack > 1:
            x = x.reshape(x.shape[0] // self.pack, self.pack * x.shape[1], *x.shape[2:])
        return self.D(x).reshape(-1)

    def _z(self) -> torch.Tensor:
        return torch.from_numpy(self.rng.standard_normal((self.batch, self.z_dim),
                                                         dtype=np.float32))

    def _penalty(self, real: torch.Tensor, fake: torch.Tensor) -> torch.Tensor:
        eps = torch.from_numpy(self.rng.random((real.shape[0],) + (1,) * (real.dim() - 1),
                                               dtype=np.float32))
        x_hat = (eps * real + (1 - eps) * fake).requires_grad_(True)
        (g,) = torch.autograd.grad(self._d(x_hat).sum(), x_hat, create_graph=True)
        norm = torch.sqrt(_sq_norm(g) + 1e-12)
        return (norm - 1).square().mean()

    def _r1(self, real: torch.Tensor) -> torch.Tensor:
        """gamma / 2 * E[||grad_x D(x)||^2] on real data (Mescheder et al. 2018), as gantrain's."""
        x = real.detach().requires_grad_(True)
        (g,) = torch.autograd.grad(self._d(x).sum(), x, create_graph=True)
        return 0.5 * _sq_norm(g).mean()

    def iteration(self) -> torch.Tensor:
        for _ in range(self.n_critic):
            real = self.fixed if self.fixed is not None else torch.from_numpy(self.next_x())
            with torch.no_grad():
                fake = self.G(self._z())
            loss = self.d_loss(self._d(real), self._d(fake))
            if self.penalty == "gp":
                loss = loss + self.penalty_weight * self._penalty(real, fake)
            elif self.penalty == "r1":
                loss = loss + self.penalty_weight * self._r1(real)
            self.opt_d.zero_grad(set_to_none=True)
            loss.backward()
            self.opt_d.step()
        g_loss = self.g_loss(self._d(self.G(self._z())))
        self.opt_g.zero_grad(set_to_none=True)
        g_loss.backward()
        self.opt_g.step()
        if self.ema is not None:
            with torch.no_grad():
                torch._foreach_lerp_(self.ema, self.g_params, 1.0 - self.ema_decay)
        return g_loss.detach()

    def run(self, iters: int) -> float:
        start = time.perf_counter()
        for _ in range(iters):
            loss = self.iteration()
        loss.item()
        return time.perf_counter() - start
