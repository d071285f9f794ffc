"""``gantrain data prepare`` and ``gantrain data info`` end to end, and their errors."""

from __future__ import annotations

from gantrain.cli.main import main

from .data.test_prepared import make_folder


def test_prepare_then_info_then_train_config_finds_it(tmp_path, capsys):
    src = make_folder(tmp_path / "src", n=30)
    cache = str(tmp_path / "cache")
    assert main(["data", "prepare", str(src), "--size", "16", "--out", "tiny16",
                 "--cache-dir", cache, "--workers", "1", "--no-progress"]) == 0
    assert (tmp_path / "cache" / "tiny16" / "header.json").is_file()
    capsys.readouterr()
    assert main(["data", "info", "tiny16", "--cache-dir", cache]) == 0
    out = capsys.readouterr().out
    for expected in ("images     30", "16x16, 3 channel(s)", "bytes      23040",
                     "2 classes (cats: 15, dogs: 15)"):
        assert expected in out
    # a second prepare of the same source finds it at once
    assert main(["data", "prepare", str(src), "--size", "16", "--out", "tiny16",
                 "--cache-dir", cache, "--no-progress"]) == 0
    assert "prepared cache" in capsys.readouterr().err


def test_data_errors_are_one_line_with_exit_2(tmp_path, capsys):
    assert main(["data", "info", "nope", "--cache-dir", str(tmp_path)]) == 2
    assert "no prepared dataset 'nope'" in capsys.readouterr().err
    assert main(["data", "prepare", str(tmp_path / "missing"), "--size", "8"]) == 2
    assert "missing does not exist" in capsys.readouterr().err
