"""Every reader says which session it reads: a workspace where a `run` was followed by a stray
`exec` (which started a session of its own) holds two, and a reader given the workspace reads
the newest, the `exec`'s. Each says so on stderr; `diff` and `seal` refuse to choose; `stats`
tells the rows apart by session id and task. And every exit status a reader's --help
documents is the one it returns."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from conftest import cli_env, epistemic_strict
from sshkeys import new_key, signer_line

TASK = "Make the marker file the weekly report asks for"
LOOK = "See which files the workspace holds before deciding anything."


@pytest.fixture(scope="module")
def two(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A workspace with a `run` session (a task) and, after it, an `exec` session."""
    root = tmp_path_factory.mktemp("two")
    ws = root / "ws"
    ws.mkdir()
    script = root / "script.json"
    call = {"tool": "bash", "args": {"command": "ls", "type": "collect-info", "reason": LOOK}}
    script.write_text(json.dumps([{"calls": [call]}, {"final": "looked"}]))
    ran = epistemic_strict("run", "--model", f"replay:{script}", "-C", str(ws), TASK)
    assert ran.returncode == 0, ran.stderr
    stray = epistemic_strict(
        "exec", "-C", str(ws), "--type", "collect-info", "--reason", LOOK, "--", "true"
    )
    assert stray.returncode == 0, stray.stderr
    rows = json.loads(epistemic_strict("sessions", "--json", "-C", str(ws)).stdout)
    assert [row["task"] for row in rows] == [TASK, None]
    return {"ws": ws, "run": rows[0], "exec": rows[1]}


def reader(name: str, ws: Path, out: Path) -> list[str]:
    return {
        "log": ["log", str(ws)],
        "report": ["report", str(ws)],
        "verify": ["verify", str(ws)],
        "show": ["show", "1", "-C", str(ws)],
        "plot": ["plot", str(ws), "-o", str(out / "t.svg")],
        "html": ["html", str(ws), "-o", str(out / "r.html")],
        "lint": ["lint", str(ws)],
        "export": ["export", str(ws), "-o", str(out / "b.zip"), "--force"],
        "trace": ["trace", "-C", str(ws), "--matrix", "-o", str(out / "m.html")],
    }[name]


READERS = ("log", "report", "verify", "show", "plot", "html", "lint", "export", "trace")


@pytest.mark.system  # end to end, slow for the default tier
@pytest.mark.parametrize("name", READERS)
def test_every_reader_says_which_of_several_sessions_it_reads(
    two: dict[str, Any], tmp_path: Path, name: str
) -> None:
    done = epistemic_strict(*reader(name, two["ws"], tmp_path))
    assert done.returncode == 0, done.stderr
    said = [line for line in done.stderr.splitlines() if "reading session" in line]
    assert len(said) == 1, done.stderr
    newest = two["exec"]
    assert said[0].startswith(f"epistemic: reading session {newest['id'][:12]} (started ")
    assert f"{newest['started']}, exec/tool, 1 call), the newest of 2 in " in said[0]
    named = epistemic_strict(*reader(name, two["ws"], tmp_path), "--session", two["run"]["id"])
    assert named.returncode == 0, named.stderr
    assert "reading session" not in named.stderr


def test_log_reads_the_session_it_names(two: dict[str, Any]) -> None:
    done = epistemic_strict("log", str(two["ws"]), "--json")
    assert [call["command"] for call in json.loads(done.stdout)] == ["true"]
    alone = epistemic_strict("log", str(Path(two["exec"]["journal"]).parent), "--json")
    assert alone.returncode == 0 and "reading session" not in alone.stderr  # a session's folder


def refusal(done: Any, two: dict[str, Any]) -> str:
    assert done.returncode == 2 and done.stdout == "", (done.stdout, done.stderr)
    lines = done.stderr.splitlines()
    assert len(lines) == 1, lines
    assert "holds 2 sessions; say which with --session ID: " in lines[0]
    for row in (two["run"], two["exec"]):
        assert row["id"][:12] in lines[0]
    assert TASK in lines[0] and "exec/tool" in lines[0]
    return str(lines[0])


def test_diff_refuses_to_pick_a_session_of_a_workspace_of_several(two: dict[str, Any]) -> None:
    ws = str(two["ws"])
    refusal(epistemic_strict("diff", ws, ws), two)
    refusal(epistemic_strict("diff", ws, ws, "--session", two["run"]["id"][:8]), two)
    named = ("--session", two["run"]["id"][:8], "--session", two["exec"]["id"][:8])
    done = epistemic_strict("diff", ws, ws, *named, "--json")
    assert done.returncode == 0, done.stderr
    compared = json.loads(done.stdout)
    assert compared["a"]["session"] == two["run"]["id"]
    assert compared["b"]["session"] == two["exec"]["id"]


def test_seal_refuses_to_pick_a_session_and_seals_the_one_named(
    two: dict[str, Any], tmp_path: Path
) -> None:
    key = new_key(tmp_path, "operator")
    env = cli_env(HOME=str(tmp_path / "home"), SSH_AUTH_SOCK=None)
    ws = tmp_path / "copy"
    shutil.copytree(two["ws"], ws)
    refusal(epistemic_strict("seal", str(ws), "--key", str(key), env=env), two)
    assert not list(ws.rglob("seals"))  # nothing sealed
    named = epistemic_strict(
        "seal", str(ws), "--key", str(key), "--session", two["run"]["id"][:8], env=env
    )
    assert named.returncode == 0, named.stderr
    sealed = [path.parent.parent for path in ws.rglob("seals/*.json")]
    assert sealed == [ws / ".epistemic"]  # the run's session: the workspace's first
    later = two["exec"]["id"]  # a later session's own folder, with no evidence in it
    done = epistemic_strict("seal", str(ws), "--key", str(key), "--session", later, env=env)
    assert done.returncode == 0, done.stderr
    assert list((ws / ".epistemic" / "sessions" / later / "seals").glob("*.json"))
    checked = epistemic_strict("verify", str(ws), "--session", later, "--json")
    assert [seal["signature"] for seal in json.loads(checked.stdout)["seals"]] == ["valid"]


