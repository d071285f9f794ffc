"""Differentiable Augmentation, DiffAugment (Zhao et al., 2020, "Differentiable Augmentation for
Data-Efficient GAN Training", NeurIPS).

The same random, differentiable transforms are applied to real and fake images before the
discriminator, in both the D and the G step, so D cannot overfit a small data set and G still
gets gradients through the transform. Policies, as in the reference implementation:

* ``color``: per-sample brightness shift in [-0.5, 0.5), saturation factor in [0, 2) (scale around
  the per-pixel channel mean) and contrast factor in [0.5, 1.5) (scale around the image mean);
* ``translation``: per-sample integer shift of up to 1/8 of the image size along each axis,
  filling with zeros;
* ``cutout``: zero one square of half the image size at a random centre (clipped at the border).

The random draws happen on the host (:func:`draw_augment_params`, a numpy Generator) and enter the
graph as Tensors, because MindSpore's in-graph random ops cannot be restored for an exact resume.
The device part (:func:`diff_augment`, :class:`DiffAugment`) is deterministic given the draws and
uses only broadcasting, comparisons and matmuls, so it compiles under ``@ms.jit`` and is
differentiable with respect to the images.

Parameter layout (one array of shape ``(batch,)`` each, in policy order):

* ``color``: brightness (float32), saturation (float32), contrast (float32);
* ``translation``: row shift, column shift (int32): ``out[i, j] = x[i + dy, j + dx]`` or 0;
* ``cutout``: top row, left column (int32) of the zeroed box, which may start outside the image.

Passing a *fresh* Python tuple of Tensors to a jitted function recompiles it on every call
(~0.5 s each on this machine); wrap the tuple with ``ms.mutable(params)`` or pass the arrays as
separate arguments (``DiffAugment`` takes them as ``*params``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from mindspore import Tensor, nn, ops
from mindspore import dtype as mstype

__all__ = [
    "POLICIES",
    "AugmentPolicy",
    "DiffAugment",
    "diff_augment",
    "draw_augment_params",
    "identity_augment_params",
    "num_params",
    "parse_policy",
]

POLICIES = ("color", "translation", "cutout")
_NUM_PARAMS = {"color": 3, "translation": 2, "cutout": 2}
TRANSLATION_RATIO = 0.125
CUTOUT_RATIO = 0.5


def parse_policy(policy: str | Sequence[str]) -> tuple[str, ...]:
    """Turn ``"color,translation,cutout"`` (or a sequence of names) into a tuple of names.

    Blank entries are ignored, so ``""`` means no augmentation. Raises ValueError naming any
    unknown policy and the allowed ones.
    """
    # Plain loops only: this also runs inside @ms.jit (on constants) when diff_augment is
    # traced, and graph mode rejects generator expressions over strings.
    items = policy.split(",") if isinstance(policy, str) else policy
    names = ()
    for item in items:
        name = item.strip()
        if name:
            if name not in POLICIES:
                raise ValueError(
                    f"policy={name!r} is not a DiffAugment policy; "
                    f"allowed values: {', '.join(POLICIES)}"
                )
            names = names + (name,)
    return names


def num_params(policy: str | Sequence[str]) -> int:
    """How many parameter arrays :func:`draw_augment_params` returns for ``policy``."""
    return sum(_NUM_PARAMS[name] for name in parse_policy(policy))


def _translation_limit(size: tuple[int, int]) -> tuple[int, int]:
    # int(n * ratio + 0.5) as in the reference implementation: 32 -> 4, 28 -> 4, 64 -> 8.
    return int(size[0] * TRANSLATION_RATIO + 0.5), int(size[1] * TRANSLATION_RATIO + 0.5)


def _cutout_size(size: tuple[int, int]) -> tuple[int, int]:
    return int(size[0] * CUTOUT_RATIO + 0.5), int(size[1] * CUTOUT_RATIO + 0.5)


def _draw_one(rng: np.random.Generator, name: str, batch: int,
              size: tuple[int, int]) -> tuple[np.ndarray, ...]:
    if name == "color":
        brightness = rng.random(batch) - 0.5
        saturation = rng.random(batch) * 2.0
        contrast = rng.random(batch) + 0.5
        return tuple(a.astype(np.float32) for a in (brightness, saturation, contrast))
    if name == "translation":
        lim_h, lim_w = _translation_limit(size)
        dy = rng.integers(-lim_h, lim_h + 1, size=batch)
        dx = rng.integers(-lim_w, lim_w + 1, size=batch)
        return dy.astype(np.int32), dx.astype(np.int32)
    # cutout: the reference draws the box centre in [0, n + (1 - c % 2)) and starts the box
    # c // 2 before it; we hand the device the start.
    cut_h, cut_w = _cutout_size(size)
    top = rng.integers(0, size[0] + (1 - cut_h % 2), size=batch) - cut_h // 2
    left = rng.integers(0, size[1] + (1 - cut_w % 2), size=batch) - cut_w // 2
    return top.astype(np.int32), left.astype(np.int32)


def draw_augment_params(rng: np.random.Generator, batch: int, size: tuple[int, int],
                        policy: str | Sequence[str]) -> tuple[np.ndarray, ...]:
    """Draw the random parameters of one augmentation of a ``(batch, C, *size)`` image batch.

    Call it once per augmented batch (real and fake batches get separate draws, as in the
    reference). Returns the flat tuple described in the module docstring.
    """
    names = parse_policy(policy)
    size = (int(size[0]), int(size[1]))
    params: list[np.ndarray] = []
    for name in names:
        params.extend(_draw_one(rng, name, batch, size))
    return tuple(params)


def identity_augment_params(batch: int, size: tuple[int, int],
                            policy: str | Sequence[str]) -> tuple[np.ndarray, ...]:
    """Parameters for which :func:`diff_augment` returns its input unchanged (cutout box placed
    entirely below the image). Useful for tests and for switching augmentation off in a step
    compiled with a policy."""
    params: list[np.ndarray] = []
    for name in parse_policy(policy):
        if name == "color":
            params += [np.zeros(batch, np.float32), np.ones(batch, np.float32),
                       np.ones(batch, np.float32)]
        elif name == "translation":
            params += [np.zeros(batch, np.int32), np.zeros(batch, np.int32)]
        else:
            params += [np.full(batch, int(size[0]), np.int32), np.zeros(batch, np.int32)]
    return tuple(params)


def _per_sample(p: Tensor, x: Tensor) -> Tensor:
    """(B,) -> (B, 1, 1, 1) in x's dtype, for broadcasting over an NCHW batch."""
    return ops.reshape(ops.cast(p, x.dtype), (-1, 1, 1, 1))


