"""CLI conventions: `--version`, "did you mean", `-C DIR` for every command, docs/cli.md."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from conftest import epistemic
from epistemic_agent import __version__
from epistemic_agent.cli.app import _children, build_parser

ROOT = Path(__file__).resolve().parents[2]
REASON = "learn what this prints in the workspace"


def test_version(tmp_path: Path) -> None:
    done = epistemic("--version", cwd=tmp_path)
    assert done.returncode == 0 and done.stdout.strip() == f"epistemic-agent {__version__}"


@pytest.mark.parametrize(
    ("typed", "meant"), [("lgo", "log"), ("verfy", "verify"), ("stat", "stats")]
)
def test_a_mistyped_command_gets_a_suggestion(tmp_path: Path, typed: str, meant: str) -> None:
    done = epistemic(typed, cwd=tmp_path)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip() == f"epistemic: {typed!r} is not a command. Did you mean {meant!r}?"


def test_a_command_nothing_like_any_gets_the_help_hint(tmp_path: Path) -> None:
    done = epistemic("zzzzqqq", cwd=tmp_path)
    assert done.returncode == 2 and "See `epistemic --help`." in done.stderr


def test_a_mistyped_act_type_gets_a_suggestion(tmp_path: Path) -> None:
    done = epistemic("exec", "--type", "colect-info", "--reason", REASON, "--", "ls", cwd=tmp_path)
    assert done.returncode == 2
    assert "got 'colect-info'. Did you mean 'collect-info'?" in done.stderr


def test_every_command_takes_dash_c() -> None:
    parsers = [p for p in _children(build_parser()) if not p._subparsers]  # groups: their commands
    assert len(parsers) > 25
    missing = [p.prog for p in parsers if "-C" not in p._option_string_actions]
    assert not missing


@pytest.mark.parametrize(
    "command",
    [
        ("log",),
        ("log", "--json"),
        ("report",),
        ("verify",),
        ("stats",),
        ("diff", ".", "."),
        ("html", "-o", "page.html"),
        ("lint",),
        ("export", "-o", "bundle.zip"),
    ],
)
def test_readers_take_the_workspace_as_dash_c(tmp_path: Path, command: tuple[str, ...]) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    assert (
        epistemic(
            "exec",
            "--type",
            "collect-info",
            "--reason",
            REASON,
            "-C",
            str(ws),
            "--",
            "ls",
            cwd=tmp_path,
        ).returncode
        == 0
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    by_c = epistemic(command[0], "-C", str(ws), *command[1:], cwd=elsewhere)
    assert by_c.returncode == 0, by_c.stderr
    if command[0] in ("log", "verify", "stats", "lint"):
        by_path = epistemic(*command, str(ws) if command[0] != "diff" else "", cwd=elsewhere)
        assert by_path.returncode == 0, by_path.stderr  # the positional path still works


def test_dash_c_to_a_missing_folder_is_a_clear_error(tmp_path: Path) -> None:
    done = epistemic("log", "-C", str(tmp_path / "nope"), cwd=tmp_path)
    assert done.returncode == 2 and done.stderr.startswith("epistemic: -C ")
    assert "Traceback" not in done.stderr


def test_cli_docs_cover_nested_commands_and_exit_statuses() -> None:
    doc = (ROOT / "docs" / "cli.md").read_text()
    for heading in (
        "### epistemic policy check",
        "### epistemic policy explain",
        "## Exit statuses",
    ):
        assert heading in doc


def test_the_license_is_declared_the_modern_way() -> None:
    """An SPDX expression and license-files (PEP 639): no setuptools deprecation warning."""
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["license"] == "MIT"
    assert all((ROOT / name).is_file() for name in project["license-files"])


def test_setup_installs_only_when_something_changed(tmp_path: Path) -> None:
    """scripts/setup skips pip when its stamp matches pyproject.toml (a fake venv: no pip)."""
    import shutil

    copy = tmp_path / "repo"
    (copy / "scripts").mkdir(parents=True)
    shutil.copy(ROOT / "scripts" / "setup", copy / "scripts" / "setup")
    shutil.copy(ROOT / "pyproject.toml", copy / "pyproject.toml")
    bin_ = copy / ".venv" / "bin"
    bin_.mkdir(parents=True)
    log = tmp_path / "pip.log"
    (bin_ / "python").write_text(
        f'#!/bin/sh\nif [ "$1" = -V ]; then echo Python 3.x; else echo "$@" >>{log}; fi\n'
    )
    (bin_ / "epistemic").write_text("#!/bin/sh\n")
    for tool in (bin_ / "python", bin_ / "epistemic"):
        tool.chmod(0o755)
    setup = [str(copy / "scripts" / "setup")]
    for _ in range(2):
        done = subprocess.run(setup, capture_output=True, text=True, timeout=60, check=False)
        assert done.returncode == 0 and done.stdout == "" and done.stderr == "", done
    assert log.read_text().count("-e .") == 1  # installed once, then skipped
    with (copy / "pyproject.toml").open("a") as handle:
        handle.write("\n# changed\n")
    subprocess.run(setup, capture_output=True, timeout=60, check=True)
    assert log.read_text().count("-e .") == 2  # pyproject.toml changed: installed again
