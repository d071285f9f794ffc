"""Model files named by a config: the notice printed when one comes from outside the working
directory tree (run folders and configs execute the model code they name)."""

from __future__ import annotations

import pytest

from gantrain.config import imports
from gantrain.config.schema import ConfigError


@pytest.fixture
def fresh_notices(monkeypatch):
    monkeypatch.setattr(imports, "_NOTIFIED", set())


def write_nets(path):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("class TinyG:\n    pass\n")
    return path


def test_a_model_file_outside_the_working_directory_is_announced_once(
        tmp_path, monkeypatch, capsys, fresh_notices):
    nets = write_nets(tmp_path / "elsewhere" / "nets.py")
    (tmp_path / "work").mkdir()
    monkeypatch.chdir(tmp_path / "work")
    assert imports.load_object(f"{nets}:TinyG", "generator").__name__ == "TinyG"
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert str(nets.resolve()) in err
    assert "only use ones you trust" in err and "run the model code they name" in err
    # the same file again, spelled differently: no second notice
    assert imports.load_object("../elsewhere/nets.py:TinyG", "discriminator").__name__ == "TinyG"
    assert capsys.readouterr().err == ""


def test_a_model_file_inside_the_working_directory_is_imported_silently(
        tmp_path, monkeypatch, capsys, fresh_notices):
    write_nets(tmp_path / "models_here" / "nets.py")
    monkeypatch.chdir(tmp_path)
    assert imports.load_object("models_here/nets.py:TinyG", "generator").__name__ == "TinyG"
    captured = capsys.readouterr()
    assert captured.err == "" and captured.out == ""


def test_a_missing_model_file_is_an_error_without_a_notice(tmp_path, capsys, fresh_notices):
    with pytest.raises(ConfigError, match="does not exist"):
        imports.load_object(f"{tmp_path / 'nowhere.py'}:G", "generator")
    assert capsys.readouterr().err == ""
