"""Front doors (docs/architecture.md): each package's `__init__` names what other packages may
use of it, its typed imports and its table say the same, every name resolves to the object
its module defines, and an import that reaches past a door breaks the package's contract."""

from __future__ import annotations

import ast
import importlib
import sys
import tomllib
from pathlib import Path

import pytest

from lintimports import copy_package, lint

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "epistemic_agent"


def doors() -> list[str]:
    """The packages whose `__init__` has a front door."""
    return sorted(
        init.parent.name for init in PACKAGE.glob("*/__init__.py") if "EXPORTS" in init.read_text()
    )


def typed_imports(package: str) -> dict[str, str]:
    """The door's TYPE_CHECKING imports: public name -> "module:attribute"."""
    tree = ast.parse((PACKAGE / package / "__init__.py").read_text())
    found: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.If) and getattr(node.test, "id", "") == "TYPE_CHECKING":
            for imported in node.body:
                if isinstance(imported, ast.ImportFrom) and imported.level == 1:
                    for alias in imported.names:
                        found[alias.asname or alias.name] = f"{imported.module}:{alias.name}"
    return found


def test_every_package_other_packages_import_from_has_a_door() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    protected = {
        contract["protected_modules"][0].split(".")[1]
        for contract in config["contracts"]
        if contract["type"] == "protected"
    }
    assert set(doors()) == protected
    assert {"core", "journal", "session", "gate", "policy", "execute"} <= protected


@pytest.mark.parametrize("package", doors())
def test_a_door_s_table_and_its_typed_imports_agree_and_resolve(package: str) -> None:
    module = importlib.import_module(f"epistemic_agent.{package}")
    exports: dict[str, str] = module.EXPORTS
    assert typed_imports(package) == exports
    assert set(exports) <= set(module.__all__)
    for public, where in exports.items():
        name, _, attribute = where.partition(":")
        defined = getattr(importlib.import_module(f"epistemic_agent.{package}.{name}"), attribute)
        assert getattr(module, public) is defined, public
    with pytest.raises(AttributeError, match="no attribute 'not_a_name'"):
        module.not_a_name  # noqa: B018


def test_a_reach_past_a_door_breaks_that_package_s_contract(tmp_path: Path) -> None:
    tree = copy_package(tmp_path)
    prompt = tree / "src" / "epistemic_agent" / "agent" / "prompt.py"
    prompt.write_text(
        prompt.read_text() + "\n\ndef _late() -> object:\n    from ..journal.log import Record\n\n"
        "    return Record\n"
    )
    broken = lint(tree)
    assert broken.returncode != 0
    assert "Front door: other packages use journal/" in broken.stdout
    assert "epistemic_agent.agent.prompt -> epistemic_agent.journal.log" in broken.stdout
    assert "Contracts: " in broken.stdout and " 1 broken" in broken.stdout


def test_a_name_whose_module_another_thread_is_importing_waits_for_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The MCP server loads its policy in a thread while the main thread imports: a door
    read a half-made module once, and `from ..mcp import Gatekeeper` failed."""
    package = tmp_path / "doorway"
    package.mkdir()
    (package / "__init__.py").write_text(
        "from epistemic_agent.core import front_door\n"
        "EXPORTS = {'VALUE': 'slow:VALUE'}\n"
        "__getattr__ = front_door(__name__, EXPORTS)\n"
    )
    (package / "slow.py").write_text(
        "import threading, time\nSTARTED = threading.Event()\n"
        "import doorway\ndoorway.STARTED.set()\ntime.sleep(0.3)\nVALUE = 42\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    import threading

    doorway = importlib.import_module("doorway")
    doorway.STARTED = threading.Event()  # set by `slow` once it is half made
    importing = threading.Thread(target=importlib.import_module, args=("doorway.slow",))
    importing.start()
    assert doorway.STARTED.wait(10)
    try:
        found = {}
        exec("from doorway import VALUE as value", found)
        assert found["value"] == 42
    finally:
        importing.join(10)
        for name in ("doorway", "doorway.slow"):
            sys.modules.pop(name, None)
