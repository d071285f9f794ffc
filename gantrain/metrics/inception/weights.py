"""FID Inception weights from a file the user supplies: pytorch-fid's ``.pth`` converted once to
a MindSpore ``.ckpt``, its sha256 recorded, and a loud warning when it is not the reference file.

Nothing is downloaded: many machines (this project's CI among them) cannot. The reference
weights are pytorch-fid's ``pt_inception-2015-12-05-6726825d.pth`` (the 2015-12-05 TF graph's
variables, ported by pytorch-fid). Its sha256, :data:`REFERENCE_SHA256`, was not computed here
(the file is not on this machine): it is the value that several independent public projects pin
for that release file (with its size, 95,628,359 bytes), and it agrees with the 8 hex digits in
the filename, which torch.hub's naming convention defines as the prefix of the file's sha256.
A converted ``.ckpt`` carries the sha256 of the ``.pth`` it came from, so it is recognised too.
"""

from __future__ import annotations

import hashlib
import os
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import mindspore as ms
import numpy as np
from mindspore import Tensor, ops

from ...config.strict import ConfigError
from ...models.inception import FIDInceptionV3

REFERENCE_FILE = "pt_inception-2015-12-05-6726825d.pth"
REFERENCE_SHA256 = "6726825d0af5f729cebd5821db510b11b1cfad8faad88a03f1befd49fb9129b2"
SOURCE_KEY = "source_sha256"  # string entry of a converted .ckpt: the sha256 of its .pth

# torch BatchNorm buffer/parameter names -> MindSpore's
_BN_NAMES = {"weight": "gamma", "bias": "beta", "running_mean": "moving_mean",
             "running_var": "moving_variance"}


def sha256_file(path: str | Path) -> str:
    """Hex sha256 of a file, read in 1 MiB blocks."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


@dataclass(frozen=True)
class WeightsInfo:
    """What eval.json records about the weights a score was computed with."""

    path: str
    sha256: str  # of the file given
    source_sha256: str  # of the .pth a .ckpt was converted from; == sha256 for a .pth
    reference: bool  # source_sha256 is pytorch-fid's release file

    def as_dict(self) -> dict[str, Any]:
        return {"path": self.path, "sha256": self.sha256, "source_sha256": self.source_sha256,
                "reference": self.reference, "reference_sha256": REFERENCE_SHA256}


def check_reference(info: WeightsInfo) -> None:
    """Warn loudly (stderr, every time) when the weights are not the reference ones."""
    if info.reference:
        return
    warnings.warn(
        f"\n{'!' * 78}\nInception weights {info.path} (sha256 {info.source_sha256}) are NOT "
        f"pytorch-fid's {REFERENCE_FILE} (sha256 {REFERENCE_SHA256}).\nScores computed with "
        "them are not comparable with published FID/IS numbers.\n" + "!" * 78,
        UserWarning, stacklevel=2)


def _torch_state_dict(path: Path) -> dict[str, np.ndarray]:
    try:
        import torch
    except ImportError:
        raise ConfigError(
            "converting a .pth needs PyTorch (only for this one step): `pip install torch`, "
            "then run `gantrain eval convert-weights` again; evaluation itself needs only the "
            ".ckpt it writes") from None
    try:
        state = torch.load(str(path), map_location="cpu", weights_only=True)
    except Exception as e:  # torch raises several types for non-checkpoint files
        raise ConfigError(f"{path} is not a readable PyTorch state dict: {e}") from None
    if not isinstance(state, dict):
        raise ConfigError(f"{path} holds a {type(state).__name__}, expected a state dict")
    return {k: v.detach().cpu().numpy() for k, v in state.items()}


def convert_state_dict(state: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """pytorch-fid state dict (torch names) -> {MindSpore parameter name: float32 array}.

    Every parameter of :class:`FIDInceptionV3` must be present with its shape; BatchNorm's
    ``num_batches_tracked`` counters are dropped; anything else is an error naming the keys.
    """
    net = FIDInceptionV3()
    wanted = {p.name: tuple(p.shape) for p in net.get_parameters()}
    out: dict[str, np.ndarray] = {}
    unexpected = []
    for key, value in state.items():
        if key.endswith("num_batches_tracked"):
            continue
        stem, _, leaf = key.rpartition(".")
        name = f"{stem}.{_BN_NAMES.get(leaf, leaf)}" if stem.endswith(".bn") else key
        if name not in wanted:
            unexpected.append(key)
            continue
        out[name] = np.asarray(value, dtype=np.float32)
    missing = sorted(set(wanted) - set(out))
    shapes = [f"{n}: file {out[n].shape} vs network {wanted[n]}" for n in out
              if out[n].shape != wanted[n]]
    if missing or unexpected or shapes:
        hint = (" (a 1000-way fc is torchvision's ImageNet Inception, not the FID network's "
                "1008-way one)" if any(s.startswith("fc.") for s in shapes) else "")
        raise ConfigError(
            "these are not FID Inception weights: "
            + "; ".join(filter(None, [
                missing and f"missing {', '.join(missing[:5])}"
                + (f" (+{len(missing) - 5} more)" if len(missing) > 5 else ""),
                unexpected and f"unexpected {', '.join(unexpected[:5])}"
                + (f" (+{len(unexpected) - 5} more)" if len(unexpected) > 5 else ""),
                shapes and "shape mismatches " + "; ".join(shapes[:5])]))
            + hint)
    return out


def convert_weights(src: str | Path, dst: str | Path) -> WeightsInfo:
    """pytorch-fid ``.pth`` -> MindSpore ``.ckpt`` (written atomically), recording the source
    file's sha256 inside the checkpoint."""
    src, dst = Path(src), Path(dst)
    if not src.is_file():
        raise ConfigError(f"weights file {str(src)!r} does not exist")
    params = convert_state_dict(_torch_state_dict(src))
    digest = sha256_file(src)
    if dst.suffix != ".ckpt":
        raise ConfigError(f"the output {str(dst)!r} must end in .ckpt")
    tmp = dst.with_name(f".{dst.stem}.tmp.ckpt")  # save_checkpoint appends .ckpt otherwise
    ms.save_checkpoint([{"name": k, "data": Tensor(v)} for k, v in params.items()], str(tmp),
                       append_dict={SOURCE_KEY: digest})
    os.replace(tmp, dst)
    return WeightsInfo(str(dst), sha256_file(dst), digest, digest == REFERENCE_SHA256)


