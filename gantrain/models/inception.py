"""The Inception-v3 network that FID and IS are computed with, as pytorch-fid builds it.

FID (Heusel et al. 2017) and IS (Salimans et al. 2016) are defined on one specific network: the
TensorFlow Inception graph of 2015-12-05. It is Inception-v3 (Szegedy et al. 2016, "Rethinking the
Inception Architecture for Computer Vision") with a few differences from the torchvision model,
which pytorch-fid (Seitzer, ``FIDInceptionA/C/E_1/E_2``) patches in and which are followed here:

* 1008 output logits (the 2015 graph's class set), not 1000;
* the 3x3 average pools inside the A, C and first E blocks do not count the zero padding
  (``count_include_pad=False``);
* the last E block (Mixed_7c) pools its pool branch with a 3x3 *max* pool, not an average pool.

Parameter names are those of pytorch-fid's weight file with MindSpore's BatchNorm names
(``bn.gamma``/``bn.beta``/``bn.moving_mean``/``bn.moving_variance`` for torch's
``bn.weight``/``bn.bias``/``bn.running_mean``/``bn.running_var``), so converting the file is a
renaming (gantrain.metrics.inception.weights). The network expects 299x299 RGB in [-1, 1];
preprocessing lives in gantrain.metrics.inception.extractor. Only ``nn.Conv2d`` convolutions:
``mint`` convolutions have no CPU kernel in MindSpore 2.10.
"""

from __future__ import annotations

from mindspore import nn, ops

POOL_FEATURES = 2048  # pool3: the FID feature vector
NUM_LOGITS = 1008  # the 2015-12-05 graph's softmax size


def _pad(padding: int | tuple[int, int]) -> tuple[int, int, int, int]:
    """torch (h, w) padding -> MindSpore (top, bottom, left, right)."""
    ph, pw = (padding, padding) if isinstance(padding, int) else padding
    return (ph, ph, pw, pw)


class BasicConv2d(nn.Cell):
    """conv (no bias) -> BatchNorm (eps 1e-3, as TF's graph) -> ReLU."""

    def __init__(self, cin: int, cout: int, kernel: int | tuple[int, int], stride: int = 1,
                 padding: int | tuple[int, int] = 0) -> None:
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, kernel, stride, pad_mode="pad", padding=_pad(padding),
                              has_bias=False)
        self.bn = nn.BatchNorm2d(cout, eps=0.001)
        self.relu = nn.ReLU()

    def construct(self, x):
        return self.relu(self.bn(self.conv(x)))


def _avg_pool_no_pad() -> nn.Cell:
    """3x3 stride-1 average over the valid pixels only (TF's SAME average pool)."""
    return nn.AvgPool2d(3, 1, pad_mode="pad", padding=1, count_include_pad=False)


class InceptionA(nn.Cell):
    """35x35 block: 1x1 | 1x1-5x5 | 1x1-3x3-3x3 | avgpool-1x1 (FIDInceptionA)."""

    def __init__(self, cin: int, pool_features: int) -> None:
        super().__init__()
        self.branch1x1 = BasicConv2d(cin, 64, 1)
        self.branch5x5_1 = BasicConv2d(cin, 48, 1)
        self.branch5x5_2 = BasicConv2d(48, 64, 5, padding=2)
        self.branch3x3dbl_1 = BasicConv2d(cin, 64, 1)
        self.branch3x3dbl_2 = BasicConv2d(64, 96, 3, padding=1)
        self.branch3x3dbl_3 = BasicConv2d(96, 96, 3, padding=1)
        self.pool = _avg_pool_no_pad()
        self.branch_pool = BasicConv2d(cin, pool_features, 1)

    def construct(self, x):
        b1 = self.branch1x1(x)
        b5 = self.branch5x5_2(self.branch5x5_1(x))
        b3 = self.branch3x3dbl_3(self.branch3x3dbl_2(self.branch3x3dbl_1(x)))
        bp = self.branch_pool(self.pool(x))
        return ops.concat((b1, b5, b3, bp), 1)


