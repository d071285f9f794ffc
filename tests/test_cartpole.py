"""The numpy CartPole-v1: one step against the equations written out by hand, a trajectory
against a scalar re-implementation, termination, truncation, seeded resets and exact state
round-trips (through JSON, as checkpoints store it)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from gantrain.config import ConfigError
from gantrain.recipes.actor_critic.cartpole import CartPole, make_env


def scalar_step(s, action):
    """Barto et al. (1983) cart-pole, Euler step of 0.02 s, written with plain floats."""
    x, x_dot, th, th_dot = s
    force = 10.0 if action == 1 else -10.0
    temp = (force + 0.05 * th_dot**2 * math.sin(th)) / 1.1
    th_acc = (9.8 * math.sin(th) - math.cos(th) * temp) / (
        0.5 * (4 / 3 - 0.1 * math.cos(th) ** 2 / 1.1))
    x_acc = temp - 0.05 * th_acc * math.cos(th) / 1.1
    return (x + 0.02 * x_dot, x_dot + 0.02 * x_acc, th + 0.02 * th_dot, th_dot + 0.02 * th_acc)


def test_one_step_from_rest_matches_the_hand_computation():
    env = CartPole(1)
    env.state[:] = 0.0
    out = env.step(np.array([1]))
    # at rest and upright: temp = 10/1.1, theta_acc = -temp / (0.5 (4/3 - 0.1/1.1)),
    # x_acc = temp - 0.05 theta_acc / 1.1; positions move only next step (Euler)
    temp = 10 / 1.1
    th_acc = -temp / (0.5 * (4 / 3 - 0.1 / 1.1))
    x_acc = temp - 0.05 * th_acc / 1.1
    np.testing.assert_allclose(env.state[0], [0.0, 0.02 * x_acc, 0.0, 0.02 * th_acc], rtol=1e-12)
    assert out.reward[0] == 1 and not out.terminated[0] and not out.truncated[0]
    assert out.obs.dtype == np.float32 and out.obs.shape == (1, 4)


def test_trajectory_matches_the_scalar_equations():
    rng = np.random.default_rng(3)
    env = CartPole(3, seed=1)
    ref = [tuple(s) for s in env.state]
    for _ in range(8):
        actions = rng.integers(0, 2, 3)
        env.step(actions)
        ref = [scalar_step(s, a) for s, a in zip(ref, actions)]
        np.testing.assert_allclose(env.state, np.array(ref), rtol=1e-12, atol=1e-15)


def test_always_pushing_right_terminates_on_the_pole_angle():
    env = CartPole(1, seed=0)
    s, steps = tuple(env.state[0]), 0
    while abs(s[0]) <= 2.4 and abs(s[2]) <= 12 * 2 * math.pi / 360:
        s, steps = scalar_step(s, 1), steps + 1
    for i in range(steps):
        out = env.step(np.array([1]))
        assert out.terminated[0] == (i == steps - 1)
    assert 5 < steps < 20 and abs(out.final_obs[0, 2]) > 0.2094  # the pole fell (12 degrees)
    assert np.all(np.abs(out.obs) <= 0.05)  # and the environment started a new episode


def test_leaving_the_track_terminates():
    env = CartPole(2, seed=0)
    env.state[0] = [2.39, 1.0, 0.0, 0.0]  # 0.02 s at 1 m/s crosses x = 2.4
    out = env.step(np.array([1, 1]))
    assert out.terminated.tolist() == [True, False]
    assert out.final_obs[0, 0] > 2.4 and abs(out.obs[0, 0]) <= 0.05 and env.elapsed[0] == 0


def test_time_limit_truncates_and_restarts():
    env = CartPole(2, max_episode_steps=5, seed=0)
    flags = []
    for _ in range(6):
        out = env.step(np.array([0, 1]) if len(flags) % 2 else np.array([1, 0]))
        flags.append((out.terminated.tolist(), out.truncated.tolist()))
    assert flags[4] == ([False, False], [True, True])  # step 5 hits the limit
    assert all(f == ([False, False], [False, False]) for i, f in enumerate(flags) if i != 4)
    assert env.elapsed.tolist() == [1, 1]


def test_resets_are_seeded_and_uniform_in_a_small_box():
    a, b, c = CartPole(4, seed=7), CartPole(4, seed=7), CartPole(4, seed=8)
    np.testing.assert_array_equal(a.state, b.state)
    assert not np.array_equal(a.state, c.state)
    assert np.all(np.abs(CartPole(500, seed=0).state) <= 0.05)


def test_state_round_trip_through_json_is_exact():
    rng = np.random.default_rng(0)
    env = CartPole(4, max_episode_steps=20, seed=0)
    for _ in range(15):
        env.step(rng.integers(0, 2, 4))
    saved = json.loads(json.dumps(env.state_dict()))
    actions = rng.integers(0, 2, (30, 4))
    first = [env.step(a) for a in actions]  # crosses terminations, truncations and resets
    other = CartPole(4, max_episode_steps=20, seed=99)
    other.load_state_dict(saved)
    for a, want in zip(actions, first):
        got = other.step(a)
        np.testing.assert_array_equal(got.obs, want.obs)
        np.testing.assert_array_equal(got.terminated | got.truncated,
                                      want.terminated | want.truncated)


def test_bad_actions_and_unknown_envs_are_clear_errors():
    with pytest.raises(ValueError, match=r"3 actions in \{0, 1\}"):
        CartPole(3).step(np.array([0, 2, 1]))
    with pytest.raises(ConfigError, match=r"rl.env: unknown environment 'cartpol'.*cartpole"):
        make_env("cartpol", 2, 500, 0)
    with pytest.raises(ValueError, match="shape"):
        CartPole(3).load_state_dict(CartPole(2).state_dict())


def test_matches_gymnasium_when_installed():
    """Optional cross-check against the reference implementation (not a dependency)."""
    gym = pytest.importorskip("gymnasium")
    ref = gym.wrappers.TimeLimit(gym.make("CartPole-v1").unwrapped, 500)
    obs, _ = ref.reset(seed=0)
    env = CartPole(1)
    env.state[:] = np.asarray(ref.unwrapped.state, np.float64)
    rng = np.random.default_rng(0)
    for _ in range(200):
        a = int(rng.integers(2))
        obs, _, term, trunc, _ = ref.step(a)
        out = env.step(np.array([a]))
        np.testing.assert_array_equal(out.final_obs[0], obs)
        if term or trunc:
            break
