"""StepContext.shared: one value per iteration for every phase that asks for the same key (an
actor and a critic trained on one rollout), recomputed in the next iteration and after a
resume or rollback that sets the iteration."""

from __future__ import annotations

import numpy as np

from gantrain.engine.context import StepContext
from gantrain.engine.loop import Loop
from gantrain.engine.schedule import Phase, Schedule


class CountingSource:
    def __init__(self) -> None:
        self.pulled = 0

    def next_batch(self):
        self.pulled += 1
        return (np.full((2,), self.pulled, np.float32),)

    def state_dict(self):
        return {"pulled": self.pulled}

    def load_state_dict(self, state):
        self.pulled = state["pulled"]


class Seen:
    def __init__(self, name: str) -> None:
        self.name, self.values = name, []

    def step(self, x):
        self.values.append(float(x.asnumpy()[0]))
        return x, {}


def shared_batch(ctx: StepContext):
    (x,) = ctx.shared("batch", StepContext.batch)
    return (x,)


def test_phases_share_one_batch_per_iteration():
    source = CountingSource()
    a, b = Seen("a"), Seen("b")
    loop = Loop(Schedule([Phase(a, shared_batch), Phase(b, shared_batch, repeats=2)]), source,
                progress=False)
    loop.run(3)
    assert source.pulled == 3  # one pull per iteration, not one per step
    assert a.values == [1, 2, 3] and b.values == [1, 1, 2, 2, 3, 3]


def test_keys_are_separate_and_plain_batches_are_unaffected():
    source = CountingSource()
    ctx = StepContext(source, np.random.default_rng(0))
    first = ctx.shared("x", StepContext.batch)
    assert ctx.shared("x", StepContext.batch) is first
    other = ctx.shared("y", StepContext.batch)
    assert other is not first and source.pulled == 2
    ctx.batch()
    assert source.pulled == 3 and ctx.shared("x", StepContext.batch) is first


def test_setting_the_iteration_empties_the_cache():
    source = CountingSource()
    ctx = StepContext(source, np.random.default_rng(0))
    ctx.iteration = 4
    first = ctx.shared("x", StepContext.batch)
    ctx.iteration += 1
    assert ctx.shared("x", StepContext.batch) is not first
    # a rollback to the very iteration number the cache was filled in must not reuse it
    cached = ctx.shared("x", StepContext.batch)
    ctx.iteration = 5
    assert ctx.shared("x", StepContext.batch) is not cached


def test_loop_state_load_starts_with_an_empty_cache():
    source = CountingSource()
    seen = Seen("a")
    loop = Loop(Schedule([Phase(seen, shared_batch)]), source, progress=False)
    loop.run(2)
    state = loop.state_dict()
    loop.run(3)
    loop.load_state_dict(state)  # back to iteration 2, source position 2
    loop.run(3)
    assert seen.values == [1, 2, 3, 3]
