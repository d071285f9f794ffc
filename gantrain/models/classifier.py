"""Small CNN classifiers used as feature extractors for evaluation metrics.

The metric code (gantrain.metrics) takes any feature extractor; these are the ones gantrain can
train itself, because Inception weights cannot be downloaded everywhere. ``features(x)`` gives the
penultimate layer (the embedding for Frechet distance, KID, precision/recall); ``construct(x)``
gives class logits (for class coverage and the Inception-Score analogue).
"""

from __future__ import annotations

from mindspore import nn

from .layers import check_positive_int


class LeNet(nn.Cell):
    """LeNet-style classifier (LeCun et al. 1998) for 28x28 or 32x32 images.

    conv5x5(w) -> ReLU -> maxpool2 -> conv5x5(2w) -> ReLU -> maxpool2 -> Dense(feature_dim) ->
    ReLU -> Dense(num_classes). Padding keeps 28x28 -> 14 -> 7 and 32x32 -> 16 -> 8.
    """

    def __init__(self, channels: int = 1, size: int = 28, num_classes: int = 10,
                 width: int = 32, feature_dim: int = 128) -> None:
        super().__init__()
        for name, value in (("channels", channels), ("num_classes", num_classes),
                            ("width", width), ("feature_dim", feature_dim)):
            check_positive_int(name, value)
        if size not in (28, 32):
            raise ValueError(f"size={size!r} is not supported; allowed values: 28, 32")
        self.conv1 = nn.Conv2d(channels, width, 5, pad_mode="same", has_bias=True)
        self.conv2 = nn.Conv2d(width, 2 * width, 5, pad_mode="same", has_bias=True)
        self.pool = nn.MaxPool2d(2, 2)
        self.relu = nn.ReLU()
        self.flatten = nn.Flatten()
        self.fc = nn.Dense(2 * width * (size // 4) ** 2, feature_dim)
        self.head = nn.Dense(feature_dim, num_classes)
        self.feature_dim = feature_dim

    def features(self, x):
        h = self.pool(self.relu(self.conv1(x)))
        h = self.pool(self.relu(self.conv2(h)))
        return self.relu(self.fc(self.flatten(h)))

    def construct(self, x):
        return self.head(self.features(x))


def features_and_logits(net: LeNet, x):
    """Both outputs of one forward pass: (features (B, F), logits (B, C))."""
    f = net.features(x)
    return f, net.head(f)


__all__ = ["LeNet", "features_and_logits"]
