"""``jit_level``: the config's level reaches every compiled player step and sampler, and a
level MindSpore does not have is refused by name before the run writes anything."""

from __future__ import annotations

import mindspore as ms
import pytest

from gantrain.engine import runtime
from gantrain.recipes.gan.run import GANRun
from gantrain.recipes.registry import load_config

SMALL = ["train.steps=2", "train.progress=false", "train.log_every=1", "train.sample_every=2",
         "train.checkpoint_every=2", "train.samples=16", "generator.args.width=8",
         "discriminator.args.width=8"]


def test_the_configured_level_compiles_every_step_and_the_sampler(tmp_path, monkeypatch):
    levels: list[str] = []
    real = ms.jit

    def recording(fn, **kwargs):
        levels.append(kwargs.get("jit_level", "O0"))
        return real(fn, **kwargs)

    monkeypatch.setattr(ms, "jit", recording)
    try:
        run = GANRun(load_config("gan_2d_ring", SMALL + ['jit_level="O1"']), tmp_path)
        run.train()  # D step, G step and the evaluation's sampler
    finally:
        runtime.setup("CPU", 0)  # later tests compile at the default level
    assert len(levels) >= 3
    assert set(levels) == {"O1"}


def test_an_unknown_level_is_refused_by_name(tmp_path):
    config = load_config("gan_2d_ring", SMALL + ['jit_level="O2"'])
    with pytest.raises(ValueError, match=r"jit_level must be one of \('O0', 'O1'\), got 'O2'"):
        GANRun(config, tmp_path / "run")
    assert not (tmp_path / "run").exists()