def _color(x: Tensor, brightness: Tensor, saturation: Tensor, contrast: Tensor) -> Tensor:
    x = x + _per_sample(brightness, x)
    mean_c = ops.mean(x, axis=1, keep_dims=True)  # (B, 1, H, W): per-pixel grey level
    x = (x - mean_c) * _per_sample(saturation, x) + mean_c
    mean_all = ops.mean(x, axis=(1, 2, 3), keep_dims=True)  # (B, 1, 1, 1)
    return (x - mean_all) * _per_sample(contrast, x) + mean_all


def _shift_matrix(n: int, shift: Tensor, dtype: mstype.Type) -> Tensor:
    """(B, n, n) 0/1 matrices S with S[b, i, k] = 1 iff k == i + shift[b] (so S @ v shifts v)."""
    idx = ops.arange(0, n, 1, dtype=mstype.int32)
    rows = ops.reshape(idx, (1, n, 1))
    cols = ops.reshape(idx, (1, 1, n))
    target = rows + ops.reshape(ops.cast(shift, mstype.int32), (-1, 1, 1))
    return ops.cast(ops.equal(cols, target), dtype)


def _translation(x: Tensor, dy: Tensor, dx: Tensor) -> Tensor:
    # A zero-filled shift written as out = Sy @ x @ Sx^T per sample (batched over channels):
    # no gather, so the gradient wrt x is a plain matmul transpose.
    _, _, h, w = x.shape
    sy = ops.expand_dims(_shift_matrix(h, dy, x.dtype), 1)  # (B, 1, H, H)
    sx = ops.expand_dims(_shift_matrix(w, dx, x.dtype), 1)  # (B, 1, W, W)
    return ops.matmul(ops.matmul(sy, x), ops.transpose(sx, (0, 1, 3, 2)))