def test_stats_labels_each_session_by_id_and_task(two: dict[str, Any]) -> None:
    done = epistemic_strict("stats", str(two["ws"]), env=cli_env(COLUMNS="300"))
    assert done.returncode == 0, done.stderr
    assert "journal" not in done.stdout
    lines = done.stdout.splitlines()
    assert lines[0].split()[-1] == "task"
    run, stray = (f"ws:{two[kind]['id'][:8]}" for kind in ("run", "exec"))
    assert lines[1].startswith(f"{run} ") and lines[1].endswith(f"  {TASK}")
    assert lines[2].startswith(f"{stray} ") and lines[2].endswith("  -")


# -- every documented exit status ---------------------------------------------------------------


def documented(command: str) -> set[int]:
    """The exit statuses a command's --help names ("Exit 0 when ..., 1 when ..., 2 on ...")."""
    text = " ".join(epistemic_strict(command, "--help").stdout.split())
    said = text[text.index("Exit ") :]
    return {int(code) for code in re.findall(r"\b(\d{1,3}) (?:when|on|for)\b", said)}


def tampered(ws: Path, session: dict[str, Any]) -> None:
    journal = ws / Path(session["journal"]).relative_to(session["ws"])
    lines = journal.read_bytes().splitlines(keepends=True)
    lines[1] = lines[1].replace(b'"n":2', b'"n":2,"x":1')  # an edited line: the chain breaks
    journal.write_bytes(b"".join(lines))


def torn(ws: Path, session: dict[str, Any]) -> None:
    journal = ws / Path(session["journal"]).relative_to(session["ws"])
    with journal.open("ab") as handle:
        handle.write(b'{"prev":"')


#: command -> status -> (what is done to a copy of the workspace, the command's arguments):
#: {ws} is the copy (a folder that does not exist when "missing"), {id} the stray session's
#: id, {out} a folder for output files, {signers} an allowed_signers file.
NAMED = ["{ws}", "--session", "{id}"]
SCENARIOS: dict[str, dict[int, tuple[str, list[str]]]] = {
    "log": {0: ("", NAMED), 2: ("missing", ["{ws}"])},
    "report": {0: ("", NAMED), 1: ("tampered", NAMED), 2: ("missing", ["{ws}"])},
    "show": {
        0: ("", ["1", "-C", *NAMED]),
        1: ("tampered", ["1", "-C", *NAMED]),
        2: ("", ["99", "-C", *NAMED]),
    },
    "plot": {0: ("", [*NAMED, "-o", "{out}/t.svg"]), 2: ("", [*NAMED, "-o", "{out}/t.txt"])},
    "html": {
        0: ("", [*NAMED, "-o", "{out}/r.html"]),
        2: ("missing", ["{ws}", "-o", "{out}/r.html"]),
    },
    "stats": {0: ("", NAMED), 2: ("missing", ["{ws}"])},
    "verify": {
        0: ("", NAMED),
        1: ("tampered", NAMED),
        2: ("missing", ["{ws}"]),
        3: ("torn", NAMED),
        4: ("", [*NAMED, "--allowed-signers", "{signers}"]),  # never sealed
    },
}


@pytest.mark.system  # end to end, slow for the default tier
@pytest.mark.parametrize("command", SCENARIOS)
def test_each_exit_status_a_readers_help_documents_is_what_it_returns(
    two: dict[str, Any], tmp_path: Path, command: str
) -> None:
    assert documented(command) == set(SCENARIOS[command]), command
    stray = {**two["exec"], "ws": two["ws"]}
    for status, (damage, template) in SCENARIOS[command].items():
        ws = tmp_path / f"copy-{status}"
        if damage != "missing":
            shutil.copytree(two["ws"], ws)
        if damage == "tampered":
            tampered(ws, stray)
        elif damage == "torn":
            torn(ws, stray)
        signers = tmp_path / "allowed_signers"
        signers.write_text(signer_line(new_key(tmp_path, f"key-{status}")))
        fill = {"{ws}": str(ws), "{id}": stray["id"][:8], "{out}": str(tmp_path)}
        fill["{signers}"] = str(signers)
        args = [fill.get(arg, arg) for arg in template]
        args = [arg.replace("{out}", str(tmp_path)) for arg in args]
        done = epistemic_strict(command, *args)
        assert done.returncode == status, (command, status, done.stdout, done.stderr)


def test_diff_and_seal_exit_as_their_help_says(two: dict[str, Any], tmp_path: Path) -> None:
    assert documented("diff") == {0, 2} and documented("seal") == {0, 1, 2}
    ws = tmp_path / "copy"
    shutil.copytree(two["ws"], ws)
    stray = {**two["exec"], "ws": two["ws"]}
    tampered(ws, stray)
    key = new_key(tmp_path, "operator")
    env = cli_env(HOME=str(tmp_path / "home"), SSH_AUTH_SOCK=None)
    base = ("seal", str(ws), "--key", str(key), "--session")
    assert epistemic_strict(*base, stray["id"], env=env).returncode == 1  # does not verify
    assert epistemic_strict(*base, two["run"]["id"], env=env).returncode == 0
    assert epistemic_strict("seal", str(ws), "--key", str(key), env=env).returncode == 2
    assert epistemic_strict("diff", str(ws), str(ws)).returncode == 2
