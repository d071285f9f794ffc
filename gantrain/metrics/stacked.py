"""Stacked MNIST: 1000-mode coverage benchmark built from three MNIST digits per image.

Metz et al. 2017 (Unrolled GANs), Srivastava et al. 2017 (VEEGAN), Lin et al. 2018 (PacGAN,
Sec. 5.2): each training image stacks three random MNIST digits as its three colour channels,
so there are 10^3 = 1000 modes, mode = 100 * d0 + 10 * d1 + d2. A pretrained MNIST classifier
labels each channel of each generated image; the metrics are the number of modes with at least
one sample (out of 1000) and the reverse KL of the generated mode histogram to the uniform
distribution, KL(p_gen || U_1000) = sum_{m: p_gen(m) > 0} p_gen(m) log(1000 p_gen(m)).
Empty modes contribute 0 (0 log 0 = 0): collapse is penalized through the mass piling up on the
covered modes, so covering c modes uniformly gives exactly log(1000 / c).

Reference numbers, PacGAN Table 2 (26,000 samples; originally VEEGAN Table 3):
DCGAN 99 modes / KL 3.40, VEEGAN 150 / 2.95, PacDCGAN2 1000 / 0.06.

A classifier labels any image with some digit, blurry blobs included, so counting every sample
lets a generator of blobs "cover" hundreds of modes. Here a mode counts only the samples whose
three channel predictions are all confident, and the share of confident samples is reported
beside it. The confidence threshold is taken from real stacked digits: the 1st percentile of the
classifier's per-channel confidence on real digits, so 99% of real channels pass it and a real
stacked image is confident with probability about 0.99^3 (see ``confidence_threshold``).
"""

from __future__ import annotations

import numpy as np

from .classes import kl_histogram

NUM_MODES = 1000
_PLACE = np.array([100, 10, 1])


REAL_PERCENTILE = 1.0  # of real per-channel confidences: the confidence threshold


def confidence_threshold(real_channel_confidences: np.ndarray) -> float:
    """The threshold a channel prediction must reach to count: the ``REAL_PERCENTILE``-th
    percentile of the classifier's confidence (max softmax) on real digits."""
    conf = np.asarray(real_channel_confidences, dtype=np.float64).reshape(-1)
    if conf.size == 0:
        raise ValueError("confidence_threshold needs at least one real confidence")
    return float(np.percentile(conf, REAL_PERCENTILE))


def stacked_mnist_report(channel_predictions: np.ndarray,
                         confident: np.ndarray | None = None) -> dict:
    """Modes covered and KL(p_gen || uniform over 1000) from per-channel digit predictions.

    ``channel_predictions`` (N, 3) integer digits 0-9, the classifier's label for channels
    0, 1, 2 of each generated image; ``confident`` (N,) bool, which samples count (all when
    None). Returns {"modes": int, "total_modes": 1000, "kl": float, "samples": int,
    "confident": float (share of samples counted), "histogram": (1000,) int array}; modes and
    KL are over the confident samples only (KL = log 1000 when none is). See the module
    docstring for the KL convention. Compare with published numbers at the same sample count
    (26,000 in PacGAN).
    """
    pred = np.asarray(channel_predictions)
    if pred.ndim != 2 or pred.shape[1] != 3 or pred.shape[0] < 1:
        raise ValueError(f"channel_predictions must have shape (N, 3) with N >= 1, "
                         f"got {pred.shape}")
    if not np.issubdtype(pred.dtype, np.integer) or pred.min() < 0 or pred.max() > 9:
        raise ValueError(f"channel_predictions (shape {pred.shape}, dtype {pred.dtype}) must "
                         "be integer digits in 0..9")
    keep = np.ones(len(pred), bool) if confident is None else np.asarray(confident, bool)
    if keep.shape != (len(pred),):
        raise ValueError(f"confident must have shape ({len(pred)},), got {keep.shape}")
    hist = np.bincount(pred[keep].astype(np.int64) @ _PLACE, minlength=NUM_MODES)
    counted = int(keep.sum())
    kl = (kl_histogram(hist / counted, np.full(NUM_MODES, 1.0 / NUM_MODES)) if counted
          else float(np.log(NUM_MODES)))
    return {
        "modes": int((hist > 0).sum()),
        "total_modes": NUM_MODES,
        "kl": kl,
        "samples": int(pred.shape[0]),
        "confident": counted / pred.shape[0],
        "histogram": hist,
    }
