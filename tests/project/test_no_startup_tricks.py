"""The start-up shortcuts the package layout removed stay out of the package (docs/architecture.md,
cli): no `TYPE_CHECKING = False`, no run-time stand-ins in an `else:` after
`if TYPE_CHECKING:`, no `_thread` or `_signal` in place of `threading` and `signal`, no choice
made from what `sys.modules` happens to hold, no error caught by its class's name, and no
patching of the standard library's modules. Each detector is shown to find its shortcut."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "epistemic_agent"
PRIVATE_STAND_INS = frozenset({"_thread", "_signal"})
STANDARD_MODULES = frozenset({"argparse", "subprocess", "signal", "threading", "typing", "os"})


def _is_type_checking(node: ast.expr) -> bool:
    return (isinstance(node, ast.Name) and node.id == "TYPE_CHECKING") or (
        isinstance(node, ast.Attribute) and node.attr == "TYPE_CHECKING"
    )


def _is_class_name(node: ast.expr) -> bool:
    """`type(x).__name__` or `x.__class__.__name__`."""
    if not (isinstance(node, ast.Attribute) and node.attr == "__name__"):
        return False
    inner = node.value
    called_type = (
        isinstance(inner, ast.Call) and isinstance(inner.func, ast.Name) and inner.func.id == "type"
    )
    return called_type or (isinstance(inner, ast.Attribute) and inner.attr == "__class__")


def _is_sys_modules(node: ast.expr) -> bool:
    return (
        isinstance(node, ast.Attribute)
        and node.attr == "modules"
        and isinstance(node.value, ast.Name)
        and node.value.id == "sys"
    )


def shortcuts(source: str) -> list[str]:
    """What in `source` is one of the shortcuts, as `line: what`."""
    found: list[str] = []
    for node in ast.walk(ast.parse(source)):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Assign) and any(_is_type_checking(t) for t in node.targets):
            found.append(f"{line}: TYPE_CHECKING assigned")
        elif isinstance(node, ast.If) and _is_type_checking(node.test) and node.orelse:
            found.append(f"{line}: run-time stand-ins after `if TYPE_CHECKING:`")
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module]
            found += [f"{line}: imports {n}" for n in names if n in PRIVATE_STAND_INS]
        elif isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            if any(_is_sys_modules(o) for o in operands):
                found.append(f"{line}: decides from sys.modules")
            if any(_is_class_name(o) for o in operands):
                found.append(f"{line}: compares a class's name")
        elif isinstance(node, ast.Assign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            roots = [_root(t) for t in targets if isinstance(t, ast.Attribute)]
            found += [f"{line}: patches {r}" for r in roots if r in STANDARD_MODULES]
    return found


def _root(node: ast.expr) -> str | None:
    """The name an attribute chain starts from: `argparse` for `argparse.ArgumentParser.exit`."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


@pytest.mark.parametrize(
    ("snippet", "expected"),
    [
        ("TYPE_CHECKING = False", "TYPE_CHECKING assigned"),
        (
            "if TYPE_CHECKING:\n    from typing import overload\nelse:\n    overload = id",
            "run-time stand-ins",
        ),
        ("import _thread", "imports _thread"),
        ("from _signal import SIGTERM", "imports _signal"),
        ("fork = 'subprocess' not in sys.modules", "decides from sys.modules"),
        (
            "try:\n    pass\nexcept Exception as e:\n    ok = type(e).__name__ == 'X'",
            "class's name",
        ),
        ("ok = error.__class__.__name__ in ('ArgumentError',)", "class's name"),
        ("argparse.ArgumentParser.exit = quit", "patches argparse"),
        ("subprocess._USE_VFORK = False", "patches subprocess"),
    ],
)
def test_each_detector_finds_its_shortcut(snippet: str, expected: str) -> None:
    assert any(expected in finding for finding in shortcuts(snippet)), shortcuts(snippet)


def test_plain_code_is_not_flagged() -> None:
    plain = (
        "import threading, signal, sys\n"
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from pathlib import Path\n"
        "name = type(value).__name__\n"  # shown in a message, not compared
        "loaded = sys.modules.get('x')\n"
    )
    assert shortcuts(plain) == []


@pytest.mark.system  # end to end, slow for the default tier
def test_no_module_of_the_package_takes_a_startup_shortcut() -> None:
    found = {
        str(path.relative_to(PACKAGE)): hits
        for path in sorted(PACKAGE.rglob("*.py"))
        if (hits := shortcuts(path.read_text(encoding="utf-8")))
    }
    assert found == {}
