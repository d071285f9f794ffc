"""A recipe of one's own is a config dataclass, a Run subclass and one ``register`` line: this
file defines one (a single player fitting the identity map on 2D mixture batches), then trains,
checkpoints, resumes and samples it through the same command line as the built-in recipes."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import mindspore as ms
import numpy as np
import pytest
from mindspore import ops

from gantrain.cli.main import main
from gantrain.config import ConfigError
from gantrain.config.builders import optimizer_from_config, transforms_from_config
from gantrain.config.imports import build_cell
from gantrain.config.schema import DataConfig, ModelConfig, OptimConfig, RunConfig
from gantrain.data.registry import build_data
from gantrain.engine.player import Player
from gantrain.engine.schedule import Phase, Schedule
from gantrain.recipes.base import Run
from gantrain.recipes.recipe import Recipe
from gantrain.recipes.registry import RECIPES, load_config, register
from gantrain.recipes.sampling import Drawn, SampleOptions, load_player_nets


@dataclass
class FitOptim:
    fitter: OptimConfig = field(default_factory=OptimConfig)


@dataclass(kw_only=True)
class FitConfig(RunConfig):
    data: DataConfig
    fitter: ModelConfig
    optim: FitOptim = field(default_factory=FitOptim)


def _inputs(ctx):
    return (ctx.batch()[0],)


class FitRun(Run):
    def build(self) -> None:
        c = self.config
        self.data = build_data(c.data.dataset, c.data.args, c.data.batch_size, c.seed)
        net = build_cell(c.fitter.model, c.fitter.args, "fitter")

        def loss(x):
            return ops.mean((net(x) - x) ** 2), {}

        player = Player("F", net, loss, optimizer_from_config(c.optim.fitter, "optim.fitter"),
                        transforms=transforms_from_config(c.optim.fitter, c.seed))
        self.schedule = Schedule([Phase(player, _inputs)])
        self.source = self.data.source
        self.players = {"fitter": [player]}


def _sample(ckpt: Path, config: FitConfig, options: SampleOptions) -> Drawn:
    net = build_cell(config.fitter.model, config.fitter.args, "fitter")
    load_player_nets(ckpt, "F", {"F": net})
    x = np.random.default_rng(options.seed).standard_normal((options.n, 2)).astype(np.float32)
    from mindspore import Tensor

    error = float(np.abs(net(Tensor(x)).asnumpy() - x).mean())
    return Drawn(x, f"identity error {error:.4f}")


CONFIG = """
name = "fit"
task = "identity_fit"
[data]
dataset = "mixture"
args = { name = "ring" }
batch_size = 64
[fitter]
model = "mindspore.nn:Dense"
args = { in_channels = 2, out_channels = 2 }
[optim.fitter]
lr = 0.05
betas = [0.9, 0.999]
lr_schedule = "linear_decay"
[train]
steps = 40
log_every = 10
sample_every = 20
checkpoint_every = 20
progress = false
"""


@pytest.fixture
def recipe():
    registered = register(Recipe(task="identity_fit", config=FitConfig, run=FitRun,
                                 sample=_sample, summary="fit the identity"))
    yield registered
    RECIPES.pop("identity_fit")


def test_a_registered_recipe_trains_resumes_and_samples(recipe, in_tmp, capsys):
    (in_tmp / "fit.toml").write_text(CONFIG)
    assert main(["train", "fit.toml", "--name", "fit", "--set", "train.steps=20"]) == 0
    run = in_tmp / "runs" / "fit"
    assert main(["train", "--resume", str(run), "--set", "train.steps=40"]) == 0
    losses = [r["F/loss"] for r in map(json.loads, (run / "metrics.jsonl").read_text()
                                       .splitlines()) if "F/loss" in r]
    assert len(losses) == 4 and losses[1] < 0.6 * losses[0]
    # the decay length came from the phase list (one update per iteration x 20 steps) and
    # stayed when the resume extended train.steps: after iteration 20 the rate is 0
    assert "decay_steps = 20" in (run / "config.toml").read_text()
    weights = [ms.load_checkpoint(str(run / "checkpoints" / f"step_{i:08d}" / "F.ckpt"))
               for i in (20, 40)]
    assert np.array_equal(weights[0]["F.weight"].asnumpy(), weights[1]["F.weight"].asnumpy())
    capsys.readouterr()
    assert main(["sample", str(run), "--n", "16", "--out", "x.npy"]) == 0
    assert "identity error" in capsys.readouterr().out and np.load("x.npy").shape == (16, 2)


def test_its_config_is_as_strict_as_the_built_in_ones(recipe, in_tmp):
    (in_tmp / "fit.toml").write_text(CONFIG)
    with pytest.raises(ConfigError, match=r"task 'identity_fit' does not read 'gan'"):
        load_config("fit.toml", ["gan.loss=hinge"])
    with pytest.raises(ConfigError, match=r"does not read 'optim.generator'.*fitter"):
        load_config("fit.toml", ["optim.generator.lr=0.1"])
    assert load_config("fit.toml").fitter.model == "mindspore.nn:Dense"


def test_register_refuses_what_is_not_a_recipe():
    with pytest.raises(TypeError, match="takes a Recipe"):
        register(FitRun)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="must subclass"):
        register(Recipe(task="bad", config=FitOptim, run=FitRun))  # type: ignore[arg-type]


def test_the_readme_recipe_block_registers_and_trains(in_tmp):
    import importlib.util
    import re
    import sys

    readme = Path(__file__).resolve().parents[1] / "README.md"
    (block,) = [b for b in re.findall(r"```python\n(.*?)```", readme.read_text(), flags=re.S)
                if "register(Recipe(" in b]
    (in_tmp / "my_recipe.py").write_text(block)  # jit reads function source from files
    try:
        # a real module: MindSpore's graph parser looks the loss function's module up by name
        spec = importlib.util.spec_from_file_location("my_recipe", in_tmp / "my_recipe.py")
        module = sys.modules["my_recipe"] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        (in_tmp / "fit.toml").write_text(CONFIG)
        assert main(["train", "fit.toml", "--name", "fit", "--set", "train.steps=10"]) == 0
        assert (in_tmp / "runs" / "fit" / "checkpoints" / "latest").is_file()
    finally:
        RECIPES.pop("identity_fit", None)
        sys.modules.pop("my_recipe", None)
