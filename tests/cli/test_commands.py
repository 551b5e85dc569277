"""The command table (cli/commands.py): every command in it is reachable, its help renders, and
`epistemic --help` lists them all without importing a command's module."""

from __future__ import annotations

import argparse
import importlib
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from epistemic_agent.cli import app
from epistemic_agent.cli.commands import COMMANDS


def subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


@pytest.mark.parametrize("name", list(COMMANDS))
def test_each_command_names_a_module_and_function_that_define_it(name: str) -> None:
    entry = COMMANDS[name]
    module = importlib.import_module(f"epistemic_agent.cli.{entry.module}")
    assert callable(getattr(module, entry.define))
    chosen = subparsers(app.build_parser(name, every=False))
    assert list(chosen) == [name]  # only the command about to run is built
    leaves = [p for p in app._children(chosen[name]) if not subparsers(p)] or [chosen[name]]
    for leaf in leaves:  # `policy check`, `git-hook install`...: each runs a handler
        assert callable(leaf.get_default("handler")), leaf.prog
    assert chosen[name].format_help().startswith(f"usage: epistemic {name} ")


def test_the_top_level_help_lists_every_summary_in_table_order() -> None:
    text = app.build_parser(every=False).format_help()
    listed = [line.split()[0] for line in text.splitlines() if re.match(r"    \S", line)]
    assert listed == list(COMMANDS)
    assert all(command.summary.split()[0] in text for command in COMMANDS.values())


def test_help_imports_no_command_module() -> None:
    probe = (
        "import json, sys\n"
        "from epistemic_agent.cli import main\n"
        "try:\n"
        "    main(['--help'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "sys.stderr.write(json.dumps(sorted(sys.modules)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    loaded = set(json.loads(done.stderr))
    modules = {f"epistemic_agent.cli.{command.module}" for command in COMMANDS.values()}
    assert not loaded & modules, sorted(loaded & modules)
    assert "usage: epistemic [-h] [--version] COMMAND ..." in done.stdout


def test_every_command_is_built_in_full_for_the_docs() -> None:
    built = subparsers(app.build_parser())
    assert list(built) == list(COMMANDS)
    assert all(callable(p.get_default("handler")) or subparsers(p) for p in built.values())


def test_an_unknown_command_fails_as_before(capsys: pytest.CaptureFixture[str]) -> None:
    assert app.main(["lgo"]) == 2
    assert capsys.readouterr().err == "epistemic: 'lgo' is not a command. Did you mean 'log'?\n"
    assert app.main(["frobnicate"]) == 2
    assert "is not a command. See `epistemic --help`." in capsys.readouterr().err
    with pytest.raises(SystemExit) as exited:  # after `--`, argparse says it: every choice
        app.main(["--", "lgo"])
    assert exited.value.code == 2
    assert "invalid choice: '--' (choose from 'exec', 'tool'," in capsys.readouterr().err


def test_argparse_lives_only_in_cli() -> None:
    package = Path(app.__file__).resolve().parent.parent
    users = {
        str(path.relative_to(package))
        for path in package.rglob("*.py")
        if "benchmark/tasks" not in path.as_posix()  # the tasks' own workspaces are not ours
        and re.search(r"^\s*(import argparse|from argparse import)", path.read_text(), re.M)
    }
    assert users and all(name.startswith("cli/") for name in users), sorted(users)
