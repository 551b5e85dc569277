"""The start-up budget of `epistemic exec`, held by what it imports.

`exec` runs once per tool call when a client drives the gate from outside, so what it imports
is paid on every call. The heavy dependencies (rich, celpy, the model SDKs, mcp, matplotlib,
prompt_toolkit) are imported only by the commands that need them; the bench figure of exec's
start-up is in bench/RESULTS.md. This test fails when a new one creeps onto the path.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

#: The packages outside the standard library that `exec` may import: the package itself and
#: tree-sitter's bash grammar (a shell call is classified before it runs).
THIRD_PARTY = {"epistemic_agent", "tree_sitter", "tree_sitter_bash", "_distutils_hack"}
#: Standard-library packages that cost real start-up time and that `exec` has no use for.
HEAVY_STDLIB = {
    "asyncio",
    "concurrent",
    "decimal",
    "dataclasses",  # and with it inspect: 5 ms (core.structs is the lighter record)
    "email",
    "http",
    "inspect",
    "logging",
    "multiprocessing",
    "pydoc",
    "sqlite3",
    "ssl",
    "tomllib",
    "unittest",
    "xml",
}
PROBE = """
import atexit, json, sys, runpy
def dump():
    sys.__stderr__.write("MODULES " + json.dumps(sorted(sys.modules)) + "\\n")
atexit.register(dump)
sys.argv = ["epistemic", "exec", *json.loads(sys.argv[1])]
runpy.run_module("epistemic_agent.cli", run_name="__main__")
"""


#: What a shell call whose classification the workspace has cached must not import: the
#: parser, the program tables, the model layer (no supervisor is set), the HTML escaping and
#: the commit hook's trace model.
NOT_ON_A_CACHED_CALL = (
    "tree_sitter",
    "epistemic_agent.effects.classify",
    "epistemic_agent.effects.programs",
    "epistemic_agent.providers",
    "epistemic_agent.supervisor.model",
    "html",
    "epistemic_agent.reports.html",
)
PACKAGES_OF_THOSE = tuple(f"{name}." for name in NOT_ON_A_CACHED_CALL)


def imported_by_exec(workspace: Path, args: list[str]) -> set[str]:
    """The top-level names of the packages `epistemic exec ARGS` imports."""
    return {name.split(".")[0] for name in modules_of_exec(workspace, args)}


def modules_of_exec(workspace: Path, args: list[str]) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(["-C", str(workspace), *args])],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    lines = [line for line in done.stderr.splitlines() if line.startswith("MODULES ")]
    assert done.returncode == 0 and lines, done.stderr
    return set(json.loads(lines[-1].removeprefix("MODULES ")))


@pytest.mark.parametrize(
    "args",
    [
        ["--type", "collect-info", "--reason", "see which files the workspace holds", "--", "ls"],
        [
            "--type",
            "change-state",
            "--reason",
            "make the file the next step reads",
            "--",
            "touch x",
        ],
    ],
    ids=["observation", "mutation"],
)
def test_exec_imports_nothing_heavy(tmp_path: Path, args: list[str]) -> None:
    modules = imported_by_exec(tmp_path, args)
    outside = {name for name in modules if name not in sys.stdlib_module_names}
    assert outside - {"__main__"} <= THIRD_PARTY, f"new on exec's path: {outside - THIRD_PARTY}"
    assert not modules & HEAVY_STDLIB, f"heavy on exec's path: {modules & HEAVY_STDLIB}"
    assert "epistemic_agent" in modules and "tree_sitter" in modules  # the probe saw the call


def test_a_call_seen_before_loads_no_parser_no_tables_and_no_model_layer(tmp_path: Path) -> None:
    args = ["--type", "collect-info", "--reason", "see which files the workspace holds", "--"]
    first = modules_of_exec(tmp_path, [*args, "ls -a"])
    again = modules_of_exec(tmp_path, [*args, "ls -a"])
    assert "epistemic_agent.effects.programs" in first  # a new command is classified
    loaded = {n for n in again if n in NOT_ON_A_CACHED_CALL or n.startswith(PACKAGES_OF_THOSE)}
    assert not loaded, f"on the path of a cached call: {sorted(loaded)}"
    assert "epistemic_agent.effects.cache" in again  # the probe saw the call
