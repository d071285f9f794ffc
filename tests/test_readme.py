"""The README's Python example runs as written (on a shorter budget)."""

from __future__ import annotations

import re
import runpy
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


@pytest.mark.slow
def test_readme_python_example_trains(in_tmp):
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert blocks, "README has no python example"
    code = blocks[0]
    assert "run(steps=2000)" in code
    # MindSpore's graph compiler reads function source from files, so run it from one.
    script = in_tmp / "readme_example.py"
    script.write_text(code.replace("run(steps=2000)", "run(steps=5)"))
    namespace = runpy.run_path(str(script))
    d, g = namespace["d"], namespace["g"]
    assert int(d.updates.asnumpy()) == 25 and int(g.updates.asnumpy()) == 5
    assert [p.name for p in in_tmp.iterdir()] == ["readme_example.py"]  # nothing else written


@pytest.mark.slow
def test_readme_third_player_example_runs(in_tmp):
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert len(blocks) >= 2 and 'Player("E"' in blocks[1]
    script = in_tmp / "readme_three.py"
    script.write_text((blocks[0] + blocks[1]).replace("run(steps=2000)", "run(steps=5)"))
    namespace = runpy.run_path(str(script))
    d, g, e = namespace["d"], namespace["g"], namespace["e"]
    # both loops ran 5 iterations: D 5 x 5 + 5 x 5, G 5 + 5, E on iterations 0, 2, 4
    assert int(d.updates.asnumpy()) == 50 and int(g.updates.asnumpy()) == 10
    assert int(e.updates.asnumpy()) == 3


def test_readme_commands_match_the_cli():
    text = README.read_text()
    assert "pip install . && gantrain train " in text
    assert 'pip install ".[dev]" && python -m pytest -q' in text
    from gantrain.cli.main import DEFAULT_PRESET

    assert f"`{DEFAULT_PRESET}`" in text