def _read_ckpt(path: Path) -> tuple[dict[str, np.ndarray], str]:
    try:
        stored = ms.load_checkpoint(str(path))
    except Exception as e:  # mindspore raises ValueError/RuntimeError on corrupt files
        raise ConfigError(f"{path} is not a readable MindSpore checkpoint: {e}") from None
    source = stored.pop(SOURCE_KEY, None)
    params = {k: v.asnumpy() for k, v in stored.items() if not isinstance(v, str)}
    return params, source if isinstance(source, str) else ""


def load_inception(path: str | Path) -> tuple[FIDInceptionV3, WeightsInfo]:
    """The FID network in eval mode with weights from a ``.ckpt`` or a pytorch-fid ``.pth``.

    A ``.pth`` is converted in memory (needs torch); convert it once with ``gantrain eval
    convert-weights`` to drop that need. Load before the first compiled call (a compiled graph
    does not see later host-side writes; docs/mindspore-notes.md).
    """
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"--weights {str(path)!r} does not exist (give pytorch-fid's "
                          f"{REFERENCE_FILE} or a .ckpt made from it by `gantrain eval "
                          "convert-weights`)")
    digest = sha256_file(path)
    if path.suffix == ".ckpt":
        params, source = _read_ckpt(path)
        params = convert_state_dict(params)  # MindSpore names pass through; checks the set
        source = source or digest
    else:
        params, source = convert_state_dict(_torch_state_dict(path)), digest
    net = FIDInceptionV3()
    for p in net.get_parameters():
        ops.assign(p, Tensor(params[p.name]))
    net.set_train(False)
    return net, WeightsInfo(str(path), digest, source, source == REFERENCE_SHA256)
