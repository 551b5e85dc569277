"""`verify`, `seal` and `diff` read the session `--session ID` names (an id or a unique prefix),
not only the newest: a tampered older session is found by naming it, a seal goes into the
named session's folder, and `diff` compares two sessions of one workspace."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import epistemic
from sshkeys import new_key

LOOK = "Nothing is known about this workspace yet; I need to see what files exist."


def calls(ws: Path, count: int, *options: str) -> None:
    for index in range(count):
        first = ("--session", "new") if index == 0 else ()
        done = epistemic("exec", *first, *options, "--type", "collect-info", "--reason", LOOK,
                   "--", f"echo call {index}", cwd=ws)  # fmt: skip
        assert done.returncode == 0, done.stderr


@pytest.fixture
def ws(tmp_path: Path) -> tuple[Path, list[dict[str, Any]]]:
    """A workspace with two sessions: the first (legacy `.epistemic/`) of one call, the second
    (`.epistemic/sessions/<id>/`) of two."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    calls(workspace, 1)
    calls(workspace, 2)
    listed = json.loads(epistemic("sessions", "--json", cwd=workspace).stdout)
    assert [row["calls"] for row in listed] == [1, 2]
    return workspace, listed


def verdict(ws: Path, *options: str) -> tuple[int, dict[str, Any]]:
    done = epistemic("verify", "--json", *options, cwd=ws)
    return done.returncode, json.loads(done.stdout)


@pytest.mark.system  # end to end, slow for the default tier
def test_verify_reads_the_named_session(ws: tuple[Path, list[dict[str, Any]]]) -> None:
    workspace, (first, second) = ws
    newest = verdict(workspace)
    named_second = verdict(workspace, "--session", second["id"][:8])
    named_first = verdict(workspace, "--session", first["id"])
    assert newest == named_second and named_second[0] == 0
    assert named_first[0] == 0 and named_first[1]["lines"] != named_second[1]["lines"]
    journal = Path(first["journal"])  # tamper with the older session only
    lines = journal.read_text().splitlines()
    lines[1] = lines[1].replace("echo call 0", "echo call X")
    journal.write_text("\n".join(lines) + "\n")
    assert verdict(workspace)[0] == 0  # the newest is still intact
    code, found = verdict(workspace, "--session", first["id"][:9])
    assert code == 1 and found["status"] == "tampered"
    text = epistemic("verify", "--session", first["id"][:9], cwd=workspace)
    assert text.returncode == 1 and text.stdout.startswith("TAMPERED")


@pytest.mark.system  # end to end, slow for the default tier
@pytest.mark.parametrize(
    ("options", "problem"),
    [
        (("--session", "abcdef0123"), "no session"),
        (("--session", "xyz"), "give a session id"),
        (("--session", "new"), "--session new"),
        (("--session", ""), "give a session id"),
    ],
)
def test_bad_sessions_are_usage_errors(
    ws: tuple[Path, list[dict[str, Any]]], options: tuple[str, ...], problem: str
) -> None:
    workspace, _ = ws
    for command in (("verify",), ("seal",), ("diff", ".", ".")):
        done = epistemic(*command, *options, cwd=workspace)
        assert done.returncode == 2, (command, done.stderr)
        assert problem in done.stderr and "Traceback" not in done.stderr, command


def test_verify_refuses_a_session_of_a_bundle(tmp_path: Path) -> None:
    (tmp_path / "audit.zip").write_bytes(b"PK\x05\x06" + bytes(18))
    done = epistemic("verify", "audit.zip", "--session", "abcd1234", cwd=tmp_path)
    assert done.returncode == 2 and "not of a bundle" in done.stderr


def test_salvage_of_a_named_later_session_still_refuses(
    ws: tuple[Path, list[dict[str, Any]]],
) -> None:
    workspace, (_, second) = ws
    done = epistemic("verify", "--salvage", "--session", second["id"], cwd=workspace)
    assert done.returncode == 2 and "first session" in done.stderr


@pytest.mark.system  # end to end, slow for the default tier
def test_seal_signs_the_named_session(
    ws: tuple[Path, list[dict[str, Any]]], tmp_path: Path
) -> None:
    workspace, (first, second) = ws
    key = new_key(tmp_path, "key")
    done = epistemic(
        "seal", "--session", first["id"][:8], "--key", str(key), "--json", cwd=workspace
    )
    assert done.returncode == 0, done.stderr
    sealed = json.loads(done.stdout)
    assert Path(sealed["statement"]).parent == Path(first["journal"]).parent / "seals"
    assert (
        sealed["session"] == first["id"]
        and sealed["lines"] == verdict(workspace, "--session", first["id"])[1]["lines"]
    )
    assert not (Path(second["journal"]).parent / "seals").exists()


@pytest.mark.system  # end to end, slow for the default tier
def test_diff_compares_two_sessions_of_one_workspace(
    ws: tuple[Path, list[dict[str, Any]]],
) -> None:
    workspace, (first, second) = ws
    alone = epistemic("diff", ".", ".", "--session", first["id"][:8], cwd=workspace)
    assert alone.returncode == 2 and "say which" in alone.stderr  # B would be a guess
    done = epistemic("diff", ".", ".", "--session", first["id"][:8], "--session",
                     second["id"][:8], "--json", "--any-task", cwd=workspace)  # fmt: skip
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["a"]["session"] == first["id"] and result["b"]["session"] == second["id"]
    both = epistemic("diff", ".", ".", "--session", second["id"][:8], "--session", first["id"][:8],
               "--json", "--any-task", cwd=workspace)  # fmt: skip
    swapped = json.loads(both.stdout)
    assert swapped["a"]["session"] == second["id"] and swapped["b"]["session"] == first["id"]
    three = epistemic("diff", ".", ".", *["--session", first["id"]] * 3, cwd=workspace)
    assert three.returncode == 2 and "once for A, once for B" in three.stderr
