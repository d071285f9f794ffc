"""The truncation trick (Brock et al. 2019) as a scoring option: ``gantrain eval --truncation``
scores what ``gantrain sample --truncation`` draws, and says so in the report."""

from __future__ import annotations

import json

import pytest

from gantrain.cli.main import main


@pytest.mark.slow
def test_eval_scores_truncated_noise_and_says_so(in_tmp, capsys, trained_2d):
    run = trained_2d("hinge")
    assert main(["eval", str(run), "--n", "500"]) == 0
    plain = json.loads((run / "eval.json").read_text())
    assert main(["eval", str(run), "--n", "500", "--truncation", "0.2"]) == 0
    cut = json.loads((run / "eval.json").read_text())
    assert "500 samples of shape (2,) from noise truncated at |z| <= 0.2" == cut["drawn"]
    assert "truncated" not in plain["drawn"]
    assert cut["mixture"] != plain["mixture"]  # other noise, other samples, other figures
    capsys.readouterr()
    assert main(["eval", str(run), "--truncation", "0"]) == 2
    assert "--truncation must be > 0, got 0" in capsys.readouterr().err
    assert main(["eval", str(run), "--features", "inception", "--truncation", "1"]) == 2
    assert "--truncation score with the classifier features" in capsys.readouterr().err
