"""How the GAN recipe calls the user's nets: wrapper Cells with one job each.

Every loss and penalty of the recipe sees the discriminator as ``critic(x, y) -> logits (B,)``
and the generator as ``generator(z, y) -> samples``, with ``y`` the labels or None. The
wrappers adapt a net to that, and :func:`~gantrain.recipes.gan.build.build_gan` composes them:

* :func:`packed`: PacGAN, D judges m samples at once (Lin et al. 2018);
* :class:`Unconditional` drops the labels, :class:`Conditional` passes them on;
* :class:`Critic` reduces D's output to one logit per input;
* :class:`ClassHead`: an ACGAN discriminator's logits and class logits (Odena et al. 2017).

Each wrapper is created with ``auto_prefix=False``: a Cell that stores another as an attribute
otherwise renames the inner parameters (``net.fc.weight``), and the players' parameter names are
what checkpoints are keyed by. The wrappers own no parameters; players get the user's nets.
"""

from __future__ import annotations

from mindspore import Tensor, nn, ops


class _Wrapper(nn.Cell):
    def __init__(self, net: nn.Cell) -> None:
        super().__init__(auto_prefix=False)
        if not isinstance(net, nn.Cell):
            raise TypeError(f"{type(self).__name__} wraps an nn.Cell, got {type(net).__name__}")
        self.net = net


class Packed(_Wrapper):
    """PacGAN packing: m consecutive samples become one input, ``(B, C, ...) -> (B/m, m*C,
    ...)``, so the wrapped D sees m times the channels (or features) of one sample."""

    def __init__(self, net: nn.Cell, m: int) -> None:
        super().__init__(net)
        self.m = m

    def construct(self, x: Tensor) -> Tensor:
        m = self.m
        return self.net(ops.reshape(x, (x.shape[0] // m, m * x.shape[1]) + x.shape[2:]))


def packed(D: nn.Cell, m: int) -> nn.Cell:
    """``D`` judging packs of ``m`` samples (Lin et al. 2018); ``D`` itself when ``m == 1``."""
    if isinstance(m, bool) or not isinstance(m, int) or m < 1:
        raise ValueError(f"pack must be an int >= 1, got {m!r}")
    return D if m == 1 else Packed(D, m)


class Unconditional(_Wrapper):
    """``(x, y) -> net(x)``: a net that takes no labels, called like a conditional one."""

    def construct(self, x: Tensor, y: Tensor = None):
        return self.net(x)


class Conditional(_Wrapper):
    """``(x, y) -> net(x, y)``: a class-conditional G or D (labels int32 of shape (B,))."""

    def construct(self, x: Tensor, y: Tensor):
        return self.net(x, y)


class Critic(_Wrapper):
    """``(x, y) -> logits (B,)``: D's output flattened; for a D that also classifies (ACGAN),
    its first output. The view the adversarial losses and the penalties use."""

    def construct(self, x: Tensor, y: Tensor = None) -> Tensor:
        out = self.net(x, y)
        if isinstance(out, tuple):
            out = out[0]
        return ops.reshape(out, (-1,))


class ClassHead(_Wrapper):
    """``(x, y) -> (logits (B,), class_logits (B, K))`` for a D that returns both (ACGAN)."""

    def construct(self, x: Tensor, y: Tensor):
        out = self.net(x, y)
        return ops.reshape(out[0], (-1,)), out[1]
