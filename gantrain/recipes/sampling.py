"""``gantrain sample`` for any recipe: the options every recipe takes, what a recipe draws
(:class:`Drawn`), and the one helper that writes it (``--out``, ``--out-dir``, ``--grid``)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..config.strict import ConfigError


@dataclass
class SampleOptions:
    """Options of every recipe's sampling; a recipe with more subclasses it."""

    n: int = 64  # how many samples (episodes, translations, ...)
    seed: int = 0  # of the noise or environment draws
    out: str | None = None  # raw arrays as .npy
    out_dir: str | None = None  # one PNG per image
    grid: str | None = None  # images as one grid PNG

    def __post_init__(self) -> None:
        if self.n < 1:
            raise ConfigError(f"--n must be >= 1, got {self.n}")

    def check(self, config: Any) -> None:
        """Refuse options the run's config cannot serve, before anything loads or trains
        (a recipe whose options depend on its nets overrides this)."""


def check_drs(drs: float | None, interpolate: int | None) -> None:
    """Refuse a ``--drs`` percentile outside [0, 100], or DRS with ``--interpolate`` (rejection
    cannot keep a path's samples in order); shared by the recipes whose sampling takes DRS."""
    if drs is not None and not 0 <= drs <= 100:
        raise ConfigError(f"--drs is a percentile in [0, 100], got {drs}")
    if drs is not None and interpolate:
        raise ConfigError("--drs rejects samples, so it cannot keep interpolation paths; "
                          "use one of --drs, --interpolate")


def check_mh(mh: int | None, interpolate: int | None) -> None:
    """Refuse a ``--mh`` chain length below 1, or MH with ``--interpolate`` (each sample comes
    from its own chain, so no path survives)."""
    if mh is not None and mh < 1:
        raise ConfigError(f"--mh is a number of steps >= 1, got {mh}")
    if mh is not None and interpolate:
        raise ConfigError("--mh draws each sample from its own chain, so it cannot keep "
                          "interpolation paths; use one of --mh, --interpolate")


def check_one_critic_method(**methods: float | None) -> None:
    """Refuse more than one way of using D at sampling time (``drs=...``, ``mh=...``, ...)."""
    chosen = [f"--{name}" for name, value in methods.items() if value is not None]
    if len(chosen) > 1:
        raise ConfigError(f"{' and '.join(chosen)} are ways to use D at sampling time; "
                          "choose one")


def options_for(cls: type[SampleOptions], given: dict[str, Any], task: str,
                flags: dict[str, str]) -> SampleOptions:
    """``cls(**given)``, refusing an option the recipe does not take. ``flags`` maps option
    names to the command-line flags the message shows."""
    known = {f.name for f in dataclasses.fields(cls)}
    foreign = sorted(k for k, v in given.items() if k not in known and v is not None)
    if foreign:
        takes = ", ".join(flags.get(k, k) for k in sorted(known))
        raise ConfigError(f"{', '.join(flags.get(k, k) for k in foreign)}: not an option for "
                          f"{task!r} runs; they take {takes}")
    return cls(**{k: v for k, v in given.items() if k in known and v is not None})


@dataclass
class Drawn:
    """What a recipe drew from a trained run.

    ``arrays`` are what ``--out`` saves as .npy (samples, translations, returns); ``images``,
    when the recipe draws images, are what ``--out-dir`` writes one PNG each and, unless
    ``grid_images`` says otherwise, what the grid shows, ``cols`` per row; ``extra`` are more
    named arrays saved next to ``--out`` (``<stem>_<name>.npy``) and ``extra_grids`` more
    grids next to the main one (``<stem>_<name>.png``).
    """

    arrays: np.ndarray
    summary: str
    images: np.ndarray | None = None
    cols: int | None = None
    grid_images: np.ndarray | None = None
    prefix: str = "sample"
    default_grid: str = "samples.png"
    save_by_default: bool = True  # write samples.npy when no output is named
    extra: dict[str, np.ndarray] = field(default_factory=dict)
    extra_grids: dict[str, tuple[np.ndarray, int | None]] = field(default_factory=dict)


def write_samples(drawn: Drawn, options: SampleOptions) -> list[str]:
    """Write ``drawn`` as the options ask; with no output named, a grid for images and
    ``samples.npy`` otherwise. Returns the paths written."""
    from ..viz.images import save_grid, save_images

    written: list[str] = []
    npy = Path(options.out) if options.out else None
    if npy is not None:
        npy.parent.mkdir(parents=True, exist_ok=True)
        np.save(npy, drawn.arrays)
        written.append(str(npy))
    if drawn.images is not None and options.out_dir:
        save_images(options.out_dir, drawn.images, prefix=drawn.prefix)
        written.append(f"{options.out_dir}/")
    if drawn.images is not None and (options.grid or not written):
        grid = Path(options.grid or drawn.default_grid)
        scale = 2 if drawn.images.shape[-1] < 64 else 1
        shown = drawn.images if drawn.grid_images is None else drawn.grid_images
        written.append(str(save_grid(grid, shown, drawn.cols, scale=scale)))
        for name, (images, cols) in drawn.extra_grids.items():
            path = grid.with_name(f"{grid.stem}_{name}.png")
            written.append(str(save_grid(path, images, cols, scale=scale)))
    if not written and drawn.save_by_default:
        npy = Path("samples.npy")
        np.save(npy, drawn.arrays)
        written.append(str(npy))
    for name, array in drawn.extra.items():
        stem = npy or Path("samples.npy")
        path = stem.with_name(f"{stem.stem}_{name}.npy")
        np.save(path, array)
        written.append(str(path))
    return written


def load_player_nets(ckpt: Path, player: str, nets: dict[str, Any], ema: bool = False) -> None:
    """Load the weights a checkpoint holds for ``nets`` of player ``player`` (in place).

    The nets get the parameter names the player gave them when it trained; with ``ema`` the
    EMA averages stored under ``ema.<name>`` are loaded on top (weights and BatchNorm
    statistics). Optimizer state in the file is ignored.
    """
    from ..engine import checkpoint
    from ..engine.ema import PREFIX
    from ..engine.player import prefix_parameters

    prefix_parameters(nets, player)
    params = [p for net in nets.values() for p in net.get_parameters()]
    file = Path(ckpt) / f"{player}.ckpt"
    checkpoint.load_parameters(params, file, strict=False)
    if ema:
        checkpoint.load_parameters(params, file, strict=False, source_prefix=f"{PREFIX}.")
