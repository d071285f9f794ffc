"""Advantage actor-critic: n-step returns against a direct numpy definition, each player's step
touches only its own network, one rollout per iteration feeds both players, a short run beats a
random policy, a resumed run equals an uninterrupted one, and `gantrain sample` plays greedy
episodes from a checkpoint."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from gantrain.cli.main import main
from gantrain.config import ConfigError
from gantrain.recipes.actor_critic.build import actor_inputs, critic_inputs
from gantrain.recipes.actor_critic.cartpole import CartPole
from gantrain.recipes.actor_critic.rollout import nstep_returns, sample_actions
from gantrain.recipes.registry import build_run, load_config

from .tracing import LossTrace

FAST = ["train.progress=false", "train.log_every=5", "rl.envs=8", "rl.rollout=8",
        "rl.eval_episodes=4"]


def reference_returns(rewards, terminated, truncated, next_values, gamma):
    """R_t = sum_{k=t..end} gamma^(k-t) r_k + gamma^(end-t+1) V(s'_end) [not terminated_end],
    where `end` is the first step >= t that ends the episode or the rollout."""
    T, E = rewards.shape
    out = np.zeros((T, E))
    for e in range(E):
        for t in range(T):
            end = t
            while end < T - 1 and not (terminated[end, e] or truncated[end, e]):
                end += 1
            total = sum(gamma ** (k - t) * rewards[k, e] for k in range(t, end + 1))
            if not terminated[end, e]:
                total += gamma ** (end - t + 1) * next_values[end, e]
            out[t, e] = total
    return out


def test_nstep_returns_cut_at_termination_and_bootstrap_at_truncation():
    rng = np.random.default_rng(0)
    T, E = 12, 6
    rewards = rng.random((T, E)).astype(np.float32)
    terminated = rng.random((T, E)) < 0.15
    truncated = (rng.random((T, E)) < 0.15) & ~terminated
    terminated[-1, 0], truncated[-1, 1] = True, True  # the rollout's last step ends episodes too
    terminated[3, 2] = truncated[3, 2] = True  # both at once: the episode really ended
    next_values = rng.standard_normal((T, E)) * 5
    got = nstep_returns(rewards, terminated, truncated, next_values, 0.9)
    want = reference_returns(rewards, terminated, truncated, next_values, 0.9)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    assert got[3, 2] == pytest.approx(rewards[3, 2])


def test_actions_follow_the_softmax():
    logits = np.log(np.array([[0.25, 0.75], [0.9, 0.1]] * 5000))
    a = sample_actions(logits, np.random.default_rng(0)).reshape(-1, 2)
    assert abs(a[:, 0].mean() - 0.75) < 0.02 and abs(a[:, 1].mean() - 0.1) < 0.02


def digest(player) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.asnumpy().tobytes()).hexdigest() for p in player.parameters}


@pytest.mark.slow
def test_each_step_changes_only_its_own_network(in_tmp):
    run = build_run(load_config("a2c_cartpole", FAST), "runs/x")
    actor, critic, ctx = run.ac.actor, run.ac.critic, run.loop.ctx
    a0, c0 = digest(actor), digest(critic)
    actor.step(*actor_inputs(ctx))
    a1, c1 = digest(actor), digest(critic)
    assert c1 == c0 and all(a1[k] != a0[k] for k in a0)
    critic.step(*critic_inputs(ctx))
    a2, c2 = digest(actor), digest(critic)
    assert a2 == a1 and all(c2[k] != c1[k] for k in c1)
    assert run.source.env_steps == 8 * 8  # both phases used one rollout


def random_policy_return(episodes: int = 200) -> float:
    env, rng = CartPole(episodes, seed=123), np.random.default_rng(0)
    total, running = np.zeros(episodes), np.ones(episodes, bool)
    while running.any():
        out = env.step(rng.integers(0, 2, episodes))
        total += running
        running &= ~(out.terminated | out.truncated)
    return float(total.mean())


@pytest.mark.slow
def test_short_training_beats_a_random_policy(in_tmp):
    """60 iterations of the preset (15,360 environment steps) against uniform random actions
    (~22 steps per episode); the greedy evaluation of the final actor must at least triple it."""
    config = load_config("a2c_cartpole", ["train.steps=60", "train.sample_every=60",
                                          "train.checkpoint_every=60", "train.progress=false"])
    run = build_run(config, "runs/a2c")
    untrained = run.greedy_eval().mean()
    run.train()
    trained, baseline = run.greedy_eval().mean(), random_policy_return()
    assert 15 < baseline < 30
    assert trained > 3 * baseline and trained > untrained
    assert "greedy return" in run.last_report
    lines = (in_tmp / "runs/a2c/metrics.jsonl").read_text()
    assert '"kind": "eval"' in lines and "episodes/return_mean" in lines
    out = capture_sample("runs/a2c")
    assert out.startswith("3 greedy episodes of cartpole")


def capture_sample(run_dir: str) -> str:
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(["sample", run_dir, "--n", "3"]) == 0
    return buf.getvalue()


def make(folder, steps: int):
    config = load_config("a2c_cartpole", FAST + [f"train.steps={steps}",
                                                 "train.checkpoint_every=3",
                                                 "train.sample_every=100"])
    run = build_run(config, folder)
    trace = LossTrace()
    run.loop.hooks.append(trace)
    return run, trace


@pytest.mark.slow
def test_resume_equals_uninterrupted(tmp_path):
    """Continue from the iteration-3 checkpoint of a 6-iteration run (env states, action RNG,
    episode trackers, both players' weights and Adam moments): the same losses and weights."""
    straight, straight_trace = make(tmp_path / "a", steps=6)
    straight.train()
    resumed, resumed_trace = make(tmp_path / "b", steps=6)
    assert resumed.restore(tmp_path / "a/checkpoints/step_00000003") == 3
    resumed.train()
    assert resumed_trace.trace == straight_trace.trace[6:]  # two phases per iteration
    for a, b in zip(straight.player_list, resumed.player_list):
        assert digest(a) == digest(b)
    assert resumed.source.state_dict() == straight.source.state_dict()


def test_nets_that_do_not_fit_the_environment_are_named(in_tmp):
    with pytest.raises(ConfigError, match=r"\[actor\].*\(2, 3\).*needs \(2, 2\)"):
        build_run(load_config("a2c_cartpole", FAST + ["actor.args.num_actions=3"]), "runs/x")
    with pytest.raises(ConfigError, match=r"\[critic\].*observations of shape \(2, 4\)"):
        build_run(load_config("a2c_cartpole", FAST + ["critic.args.obs_dim=5"]), "runs/x")
    with pytest.raises(ConfigError, match="rl.env"):
        build_run(load_config("a2c_cartpole", FAST + ["rl.env=pendulum"]), "runs/x")


@pytest.mark.slow
def test_training_stops_once_the_greedy_return_reaches_the_target(in_tmp):
    config = load_config("a2c_cartpole", FAST + ["train.steps=50", "train.sample_every=2",
                                                 "rl.stop_at_return=1.0"])
    run = build_run(config, "runs/x")
    loop = run.train()  # every policy lasts >= 1 step, so the first evaluation stops it
    assert loop.iteration == 2 and "rl.stop_at_return" in loop.stop_reason
    assert (in_tmp / "runs/x/checkpoints/step_00000002").is_dir()
