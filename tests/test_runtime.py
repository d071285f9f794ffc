"""runtime.setup's CPU settings (measured in docs/performance.md, "Levers")."""

from __future__ import annotations

import mindspore as ms

from gantrain import runtime


def test_cpu_setup_runs_graph_ops_one_at_a_time():
    runtime.setup("CPU", 0)
    assert ms.get_context("inter_op_parallel_num") == runtime.CPU_INTER_OP_THREADS == 1
    assert ms.get_context("runtime_num_threads") >= 1  # intra-op threads left to mindspore
