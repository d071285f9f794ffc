"""Strict configs: unknown keys, wrong types and missing keys are errors that name the key."""

from __future__ import annotations

import pytest

from gantrain.config.schema import apply_override, presets
from gantrain.config.strict import ConfigError, dumps_toml, to_dict
from gantrain.recipes.gan.config import GANConfig
from gantrain.recipes.registry import load_config, parse_config

MINIMAL = {
    "name": "t",
    "data": {"dataset": "mixture", "args": {"name": "ring"}},
    "generator": {"model": "models.mlp:Generator"},
    "discriminator": {"model": "models.mlp:Discriminator"},
}


def build(**changes):
    data = {k: (dict(v) if isinstance(v, dict) else v) for k, v in MINIMAL.items()}
    for dotted, value in changes.items():
        node = data
        keys = dotted.split("__")
        for k in keys[:-1]:
            node = node.setdefault(k, {})
        node[keys[-1]] = value
    return parse_config(data, source="test.toml")


def test_defaults_fill_in():
    c = build()
    assert c.train.steps == 10000 and c.optim.discriminator.betas == [0.5, 0.999]
    assert c.gan.penalty == "none" and c.train.time_budget is None
    assert isinstance(c, GANConfig)


def test_unknown_key_names_key_file_and_suggestion():
    with pytest.raises(ConfigError) as e:
        build(train__stpes=5)
    msg = str(e.value)
    assert "test.toml" in msg and "'train.stpes'" in msg and "did you mean 'steps'" in msg
    assert "task 'gan' does not read" in msg and "log_every" in msg  # lists the keys it reads


def test_wrong_type_names_key_and_expected_type():
    with pytest.raises(ConfigError, match=r"'train.steps' must be int, got '100'"):
        build(train__steps="100")
    with pytest.raises(ConfigError, match=r"'optim.generator.betas\[1\]' must be float"):
        build(optim__generator__betas=[0.5, "x"])
    with pytest.raises(ConfigError, match=r"'train.progress' must be bool"):
        build(train__progress=1)
    with pytest.raises(ConfigError, match=r"'train.steps' must be int, got True"):
        build(train__steps=True)


def test_optional_and_int_to_float():
    c = build(train__time_budget=60, optim__generator__lr=1)
    assert c.train.time_budget == 60.0 and isinstance(c.optim.generator.lr, float)


def test_missing_required_key():
    data = dict(MINIMAL)
    del data["name"]
    with pytest.raises(ConfigError, match="missing required key 'name'"):
        parse_config(data)


def test_task_needs_its_sections_and_refuses_others():
    data = dict(MINIMAL)
    del data["generator"]
    with pytest.raises(ConfigError, match=r"missing required key 'generator' \(task 'gan'"):
        parse_config(data)
    with pytest.raises(ConfigError, match=r"task 'gan' does not read 'encoder'.*discriminator"):
        build(encoder={"model": "models.mlp:Encoder"})
    with pytest.raises(ConfigError, match=r"task 'cyclegna' is not one of: gan \(a generator "
                                          r"against a discriminator\); .*did you mean "
                                          r"'cyclegan'"):
        build(task="cyclegna")
    with pytest.raises(ConfigError, match=r"task 'gan' does not read 'optim.actor'.*"
                                          r"generator, discriminator"):
        build(optim__actor={"lr": 1e-3})
    with pytest.raises(ConfigError, match=r"'cyclegan.pool_size' must be int"):
        build(task="cyclegan", cyclegan={"pool_size": "x"})
    with pytest.raises(ConfigError, match=r"task 'cyclegan' does not read 'cyclegan.pool'"):
        build(task="cyclegan", cyclegan={"pool": 3})


@pytest.mark.parametrize("preset, override, key, reads", [
    ("cyclegan_digits", "gan.n_critic=5", "gan.n_critic", "loss"),
    ("cyclegan_digits", "gan.ema_decay=0.999", "gan.ema_decay", "loss"),
    ("cyclegan_digits", 'gan.penalty="gp"', "gan.penalty", "loss"),
    ("cyclegan_digits", "train.eval_every=10", "train.eval_every", "grid"),
    ("ali_2d_ring", "gan.pack=2", "gan.pack", "ema_decay"),
    ("a2c_cartpole", 'gan.loss="hinge"', "gan", "rl"),
    ("a2c_cartpole", "guard.d_loss_floor=0.1", "guard.d_loss_floor", "max_rollbacks"),
    ("a2c_cartpole", "optim.generator.lr=0.1", "optim.generator", "actor, critic"),
])
def test_a_key_the_recipe_would_ignore_is_refused(preset, override, key, reads):
    """The issue's cases: each names the task, the key and the keys the recipe does read."""
    with pytest.raises(ConfigError) as e:
        load_config(preset, [override])
    msg = str(e.value)
    task = load_config(preset).task
    assert f"task {task!r} does not read {key!r}" in msg and reads in msg


def test_gradient_options_are_read_by_every_recipe():
    """clip_norm and accumulate configure the engine's Player, so every recipe honours them."""
    for preset, role in (("cyclegan_digits", "generator"), ("ali_2d_ring", "discriminator"),
                         ("a2c_cartpole", "actor")):
        c = load_config(preset, [f"optim.{role}.clip_norm=1.0", f"optim.{role}.accumulate=4"])
        assert getattr(c.optim, role).clip_norm == 1.0
        assert getattr(c.optim, role).accumulate == 4


def test_table_expected():
    with pytest.raises(ConfigError, match=r"\[train\] must be a table"):
        build(train=3)


def test_overrides_parse_toml_values():
    data: dict = {}
    apply_override(data, "train.steps=500")
    apply_override(data, "optim.generator.betas=[0.0, 0.9]")
    apply_override(data, "gan.loss=hinge")
    apply_override(data, "train.progress=false")
    assert data == {
        "train": {"steps": 500, "progress": False},
        "optim": {"generator": {"betas": [0.0, 0.9]}},
        "gan": {"loss": "hinge"},
    }
    with pytest.raises(ConfigError, match="section.key=value"):
        apply_override(data, "train.steps")


def test_presets_load_and_round_trip(tmp_path):
    names = presets()
    assert {"gan_2d_grid", "gan_2d_ring"} <= set(names)
    for name in names:
        c = load_config(name)
        path = tmp_path / f"{name}.toml"
        path.write_text(dumps_toml(to_dict(c)))
        assert load_config(str(path)) == c


def test_unknown_config_lists_presets():
    with pytest.raises(ConfigError, match="gan_2d_grid"):
        load_config("no_such_preset")


def test_invalid_toml_names_file(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("name = \n")
    with pytest.raises(ConfigError, match="bad.toml: not valid TOML"):
        load_config(str(bad))