class InceptionB(nn.Cell):
    """35 -> 17 reduction: 3x3/2 | 1x1-3x3-3x3/2 | maxpool/2 (unchanged from torchvision)."""

    def __init__(self, cin: int) -> None:
        super().__init__()
        self.branch3x3 = BasicConv2d(cin, 384, 3, stride=2)
        self.branch3x3dbl_1 = BasicConv2d(cin, 64, 1)
        self.branch3x3dbl_2 = BasicConv2d(64, 96, 3, padding=1)
        self.branch3x3dbl_3 = BasicConv2d(96, 96, 3, stride=2)
        self.pool = nn.MaxPool2d(3, 2, pad_mode="valid")

    def construct(self, x):
        b3 = self.branch3x3(x)
        bd = self.branch3x3dbl_3(self.branch3x3dbl_2(self.branch3x3dbl_1(x)))
        return ops.concat((b3, bd, self.pool(x)), 1)


class InceptionC(nn.Cell):
    """17x17 block with factorised 7x7 convolutions (FIDInceptionC)."""

    def __init__(self, cin: int, c7: int) -> None:
        super().__init__()
        self.branch1x1 = BasicConv2d(cin, 192, 1)
        self.branch7x7_1 = BasicConv2d(cin, c7, 1)
        self.branch7x7_2 = BasicConv2d(c7, c7, (1, 7), padding=(0, 3))
        self.branch7x7_3 = BasicConv2d(c7, 192, (7, 1), padding=(3, 0))
        self.branch7x7dbl_1 = BasicConv2d(cin, c7, 1)
        self.branch7x7dbl_2 = BasicConv2d(c7, c7, (7, 1), padding=(3, 0))
        self.branch7x7dbl_3 = BasicConv2d(c7, c7, (1, 7), padding=(0, 3))
        self.branch7x7dbl_4 = BasicConv2d(c7, c7, (7, 1), padding=(3, 0))
        self.branch7x7dbl_5 = BasicConv2d(c7, 192, (1, 7), padding=(0, 3))
        self.pool = _avg_pool_no_pad()
        self.branch_pool = BasicConv2d(cin, 192, 1)

    def construct(self, x):
        b1 = self.branch1x1(x)
        b7 = self.branch7x7_3(self.branch7x7_2(self.branch7x7_1(x)))
        bd = self.branch7x7dbl_1(x)
        bd = self.branch7x7dbl_3(self.branch7x7dbl_2(bd))
        bd = self.branch7x7dbl_5(self.branch7x7dbl_4(bd))
        bp = self.branch_pool(self.pool(x))
        return ops.concat((b1, b7, bd, bp), 1)


class InceptionD(nn.Cell):
    """17 -> 8 reduction (unchanged from torchvision)."""

    def __init__(self, cin: int) -> None:
        super().__init__()
        self.branch3x3_1 = BasicConv2d(cin, 192, 1)
        self.branch3x3_2 = BasicConv2d(192, 320, 3, stride=2)
        self.branch7x7x3_1 = BasicConv2d(cin, 192, 1)
        self.branch7x7x3_2 = BasicConv2d(192, 192, (1, 7), padding=(0, 3))
        self.branch7x7x3_3 = BasicConv2d(192, 192, (7, 1), padding=(3, 0))
        self.branch7x7x3_4 = BasicConv2d(192, 192, 3, stride=2)
        self.pool = nn.MaxPool2d(3, 2, pad_mode="valid")

    def construct(self, x):
        b3 = self.branch3x3_2(self.branch3x3_1(x))
        b7 = self.branch7x7x3_2(self.branch7x7x3_1(x))
        b7 = self.branch7x7x3_4(self.branch7x7x3_3(b7))
        return ops.concat((b3, b7, self.pool(x)), 1)


