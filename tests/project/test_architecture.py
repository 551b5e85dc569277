"""The import contract (pyproject.toml, [tool.importlinter]; docs/architecture.md): every module
lives in a subpackage, imports flow one way through the layers, no two modules import each
other (imports inside functions counted), and breaking either rule fails the check."""

from __future__ import annotations

import tomllib
from pathlib import Path

import grimp

from lintimports import copy_package, lint

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "epistemic_agent"


def layers() -> list[set[str]]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    contract = next(c for c in config["contracts"] if c["type"] == "layers")
    return [{name.strip() for name in layer.split(":")} for layer in contract["layers"]]


def cycles(graph: grimp.ImportGraph) -> list[set[str]]:
    """The strongly connected groups of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[set[str]] = []
    for root in sorted(graph.modules):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    group = set()
                    while True:
                        member = stack.pop()
                        group.add(member)
                        if member == node:
                            break
                    if len(group) > 1:
                        found.append(group)
            elif child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                work.append((child, iter(sorted(graph.find_modules_directly_imported_by(child)))))
            elif child in stack:
                low[node] = min(low[node], index[child])
    return found


def test_every_module_lives_in_a_subpackage_that_sits_in_one_layer() -> None:
    flat = sorted(path.name for path in PACKAGE.glob("*.py") if path.name != "__init__.py")
    assert flat == [], "modules outside any subpackage"
    packages = {path.parent.name for path in PACKAGE.glob("*/__init__.py")}
    listed = [name for layer in layers() for name in layer]
    assert len(listed) == len(set(listed)), "a package is in two layers"
    assert packages == set(listed)


def test_no_module_is_over_600_lines() -> None:
    long = {
        str(path.relative_to(PACKAGE)): lines
        for path in PACKAGE.rglob("*.py")
        if "tasks" not in path.relative_to(PACKAGE).parts
        and (lines := len(path.read_text().splitlines())) > 600
    }
    assert long == {}


def test_the_cycle_finder_finds_a_cycle() -> None:
    graph = grimp.ImportGraph()
    for name in ("p.a", "p.b", "p.c", "p.d"):
        graph.add_module(name)
    graph.add_import(importer="p.a", imported="p.b")
    graph.add_import(importer="p.b", imported="p.c")
    graph.add_import(importer="p.c", imported="p.a")
    graph.add_import(importer="p.d", imported="p.a")
    assert cycles(graph) == [{"p.a", "p.b", "p.c"}]


def test_there_are_no_import_cycles_counting_imports_inside_functions(tmp_path: Path) -> None:
    assert cycles(grimp.build_graph("epistemic_agent", cache_dir=None)) == []
    tree = copy_package(tmp_path)
    model = tree / "src" / "epistemic_agent" / "effects" / "model.py"
    model.write_text(
        model.read_text() + "\n\ndef _late() -> object:\n    from . import classify\n\n"
        "    return classify\n"
    )
    broken = lint(tree)
    assert broken.returncode != 0
    assert "No cycles are allowed in epistemic_agent.effects" in broken.stdout


def test_the_contract_holds_and_breaking_a_layer_fails_it(tmp_path: Path) -> None:
    tree = copy_package(tmp_path)
    assert lint(tree).returncode == 0
    core = tree / "src" / "epistemic_agent" / "core" / "vocabulary.py"
    core.write_text(
        core.read_text() + "\n\ndef _late() -> object:\n    from .. import cli\n\n    return cli\n"
    )
    broken = lint(tree)
    assert broken.returncode != 0
    assert "epistemic_agent.core.vocabulary -> epistemic_agent.cli" in broken.stdout
