"""Images -> what the FID network sees, following the reference implementations step by step.

1. **uint8 quantisation.** Generated images are floats; real ones were PNG/JPEG/IDX bytes.
   Published FIDs are computed on saved images, so both are rounded to uint8 exactly as
   torchvision's ``save_image`` does (``floor(255 * x01 + 0.5)`` clipped to [0, 255], with
   x01 = (x + 1) / 2 for gantrain's [-1, 1] images). For real data read from bytes this is an
   exact round trip.
2. **Grayscale** (1 channel) is replicated to 3 channels (pytorch-fid reads images as RGB, which
   does the same).
3. **Resize to 299x299**, one of :data:`RESIZE_MODES`:

   * ``bilinear`` (default): pytorch-fid's ``F.interpolate(x, (299, 299), mode="bilinear",
     align_corners=False)`` on x = uint8 / 255, without antialiasing. It is the default because
     it is what the reference weights are distributed with, what the equivalence test checks
     against pytorch-fid, and what most PyTorch GAN papers report.
   * ``pil-bicubic``: clean-fid's resize (Parmar et al. 2022, "On Aliased Resizing and
     Surprising Subtleties in GAN Evaluation"): each channel as a float PIL image, PIL's
     antialiased bicubic to 299x299, clipped to [0, 255]. Use it to compare with clean-fid
     numbers; it changes FID noticeably at small resolutions (32x32 CIFAR: a 9x upsampling).

4. **Normalise** to [-1, 1] as pytorch-fid does (2 x - 1 on x in [0, 1]).

The bilinear resize is two matrix products with precomputed interpolation matrices
(:func:`bilinear_matrix`), run inside the compiled graph, so it needs no resize kernel and runs
on any device.
"""

from __future__ import annotations

import numpy as np
from PIL import Image

from ...config.strict import ConfigError

SIZE = 299
RESIZE_MODES = ("bilinear", "pil-bicubic")
DEFAULT_RESIZE = "bilinear"


def check_resize(mode: str) -> str:
    if mode not in RESIZE_MODES:
        raise ConfigError(f"--resize must be one of {', '.join(RESIZE_MODES)}, got {mode!r}")
    return mode


def describe(mode: str) -> dict[str, str]:
    """The preprocessing as recorded in eval.json and in cached statistics."""
    return {"quantize": "uint8 floor(255*x01+0.5)", "resize": check_resize(mode),
            "size": str(SIZE), "range": "[-1,1]"}


def quantize(images: np.ndarray) -> np.ndarray:
    """(N, C, H, W) images -> uint8 with C in {1, 3} replicated to 3 channels.

    Floats are gantrain's [-1, 1] range; uint8 input passes through unchanged.
    """
    x = np.asarray(images)
    if x.ndim != 4 or x.shape[1] not in (1, 3):
        raise ConfigError(f"Inception features need (N, C, H, W) images with C = 1 or 3, got "
                          f"shape {x.shape}")
    if x.dtype != np.uint8:
        x = np.floor((x.astype(np.float32) + 1.0) * 127.5 + 0.5).clip(0, 255).astype(np.uint8)
    return np.repeat(x, 3, axis=1) if x.shape[1] == 1 else x


def bilinear_matrix(n_in: int, n_out: int = SIZE) -> np.ndarray:
    """(n_out, n_in) matrix R with R @ v = torch's 1-D bilinear resize of v, align_corners=False.

    Source coordinate of output i: s = (i + 0.5) * n_in / n_out - 0.5, clamped below at 0;
    weights 1 - (s - floor s) and s - floor s on pixels floor s and min(floor s + 1, n_in - 1).
    No antialiasing: downsampling reads only the two nearest pixels, as torch does.
    """
    s = np.maximum((np.arange(n_out) + 0.5) * (n_in / n_out) - 0.5, 0.0)
    i0 = np.minimum(np.floor(s).astype(np.int64), n_in - 1)
    i1 = np.minimum(i0 + 1, n_in - 1)
    frac = s - i0
    r = np.zeros((n_out, n_in))
    np.add.at(r, (np.arange(n_out), i0), 1.0 - frac)
    np.add.at(r, (np.arange(n_out), i1), frac)
    return r.astype(np.float32)


def pil_bicubic(images: np.ndarray) -> np.ndarray:
    """uint8 (N, 3, H, W) -> float32 (N, 3, 299, 299) in [0, 255], clean-fid's resize."""
    out = np.empty((len(images), 3, SIZE, SIZE), np.float32)
    for n, img in enumerate(images):
        for c in range(3):
            channel = Image.fromarray(img[c].astype(np.float32), mode="F")
            out[n, c] = np.asarray(channel.resize((SIZE, SIZE), Image.BICUBIC))
    return out.clip(0, 255)
