"""The package's layering, read from the source: engine -> blocks -> models -> config -> data ->
metrics -> recipes -> cli. A module may import its own layer or the layers below it, never one
above, and no chain of imports (deferred ones included) leads back to where it started."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "gantrain"
LAYERS = ["engine", "viz", "blocks", "models", "config", "data", "metrics", "recipes", "cli"]
# engine and viz are independent foundations: neither may import the other
SAME_LEVEL = {"engine": 0, "viz": 0}


def _level(layer: str) -> int:
    return SAME_LEVEL.get(layer, LAYERS.index(layer))


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _exists(module: str) -> bool:
    base = PACKAGE.parent / Path(*module.split("."))
    return base.with_suffix(".py").is_file() or (base / "__init__.py").is_file()


def _imports(path: Path) -> set[str]:
    """Every gantrain module ``path`` imports, at any depth of the file."""
    module = _module_name(path)
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("gantrain"))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if not target.startswith("gantrain"):
                continue
            for alias in node.names:  # `from .engine import checkpoint` names a module
                sub = f"{target}.{alias.name}"
                found.add(sub if _exists(sub) else target)
    return found


def _graph() -> dict[str, set[str]]:
    return {_module_name(p): _imports(p) for p in PACKAGE.rglob("*.py")}


def _layer(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in LAYERS else None


def test_every_module_belongs_to_a_layer():
    loose = [m for m in _graph() if m not in ("gantrain", "gantrain.api") and _layer(m) is None]
    assert loose == [], f"modules outside the layers {LAYERS}: {loose}"


def test_no_module_imports_a_layer_above_its_own():
    upward = []
    for module, targets in _graph().items():
        source = _layer(module)
        if source is None:
            continue
        for target in targets:
            layer = _layer(target)
            if layer is None and target in ("gantrain", "gantrain.api"):
                upward.append(f"{module} -> {target} (the public API is for users)")
            elif layer is not None and layer != source and (
                _level(layer) > _level(source) or _level(layer) == _level(source)
            ):
                upward.append(f"{module} ({source}) -> {target} ({layer})")
    assert upward == [], "imports that reach up a layer:\n" + "\n".join(sorted(upward))


def test_no_import_cycles():
    graph = _graph()
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    cycles: list[list[str]] = []

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph.get(node, ())):
            if nxt not in graph or nxt == node:
                continue
            if state.get(nxt) == 1:
                cycles.append(path[path.index(nxt):] + [nxt] if nxt in path else [node, nxt])
            elif nxt not in state:
                visit(nxt, path + [nxt])
        state[node] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    # a package's __init__ importing its own submodules is not a cycle unless they import back
    assert cycles == [], "import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)


def test_the_check_itself_sees_deferred_and_relative_imports():
    graph = _graph()
    # the CLI imports recipes only inside its command functions, and relatively
    assert any(t.startswith("gantrain.recipes") for t in graph["gantrain.cli.train"])
    assert "gantrain.engine.context" in graph["gantrain.engine.loop"]


def test_public_api_is_explicit_and_complete():
    """``gantrain/__init__.py`` names for type checkers exactly what ``gantrain.api`` exports,
    and each name resolves (lazily) to the object in its home module."""
    import gantrain
    from gantrain import api

    tree = ast.parse((PACKAGE / "__init__.py").read_text())
    checked = {a.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
               and node.module == "api" for a in node.names}
    assert checked == set(api.__all__)
    for name in api.__all__:
        assert getattr(gantrain, name) is getattr(api, name)
    from gantrain.recipes.gan.build import build_gan

    assert gantrain.build_gan is build_gan and "EMA" in dir(gantrain)
    with __import__("pytest").raises(AttributeError, match="no attribute 'nope'"):
        gantrain.nope  # noqa: B018


def test_importing_gantrain_and_the_cli_does_not_load_mindspore():
    import subprocess
    import sys

    code = ("import sys, gantrain, gantrain.cli.main; "
            "print('mindspore' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.stdout.strip() == "False", out.stderr