class InceptionE(nn.Cell):
    """8x8 block with split 1x3 / 3x1 outputs. ``max_pool`` selects FIDInceptionE_2's pool
    branch (Mixed_7c); otherwise FIDInceptionE_1's average pool without padding (Mixed_7b)."""

    def __init__(self, cin: int, max_pool: bool) -> None:
        super().__init__()
        self.branch1x1 = BasicConv2d(cin, 320, 1)
        self.branch3x3_1 = BasicConv2d(cin, 384, 1)
        self.branch3x3_2a = BasicConv2d(384, 384, (1, 3), padding=(0, 1))
        self.branch3x3_2b = BasicConv2d(384, 384, (3, 1), padding=(1, 0))
        self.branch3x3dbl_1 = BasicConv2d(cin, 448, 1)
        self.branch3x3dbl_2 = BasicConv2d(448, 384, 3, padding=1)
        self.branch3x3dbl_3a = BasicConv2d(384, 384, (1, 3), padding=(0, 1))
        self.branch3x3dbl_3b = BasicConv2d(384, 384, (3, 1), padding=(1, 0))
        # MindSpore's max pool pads with -inf, so padding never wins the max (as in torch)
        self.pool = (nn.MaxPool2d(3, 1, pad_mode="pad", padding=1) if max_pool
                     else _avg_pool_no_pad())
        self.branch_pool = BasicConv2d(cin, 192, 1)

    def construct(self, x):
        b1 = self.branch1x1(x)
        b3 = self.branch3x3_1(x)
        b3 = ops.concat((self.branch3x3_2a(b3), self.branch3x3_2b(b3)), 1)
        bd = self.branch3x3dbl_2(self.branch3x3dbl_1(x))
        bd = ops.concat((self.branch3x3dbl_3a(bd), self.branch3x3dbl_3b(bd)), 1)
        bp = self.branch_pool(self.pool(x))
        return ops.concat((b1, b3, bd, bp), 1)


class FIDInceptionV3(nn.Cell):
    """pool3 features (N, 2048) and 1008-way logits of 299x299 RGB images in [-1, 1].

    ``features(x)`` stops at the global average pool (what FID uses); ``construct(x)`` returns
    (features, logits) from one pass. Shapes along the trunk: 299 -> 149 -> 147 -> 73 -> 71 ->
    35 (Mixed_5*) -> 17 (Mixed_6*) -> 8 (Mixed_7*) -> 1.
    """

    def __init__(self) -> None:
        super().__init__()
        self.Conv2d_1a_3x3 = BasicConv2d(3, 32, 3, stride=2)
        self.Conv2d_2a_3x3 = BasicConv2d(32, 32, 3)
        self.Conv2d_2b_3x3 = BasicConv2d(32, 64, 3, padding=1)
        self.Conv2d_3b_1x1 = BasicConv2d(64, 80, 1)
        self.Conv2d_4a_3x3 = BasicConv2d(80, 192, 3)
        self.maxpool = nn.MaxPool2d(3, 2, pad_mode="valid")
        self.Mixed_5b = InceptionA(192, 32)
        self.Mixed_5c = InceptionA(256, 64)
        self.Mixed_5d = InceptionA(288, 64)
        self.Mixed_6a = InceptionB(288)
        self.Mixed_6b = InceptionC(768, 128)
        self.Mixed_6c = InceptionC(768, 160)
        self.Mixed_6d = InceptionC(768, 160)
        self.Mixed_6e = InceptionC(768, 192)
        self.Mixed_7a = InceptionD(768)
        self.Mixed_7b = InceptionE(1280, max_pool=False)
        self.Mixed_7c = InceptionE(2048, max_pool=True)
        self.fc = nn.Dense(POOL_FEATURES, NUM_LOGITS)

    def features(self, x):
        x = self.Conv2d_2b_3x3(self.Conv2d_2a_3x3(self.Conv2d_1a_3x3(x)))
        x = self.Conv2d_4a_3x3(self.Conv2d_3b_1x1(self.maxpool(x)))
        x = self.maxpool(x)
        x = self.Mixed_5d(self.Mixed_5c(self.Mixed_5b(x)))
        x = self.Mixed_6a(x)
        x = self.Mixed_6e(self.Mixed_6d(self.Mixed_6c(self.Mixed_6b(x))))
        x = self.Mixed_7c(self.Mixed_7b(self.Mixed_7a(x)))
        return x.mean(axis=(2, 3))

    def construct(self, x):
        f = self.features(x)
        return f, self.fc(f)


__all__ = ["FIDInceptionV3", "NUM_LOGITS", "POOL_FEATURES"]
