"""The scheduler, counted with fake players (the TF-GAN-style test): how often and in which order
each step runs over N iterations."""

from __future__ import annotations

import numpy as np
import pytest

from gantrain.engine.context import StepContext
from gantrain.engine.schedule import Phase, Schedule


class FakePlayer:
    def __init__(self, name: str, log: list[tuple[int, str]], ctx: StepContext) -> None:
        self.name, self.log, self.ctx = name, log, ctx

    def step(self, *inputs):
        self.log.append((self.ctx.iteration, self.name))
        return inputs[0], {}


class CountingSource:
    def __init__(self) -> None:
        self.pulled = 0

    def next_batch(self):
        self.pulled += 1
        return (np.full((2, 1), self.pulled, np.float32),)

    def state_dict(self):
        return {"pulled": self.pulled}

    def load_state_dict(self, state):
        self.pulled = state["pulled"]


def run(phases_spec, iterations: int):
    log: list[tuple[int, str]] = []
    source = CountingSource()
    ctx = StepContext(source, np.random.default_rng(0))
    phases = [
        Phase(FakePlayer(name, log, ctx), inputs=lambda c: c.batch(), repeats=r, every=e)
        for name, r, e in phases_spec
    ]
    schedule = Schedule(phases)
    outputs = []
    for _ in range(iterations):
        outputs.append(schedule.run_iteration(ctx))
        ctx.iteration += 1
    return log, source, outputs


def test_n_critic_five_then_generator():
    log, source, _ = run([("D", 5, 1), ("G", 1, 1)], iterations=7)
    names = [n for _, n in log]
    assert names == (["D"] * 5 + ["G"]) * 7
    assert source.pulled == 42  # every step pulls its own fresh batch


def test_lazy_phase_runs_every_k_iterations():
    log, _, _ = run([("D", 1, 1), ("D_reg", 1, 16), ("G", 1, 1)], iterations=50)
    reg_iters = [i for i, n in log if n == "D_reg"]
    assert reg_iters == [0, 16, 32, 48]
    assert sum(n == "D" for _, n in log) == 50
    assert sum(n == "G" for _, n in log) == 50
    # order inside an iteration follows the phase list
    assert [n for i, n in log if i == 16] == ["D", "D_reg", "G"]


def test_three_players_with_mixed_ratios():
    spec = [("A", 2, 1), ("B", 1, 3), ("C", 3, 2)]
    log, _, _ = run(spec, iterations=12)
    counts = {n: sum(x == n for _, x in log) for n in "ABC"}
    assert counts == {"A": 24, "B": 4, "C": 18}
    assert [n for i, n in log if i == 6] == ["A", "A", "B", "C", "C", "C"]
    assert [n for i, n in log if i == 1] == ["A", "A"]


def test_outputs_hold_last_step_of_each_phase():
    _, _, outputs = run([("D", 3, 1), ("G", 1, 2)], iterations=2)
    assert set(outputs[0]) == {"D", "G"} and set(outputs[1]) == {"D"}
    # D's third batch of iteration 0 is batch number 3
    assert float(outputs[0]["D"][0].asnumpy()[0, 0]) == 3.0


def test_invalid_phases_are_rejected():
    ctx = StepContext(CountingSource(), np.random.default_rng(0))
    p = FakePlayer("D", [], ctx)
    with pytest.raises(ValueError, match="repeats"):
        Phase(p, inputs=lambda c: (), repeats=0)
    with pytest.raises(ValueError, match="every"):
        Phase(p, inputs=lambda c: (), every=-1)
    with pytest.raises(ValueError, match="unique"):
        Schedule([Phase(p, lambda c: ()), Phase(p, lambda c: ())])
    with pytest.raises(ValueError, match="at least one"):
        Schedule([])


def test_a_later_phase_reads_what_an_earlier_one_returned_this_iteration():
    log: list[tuple[int, str]] = []
    ctx = StepContext(CountingSource(), np.random.default_rng(0))
    seen: list[float] = []

    def d_inputs(c):  # D trains on what G's step of this very iteration returned
        seen.append(float(c.outputs["G"][0].asnumpy()[0, 0]))
        return c.batch()

    schedule = Schedule([Phase(FakePlayer("G", log, ctx), inputs=lambda c: c.batch()),
                         Phase(FakePlayer("D", log, ctx), inputs=d_inputs)])
    kept = []
    for _ in range(3):
        kept.append(schedule.run_iteration(ctx))
        ctx.iteration += 1
        assert ctx.outputs == {}  # a new iteration starts with no outputs
    assert seen == [1.0, 3.0, 5.0]  # G's batch of the same iteration, never an older one
    assert [float(o["D"][0].asnumpy()[0, 0]) for o in kept] == [2.0, 4.0, 6.0]


def test_updates_per_iteration_read_off_the_phase_list():
    log: list[tuple[int, str]] = []
    ctx = StepContext(CountingSource(), np.random.default_rng(0))
    d, g, e = (FakePlayer(n, log, ctx) for n in ("D", "G", "E"))
    g.accumulate = 4  # updates once every four calls

    class Reg:  # an objective of D: counts as D's updates
        name, player = "D_reg", d

    schedule = Schedule([Phase(d, inputs=lambda c: (), repeats=5), Phase(Reg(), lambda c: (),
                         every=16), Phase(g, lambda c: ()), Phase(e, lambda c: (), every=2)])
    assert schedule.updates_per_iteration() == {"D": 5 + 1 / 16, "G": 0.25, "E": 0.5}
