"""Paths the file system refuses: a name over NAME_MAX (255 bytes) is a clean rejection with
its own rule, a tree deeper than PATH_MAX a clean outcome; never exit 74 with the call marked
interrupted."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conftest import epistemic_strict
from epistemic_agent.gate.check import RULES

REASON = "work on the file the task names, whatever its name"


def tool(ws: Path, name: str, **args: Any) -> subprocess.CompletedProcess[str]:
    return epistemic_strict("tool", name, "--args", json.dumps({**args, "reason": REASON}), cwd=ws)


def calls(ws: Path) -> list[dict[str, Any]]:
    done = epistemic_strict("log", "--json", cwd=ws)
    found: list[dict[str, Any]] = json.loads(done.stdout)
    return found


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("write_file", {"path": "a" * 300, "content": "x"}),
        ("write_file", {"path": "notes/" + "é" * 128 + ".md", "content": "x"}),  # 256 bytes
        ("read_file", {"path": "d/" + "b" * 256 + "/x"}),
        ("str_replace_edit", {"path": "c" * 400, "old": "x", "new": "y"}),
        ("write_file", {"path": "/".join(["d" * 200] * 21), "content": "x"}),  # > PATH_MAX
    ],
    ids=["name", "multibyte", "folder", "edit", "whole-path"],
)
def test_a_path_the_file_system_would_refuse_is_a_rejection(
    ws: Path, name: str, args: dict[str, Any]
) -> None:
    done = tool(ws, name, **args)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("REJECTED path-too-long: ")
    assert len(done.stderr.splitlines()[0]) < 200  # the message shows a piece, not the name
    (view,) = calls(ws)
    assert (view["status"], view["rule"]) == ("rejected", "path-too-long")
    assert epistemic_strict("verify", cwd=ws).returncode == 0
    assert "path-too-long" in RULES
    assert "path-too-long" in epistemic_strict("rules", cwd=ws).stdout


def test_a_name_of_255_bytes_is_fine(ws: Path) -> None:
    done = tool(ws, "write_file", path="a" * 255, content="x")
    assert done.returncode == 0, done.stderr
    assert (ws / ("a" * 255)).read_text() == "x"
    assert tool(ws, "read_file", path="a" * 255).returncode == 0


def test_what_else_the_file_system_refuses_is_a_failed_outcome(ws: Path) -> None:
    (ws / "notes.md").write_text("a file, not a folder\n")
    done = tool(ws, "read_file", path="notes.md/inside.txt")
    assert done.returncode == 1
    (view,) = calls(ws)
    assert view["status"] == "ran" and view["ok"] is False
    assert "interrupted" not in view["outcome"]
    assert "Not a directory" in view["outcome"]


def test_a_tree_deeper_than_path_max_is_observed_cleanly(ws: Path) -> None:
    name = "b" * 250
    deep = f"for i in $(seq 20); do mkdir {name} && cd {name}; done; touch deep.txt; echo made"
    done = epistemic_strict(
        "exec", "--type", "change-state", "--reason", REASON, "--", deep, cwd=ws
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "made\n"
    done = epistemic_strict(
        "exec", "--type", "cleanup", "--reason", REASON, "--", f"rm -rf {name}", cwd=ws
    )
    assert done.returncode == 0, done.stderr
    made, removed = calls(ws)
    assert made["ok"] and "interrupted" not in made["outcome"]
    assert removed["ok"] and not removed["flags"]  # the session saw it create them
    assert epistemic_strict("verify", cwd=ws).returncode == 0
