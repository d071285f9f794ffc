"""The loop: hooks and their intervals, stopping on signals and time budgets, and the state it
saves for a resume."""

from __future__ import annotations

import json
import os
import signal

import numpy as np
import pytest

from gantrain.data.dataset import ArrayDataset
from gantrain.data.loader import ArrayLoader
from gantrain.engine.hooks import JsonlWriter, MetricsLogger, Periodic
from gantrain.engine.loop import Hook, Loop
from gantrain.engine.schedule import Phase, Schedule


class Counter:
    name = "P"

    def __init__(self) -> None:
        self.calls = 0

    def step(self, x, z):
        self.calls += 1
        return x, {"z": z, "x_mean": x.mean()}


class Recorder(Hook):
    def __init__(self, every: int = 1) -> None:
        self.every, self.events = every, []

    def on_start(self, loop):
        self.events.append(("start", loop.iteration))

    def after_iteration(self, loop):
        self.events.append(("iter", loop.iteration))

    def on_end(self, loop):
        self.events.append(("end", loop.iteration))


def make_loop(hooks=(), n=40):
    data = ArrayDataset(np.arange(n, dtype=np.float32).reshape(n, 1), name="toy")
    player = Counter()

    def inputs(ctx):
        (x,) = ctx.batch()
        return x, ctx.normal(1)

    schedule = Schedule([Phase(player, inputs)])
    return Loop(schedule, ArrayLoader(data, 4, seed=0), seed=0, hooks=hooks, progress=False), player


def test_hooks_run_at_their_interval_and_at_start_and_end():
    rec = Recorder(every=3)
    loop, player = make_loop([rec])
    loop.run(7)
    assert rec.events == [("start", 0), ("iter", 3), ("iter", 6), ("end", 7)]
    assert player.calls == 7 and loop.stop_reason == "steps"
    loop.run(9)  # continue to 9 in total
    assert rec.events[-3:] == [("start", 7), ("iter", 9), ("end", 9)]


def test_periodic_runs_at_end_only_if_not_just_run():
    seen = []
    loop, _ = make_loop([Periodic(lambda lp: seen.append(lp.iteration), every=5)])
    loop.run(10)
    assert seen == [5, 10]
    loop.run(12)
    assert seen == [5, 10, 12]


@pytest.fixture
def default_sigint():
    """Background jobs start with SIGINT ignored; these tests need the usual handler."""
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, before)


def test_sigint_finishes_the_iteration_then_stops_and_runs_end_hooks(default_sigint):
    class Interrupt(Hook):
        def after_iteration(self, loop):
            if loop.iteration == 4:
                os.kill(os.getpid(), signal.SIGINT)

    rec = Recorder()
    loop, player = make_loop([Interrupt(), rec])
    loop.run(100)
    assert loop.iteration == 4 and player.calls == 4
    assert loop.stop_reason == "SIGINT" and rec.events[-1] == ("end", 4)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_time_budget_stops_the_run():
    loop, _ = make_loop()
    loop.run(10**9, time_budget=0.0)
    assert loop.iteration == 1 and loop.stop_reason == "time budget"


def test_state_dict_round_trip_replays_data_and_noise():
    a, _ = make_loop()
    a.run(5)
    state = a.state_dict()
    a.run(8)
    expected = a.outputs["P"]
    b, _ = make_loop()
    b.load_state_dict(state)
    b.run(8)
    got = b.outputs["P"]
    np.testing.assert_array_equal(expected[0].asnumpy(), got[0].asnumpy())
    np.testing.assert_array_equal(expected[1]["z"].asnumpy(), got[1]["z"].asnumpy())


def test_metrics_logger_writes_jsonl(tmp_path):
    writer = JsonlWriter(tmp_path / "m.jsonl")
    loop, _ = make_loop([MetricsLogger(writer, every=2)])
    loop.run(4)

    rows = [json.loads(line) for line in (tmp_path / "m.jsonl").read_text().splitlines()]
    assert [r["iteration"] for r in rows] == [2, 4]
    assert "it_per_s" in rows[1]
    assert rows[0]["P/z"] == pytest.approx(float(rows[0]["P/z"]))
    assert "P/x_mean" in rows[1] and "P/loss" not in rows[1]  # a non-scalar loss is not logged


def test_loader_shuffles_per_epoch_and_drops_the_tail():
    data = ArrayDataset(np.arange(10, dtype=np.float32).reshape(10, 1), name="ten")
    loader = ArrayLoader(data, 4, seed=1)
    epoch0 = np.concatenate([loader.next_batch()[0] for _ in range(2)]).ravel()
    epoch1 = np.concatenate([loader.next_batch()[0] for _ in range(2)]).ravel()
    assert len(set(epoch0)) == 8 and len(set(epoch1)) == 8
    assert loader.epoch == 1
    with pytest.raises(ValueError, match="larger than dataset"):
        ArrayLoader(data, 11)


def test_an_ignored_signal_stays_ignored(default_sigint):
    signal.signal(signal.SIGINT, signal.SIG_IGN)

    class Interrupt(Hook):
        def after_iteration(self, loop):
            if loop.iteration == 2:
                os.kill(os.getpid(), signal.SIGINT)

    loop, _ = make_loop([Interrupt()])
    loop.run(5)
    assert loop.iteration == 5 and loop.stop_reason == "steps"
    assert signal.getsignal(signal.SIGINT) == signal.SIG_IGN