def _in_window(n: int, start: Tensor, length: int) -> Tensor:
    """(B, n) bool: index i lies in [start[b], start[b] + length)."""
    idx = ops.reshape(ops.arange(0, n, 1, dtype=mstype.int32), (1, n))
    lo = ops.reshape(ops.cast(start, mstype.int32), (-1, 1))
    return ops.logical_and(idx >= lo, idx < lo + length)


def _cutout(x: Tensor, top: Tensor, left: Tensor) -> Tensor:
    _, _, h, w = x.shape
    cut_h, cut_w = _cutout_size((h, w))
    rows = ops.cast(_in_window(h, top, cut_h), x.dtype)  # (B, H)
    cols = ops.cast(_in_window(w, left, cut_w), x.dtype)  # (B, W)
    hole = ops.expand_dims(rows, 2) * ops.expand_dims(cols, 1)  # (B, H, W)
    return x * ops.expand_dims(1.0 - hole, 1)


def diff_augment(x: Tensor, params: Sequence[Tensor], policy: str | Sequence[str]) -> Tensor:
    """Apply the DiffAugment ``policy`` to an NCHW batch ``x`` with host-drawn ``params``.

    Differentiable wrt ``x`` and usable inside ``@ms.jit`` (``policy`` must then be a
    compile-time constant: a string or tuple of strings, not a Tensor).
    """
    names = parse_policy(policy)
    i = 0
    for name in names:
        if name == "color":
            x = _color(x, params[i], params[i + 1], params[i + 2])
            i = i + 3
        elif name == "translation":
            x = _translation(x, params[i], params[i + 1])
            i = i + 2
        else:
            x = _cutout(x, params[i], params[i + 1])
            i = i + 2
    return x


class DiffAugment(nn.Cell):
    """Cell form of :func:`diff_augment`: ``DiffAugment("color,translation")(x, *params)``.

    The policy is parsed (and validated) once, on construction.
    """

    def __init__(self, policy: str = "color,translation,cutout") -> None:
        super().__init__()
        self.policy = parse_policy(policy)
        self.num_params = num_params(self.policy)

    def construct(self, x: Tensor, *params: Tensor) -> Tensor:
        return diff_augment(x, params, self.policy)


@dataclass(frozen=True)
class AugmentPolicy:
    """A DiffAugment policy for images of one size: what a GAN recipe needs to augment
    everything D sees (Zhao et al. 2020).

    ``AugmentPolicy("color,translation,cutout", image_size=(28, 28))``. :meth:`draw` makes the
    random parameters of one batch on the host; :meth:`function` applies them in a jitted loss.
    """

    policy: str | Sequence[str]
    image_size: tuple[int, int]

    def __post_init__(self) -> None:
        names = parse_policy(self.policy)
        if not names:
            raise ValueError("AugmentPolicy needs at least one policy; use no policy object "
                             "(augment=None) for no augmentation")
        object.__setattr__(self, "policy", names)
        object.__setattr__(self, "image_size", (int(self.image_size[0]),
                                                int(self.image_size[1])))

    def draw(self, rng: np.random.Generator, batch: int) -> Tensor:
        """The parameters of one augmented batch as one ``(P, batch)`` float32 Tensor (integer
        parameters are exact in float32), so that they enter a step as a single Tensor."""
        draws = draw_augment_params(rng, batch, self.image_size, self.policy)
        return Tensor(np.stack([d.astype(np.float32) for d in draws]))

    def function(self) -> Callable[[Tensor, Tensor], Tensor]:
        """``augment(x, params)`` for use inside a jitted loss, ``params`` from :meth:`draw`."""
        policy = self.policy
        is_int = []
        for name in policy:
            is_int += [False] * 3 if name == "color" else [True, True]

        def augment(x, params):
            unpacked = ()
            for i in range(len(is_int)):
                v = params[i]
                if is_int[i]:
                    v = ops.cast(v, mstype.int32)
                unpacked = unpacked + (v,)
            return diff_augment(x, unpacked, policy)

        return augment
