"""No absolute path of a machine in the repository's text files: shared data is found relative
to the checkout (``../shared/...``) or through an option. A benchmark's raw JSON copied into
docs/ carried one twice (its ``--set data.args.root=...`` overrides)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = (".ci", "docs", "gantrain", "models", "scripts", "tests")
TEXT = {".py", ".md", ".toml", ".json", ".jsonl", ".txt", ".cfg", ".yml", ".yaml", ".sh", ".html"}
# a path that starts at the root folders work, home, root or Users (not "~/...", "./..." or a URL)
ABSOLUTE = re.compile(r"(?<![\w.~/-])/(?:work|home|root|Users)/")


def _text_files():
    yield from (p for p in ROOT.iterdir() if p.is_file() and p.suffix in TEXT | {""})
    for folder in FOLDERS:
        for p in (ROOT / folder).rglob("*"):
            if p.is_file() and (p.suffix in TEXT or p.parent.name == ".ci") and \
                    "__pycache__" not in p.parts:
                yield p


def test_no_machine_paths_in_the_repository():
    found = []
    for path in _text_files():
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            if ABSOLUTE.search(line):
                found.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()[:120]}")
    assert not found, "absolute machine paths:\n" + "\n".join(found)
