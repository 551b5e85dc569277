"""Commits that point back to the record: the prepare-commit-msg hook's trailers, for a
human's commit and for one an act makes; `trace --commit`; a commit without trailers flagged."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conftest import epistemic
from epistemic_agent.session.session import Session, Settings

CHANGE = "The report asks for this edit; making it is the change itself, nothing more."
CHECK = "Run the checks to confirm the edits so far behave as the task asks of them."
IDENTITY = ("-c", "user.name=t", "-c", "user.email=t@example.invalid")


def git(ws: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *IDENTITY, *args], cwd=ws, check=True, capture_output=True, text=True
    )
    return done.stdout


def trailers(ws: Path, rev: str = "HEAD") -> dict[str, str]:
    body = git(ws, "log", "-1", "--format=%B", rev)
    return dict(line.split(": ", 1) for line in body.splitlines() if line.startswith("Epistemic-"))


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "f.txt").write_text("a\nb\n")
    (ws / "other.txt").write_text("o\n")
    git(ws, "init", "-q")
    git(ws, "add", "-A")
    git(ws, "commit", "-qm", "start")
    done = epistemic("git-hook", "install", "-C", str(ws))
    assert done.returncode == 0, done.stderr
    return ws


def last_outcome(ws: Path) -> dict[str, Any]:
    lines = (ws / ".epistemic" / "journal.jsonl").read_text().splitlines()
    return [r for r in map(json.loads, lines) if r["kind"] == "outcome"][-1]


def test_a_human_commit_names_its_calls_and_trace_goes_back(repo: Path) -> None:
    with Session(repo, Settings(enforce=False)) as s:
        assert s.bash("sed -i 's/a/A/' f.txt", "change-state", CHANGE).ok  # 1
        assert s.bash("echo new > g.txt", "change-state", CHANGE).ok  # 2
        assert s.bash("grep -q A f.txt", "verify", CHECK).ok  # 3
        session = s.session_id
    git(repo, "add", "f.txt")
    git(repo, "commit", "-qm", "the fix")
    found = trailers(repo)
    assert found["Epistemic-Session"] == session and found["Epistemic-Calls"] == "1"
    done = epistemic("trace", "-C", str(repo), "--commit", "HEAD", "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["head"] == found["Epistemic-Head"] and isinstance(data["head_line"], int)
    assert [c["seq"] for c in data["calls"]] == [1] and data["problems"] == []
    assert data["calls"][0]["files"][0]["verified_by"] == [3]
    git(repo, "add", "g.txt")
    git(repo, "commit", "-qm", "the rest")
    assert trailers(repo)["Epistemic-Calls"] == "2"  # call 1 is named by the commit before


def test_an_agents_commit_gets_the_trailers_inside_its_act(repo: Path) -> None:
    with Session(repo) as s:  # confined: the act cannot read the journal
        assert s.bash("echo new > g.txt", "change-state", CHANGE).ok  # 1
        commit = f"git add g.txt && git {' '.join(IDENTITY)} commit -qm mine"
        result = s.bash(commit, "change-state", CHANGE)  # 2
        assert result.ok and "commit-without-trailers" not in result.flags
        session = s.session_id
    found = trailers(repo)
    assert found["Epistemic-Session"] == session and found["Epistemic-Calls"] == "1"
    assert last_outcome(repo)["commits"][0]["trailers"] is True
    data = json.loads(epistemic("trace", "-C", str(repo), "--commit", "HEAD", "--json").stdout)
    assert data["problems"] == [] and data["calls"][0]["seq"] == 1


def test_a_commit_that_bypasses_the_hook_is_flagged(repo: Path) -> None:
    with Session(repo, Settings(enforce=False)) as s:
        assert s.bash("echo new > g.txt", "change-state", CHANGE).ok
        sneaky = (
            f"git add g.txt && git -c core.hooksPath=/dev/null {' '.join(IDENTITY)} commit -qm x"
        )
        result = s.bash(sneaky, "change-state", CHANGE)
    assert "commit-without-trailers" in result.flags
    [made] = last_outcome(repo)["commits"]
    assert made["trailers"] is False
    done = epistemic("trace", "-C", str(repo), "--commit", "HEAD")
    assert done.returncode == 2 and "has no Epistemic-* trailers" in done.stderr


def test_forged_trailers_are_caught(repo: Path) -> None:
    with Session(repo, Settings(enforce=False)) as s:
        assert s.bash("echo z >> other.txt", "change-state", CHANGE).ok
        session = s.session_id
    (repo / "f.txt").write_text("human\n")
    git(repo, "add", "f.txt")
    forged = f"Epistemic-Session: {session}\nEpistemic-Calls: 1, 9\nEpistemic-Head: {'ab' * 32}"
    message = f"forged\n\n{forged}\n"
    git(repo, "-c", "core.hooksPath=/dev/null", "commit", "-qm", message)
    data = json.loads(epistemic("trace", "-C", str(repo), "--commit", "HEAD", "--json").stdout)
    problems = " | ".join(data["problems"])
    assert "call 9 is not in session" in problems
    assert "call 1 changed none of the commit's files" in problems
    assert "the journal holds no line with head abababababab" in problems


def test_install_refuses_a_foreign_hook_and_a_non_repository(tmp_path: Path, repo: Path) -> None:
    done = epistemic("git-hook", "install", "-C", str(tmp_path / "nowhere"))
    assert done.returncode == 2 and "not a directory" in done.stderr
    plain = tmp_path / "plain"
    plain.mkdir()
    done = epistemic("git-hook", "install", "-C", str(plain))
    assert done.returncode == 2 and "not a git work tree" in done.stderr
    hook = repo / ".git" / "hooks" / "prepare-commit-msg"
    hook.write_text("#!/bin/sh\necho mine\n")
    done = epistemic("git-hook", "install", "-C", str(repo))
    assert done.returncode == 2 and "--force" in done.stderr
    assert epistemic("git-hook", "install", "-C", str(repo), "--force").returncode == 0


def test_the_hook_is_read_only_to_acts(repo: Path) -> None:
    with Session(repo) as s:
        result = s.bash("echo 'exit 0' > .git/hooks/prepare-commit-msg", "change-state", CHANGE)
    assert not result.ok
    assert "epistemic-agent" in (repo / ".git" / "hooks" / "prepare-commit-msg").read_text()


def test_what_an_act_left_is_taken_only_as_ids(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from epistemic_agent.cli.git_hook import trailers_for

    ws = tmp_path / "plain"
    ws.mkdir()
    git(ws, "init", "-q")
    (ws / "a.txt").write_text("a\n")
    git(ws, "add", "a.txt")
    left = tmp_path / "left.json"
    monkeypatch.setenv("EPISTEMIC_CHANGES", str(left))
    good = {"session": "ab" * 16, "head": "cd" * 32, "changes": {"a.txt": [3, "4", True]}}
    left.write_text(json.dumps(good))
    assert trailers_for(ws) == {
        "Epistemic-Session": "ab" * 16,
        "Epistemic-Calls": "3",
        "Epistemic-Head": "cd" * 32,
    }
    for forged in (
        {**good, "session": "ab\nEpistemic-Calls: 1"},
        {**good, "head": 5},
        {**good, "changes": ["a.txt"]},
        "not an object",
    ):
        left.write_text(json.dumps(forged))
        assert trailers_for(ws) is None
    left.write_text("{")
    assert trailers_for(ws) is None
