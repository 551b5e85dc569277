"""`epistemic repl` driven through a pseudo-terminal, as a person types at it: line editing,
history across restarts, Ctrl-C and Ctrl-D, slash commands; and piped, as a program feeds it."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conftest import EPISTEMIC
from ptyterm import CTRL_A, CTRL_C, CTRL_D, ENTER, LEFT, UP, Terminal

LOOK = "Nothing is known about this workspace yet; I need to see what files exist."
GITHUB_TOKEN = "ghp_" + "a1B2" * 9  # a token format the redactor knows


def bash(command: str, act: str = "collect-info", reason: str = LOOK) -> dict[str, Any]:
    return {"tool": "bash", "args": {"command": command, "type": act, "reason": reason}}


def answers(count: int) -> list[dict[str, Any]]:
    """`count` answers, each one call then a final answer."""
    turns: list[dict[str, Any]] = []
    for n in range(1, count + 1):
        turns += [{"calls": [bash(f"echo call-{n}")]}, {"final": f"answer {n}"}]
    return turns


def environ(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("EPISTEMIC_MODEL", "NO_COLOR")}
    env.update(XDG_STATE_HOME=str(tmp_path / "state"), PROMPT_TOOLKIT_NO_CPR="1", **extra)
    return env


def script(tmp_path: Path, turns: list[dict[str, Any]], name: str = "script.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(turns), encoding="utf-8")
    return path


def repl(ws: Path, tmp_path: Path, turns: list[dict[str, Any]], columns: int = 100) -> Terminal:
    played = script(tmp_path, turns, f"script-{len(list(tmp_path.glob('script-*')))}.json")
    argv = [EPISTEMIC, "repl", "--model", f"replay:{played}", "-C", str(ws)]
    term = Terminal(argv, environ(tmp_path), columns=columns)
    term.wait_screen("epistemic>")
    return term


def records(ws: Path, kind: str) -> list[dict[str, Any]]:
    """The records of this kind in every session of the workspace, oldest session first (each
    `repl` starts a session of its own)."""
    record = ws / ".epistemic"
    journals = [record / "journal.jsonl", *sorted(record.glob("sessions/*/journal.jsonl"))]
    journals.sort(key=lambda path: path.stat().st_mtime_ns)
    lines = [line for path in journals for line in path.read_text("utf-8").splitlines()]
    return [r for r in map(json.loads, lines) if r.get("kind") == kind]


def users(ws: Path) -> list[str]:
    return [r["text"] for r in records(ws, "user")]


def answered(term: Terminal, n: int) -> None:
    """Wait for answer `n`, its one-line summary, then the prompt again."""
    term.wait_screen(f"answer {n}")
    at_prompt(term)


def at_prompt(term: Terminal) -> None:
    term.wait_for(lambda: term.last_line() == "epistemic>", what="the prompt")


def test_arrow_keys_edit_the_line_they_do_not_print_escapes(ws: Path, tmp_path: Path) -> None:
    term = repl(ws, tmp_path, answers(1))
    term.send("helo wrld" + LEFT * 3 + "o" + LEFT * 4 + "l" + CTRL_A + "say " + ENTER)
    answered(term, 1)
    term.send(CTRL_D)
    assert term.close() == 0
    assert users(ws) == ["say hello world"]
    assert not any("^[[D" in line for line in term.display())


@pytest.mark.system  # a terminal, end to end
def test_history_recalls_a_message_across_restarts_and_is_kept_private(
    ws: Path, tmp_path: Path
) -> None:
    term = repl(ws, tmp_path, answers(1))
    term.send(f"first message with {GITHUB_TOKEN} in it" + ENTER)
    answered(term, 1)
    term.send(CTRL_D)
    assert term.close() == 0

    history = tmp_path / "state" / "epistemic" / "repl-history"
    assert stat.S_IMODE(history.stat().st_mode) == 0o600
    assert stat.S_IMODE(history.parent.stat().st_mode) == 0o700
    kept = history.read_text(encoding="utf-8")
    assert "first message with" in kept
    assert GITHUB_TOKEN not in kept  # kept as the journal keeps it: redacted

    term = repl(ws, tmp_path, answers(1))  # a new process: the history is read back
    term.send(UP + ENTER)
    answered(term, 1)
    term.send(CTRL_D)
    assert term.close() == 0
    recalled = users(ws)
    assert len(recalled) == 2
    assert recalled[0] == recalled[1]
    assert recalled[1].startswith("first message with [REDACTED")


def test_ctrl_c_at_the_prompt_clears_the_line_and_does_not_exit(ws: Path, tmp_path: Path) -> None:
    term = repl(ws, tmp_path, answers(1))
    term.send(CTRL_C)  # at an empty prompt
    term.send("not this one")
    term.wait_screen("not this one")
    term.send(CTRL_C)  # clears the line
    term.send("this one" + ENTER)
    answered(term, 1)
    assert term.process.poll() is None  # still there after two Ctrl-C
    term.send(CTRL_D)
    assert term.close() == 0
    assert users(ws) == ["this one"]


def test_ctrl_d_ends_the_repl(ws: Path, tmp_path: Path) -> None:
    term = repl(ws, tmp_path, answers(1))
    term.send(CTRL_D)
    assert term.close(timeout=10) == 0
    assert records(ws, "user") == []


@pytest.mark.system  # a terminal, end to end
def test_ctrl_c_while_a_command_runs_stops_after_it_journaled_and_the_repl_goes_on(
    ws: Path, tmp_path: Path
) -> None:
    interrupted = {"calls": [bash("sleep 3; echo slept"), bash("echo never")]}
    term = repl(ws, tmp_path, [interrupted, *answers(1)])
    term.send("go" + ENTER)
    term.wait_screen("running")
    term.send(CTRL_C)
    term.wait_screen("stopping after this call; Ctrl-C again aborts it")
    term.wait_screen("stopped: interrupted")
    at_prompt(term)
    assert term.process.poll() is None
    assert len(records(ws, "interrupt")) == 1
    (outcome,) = records(ws, "outcome")
    assert outcome["ok"] is True  # the running call finished: the first Ctrl-C waits for it
    assert [c["command"] for c in records(ws, "call")] == ["sleep 3; echo slept"]

    term.send("again" + ENTER)  # the REPL goes on with the next message
    term.wait_screen("answer 1")
    term.send(CTRL_D)
    assert term.close() == 0
    assert [r["reason"] for r in records(ws, "stop")] == ["interrupted", "finished"]


def sessions(ws: Path) -> list[dict[str, Any]]:
    listed = subprocess.run([EPISTEMIC, "sessions", "--json", "-C", str(ws)],
                            capture_output=True, text=True, timeout=60, check=True)  # fmt: skip
    return json.loads(listed.stdout)  # type: ignore[no-any-return]


@pytest.mark.system  # a terminal, end to end
def test_slash_commands(ws: Path, tmp_path: Path) -> None:
    term = repl(ws, tmp_path, answers(2), columns=120)
    term.send("/help" + ENTER)
    term.wait_screen("/show N")
    term.send("first" + ENTER)
    answered(term, 1)
    (first,) = sessions(ws)
    term.send("/show 1" + ENTER)  # what `epistemic show 1 --session <this one>` prints
    term.wait_screen("call 1 · collect-info · ok")
    term.wait_screen(f"session {first['id']}")
    term.wait_screen("── stdout (7 bytes) ──")
    term.send("/log" + ENTER)
    term.wait_screen("echo call-1")
    term.send("/stats" + ENTER)
    term.wait_screen(f"session    ws · {first['id']}")
    term.send("/shwo 1" + ENTER)
    term.wait_screen("unknown command /shwo (did you mean /show?)")
    term.send("/show x" + ENTER)
    term.wait_screen("/show needs a call number")
    term.send("/show 99" + ENTER)
    term.wait_screen("no call 99 in")
    term.send("/new" + ENTER)
    term.wait_screen("a new session: ")
    older, newer = sessions(ws)
    assert older["id"] == first["id"] and older["status"] == "finished"  # ended
    assert newer["status"] == "open" and newer["mode"] == "repl" and newer["calls"] == 0
    term.wait_screen(f"a new session: {newer['id']}")
    term.send("//etc is a folder" + ENTER)  # // sends a message that starts with /
    answered(term, 2)
    term.send("/show 1" + ENTER)  # the new session's call 1: its numbering starts again
    term.wait_screen(f"session {newer['id']}")
    term.wait_screen("echo call-2")
    term.send("/stats" + ENTER)
    term.wait_screen(f"session    ws · {newer['id']}")
    term.send("/exit" + ENTER)
    assert term.close() == 0
    assert users(ws) == ["first", "/etc is a folder"]
    assert records(ws, "run") == []  # /new opens a session; it does not write a run record
    ended = [session["status"] for session in sessions(ws)]
    assert ended == ["finished", "finished"]
    journals = [Path(session["journal"]).read_text() for session in sessions(ws)]
    assert "echo call-1" in journals[0] and "echo call-2" not in journals[0]
    assert "echo call-2" in journals[1] and "echo call-1" not in journals[1]


def test_new_starts_a_session_and_the_agent_goes_on_in_it(ws: Path, tmp_path: Path) -> None:
    import io

    from epistemic_agent.agent.live.view import LiveEvents
    from epistemic_agent.agent.loop import Agent
    from epistemic_agent.cli import main
    from epistemic_agent.cli.repl import Repl
    from epistemic_agent.providers.replay import ReplayProvider
    from epistemic_agent.session.session import Session, Settings

    played = script(tmp_path, answers(2))
    session = Session(ws, Settings(owns_session=True), {"model": "replay", "mode": "repl"}).open()
    out = io.StringIO()
    events = LiveEvents(out)
    agent = Agent(session, ReplayProvider(played), events=events)
    shell = Repl(session, agent, events, "replay", main)
    try:
        assert shell.handle("first")
        assert len(agent.messages) == 4  # the message, the call, its result, the answer
        assert shell.handle("/new")
        assert shell.session is not session and shell.agent is not agent
        assert shell.session.session_id != session.session_id
        assert shell.agent.messages == [] and shell.agent.session is shell.session
        assert shell.session.header["mode"] == "repl"
        assert shell.handle("second")
        assert len(shell.agent.messages) == 4
        assert not shell.handle("/exit")
    finally:
        shell.session.close()
    assert session.closed and session._ended
    listed = sessions(ws)
    assert [row["id"] for row in listed] == [session.session_id, shell.session.session_id]
    assert [row["calls"] for row in listed] == [1, 1]
    assert listed[0]["status"] == "finished"  # ended by /new: exec no longer continues it
    assert "echo call-2" in out.getvalue()  # the live view goes on with the new session


@pytest.mark.parametrize(
    "policy",
    [
        "default = [\n",  # no longer a policy
        'default = "allow"\n[supervisor]\nmodel = "replay:/nonexistent/verdicts.json"\n',
    ],
    ids=["broken-policy", "supervisor-that-cannot-start"],
)
def test_new_that_cannot_open_a_session_keeps_the_current_one(
    ws: Path, tmp_path: Path, policy: str
) -> None:
    played = script(tmp_path, answers(2))
    (ws / "epistemic.toml").write_text('default = "allow"\n')
    shell = subprocess.Popen(
        [EPISTEMIC, "repl", "--model", f"replay:{played}", "-C", str(ws)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env=environ(tmp_path, COLUMNS="100"),
    )  # fmt: skip
    assert shell.stdin is not None and shell.stdout is not None
    shell.stdin.write("first\n")
    shell.stdin.flush()
    while "answer 1" not in shell.stdout.readline():
        pass
    (ws / "epistemic.toml").write_text(policy)
    out, err = shell.communicate("/new\nsecond\n", timeout=60)
    assert shell.returncode == 0, err
    assert "no new session: " in out and "this one goes on" in out
    assert "Traceback" not in out + err
    (only,) = sessions(ws)
    assert only["calls"] == 2 and users(ws) == ["first", "second"]


def test_piped_input_takes_messages_and_slash_commands_one_line_each(
    ws: Path, tmp_path: Path
) -> None:
    played = script(tmp_path, answers(2))
    lines = "first\n\n/show 1\n/nope\nsecond\n"
    done = subprocess.run(
        [EPISTEMIC, "repl", "--model", f"replay:{played}", "-C", str(ws)],
        input=lines,
        env=environ(tmp_path, COLUMNS="100"),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "\x1b" not in out  # not a terminal: plain lines
    assert "call 1 · collect-info · ok" in out and "── stdout (7 bytes) ──" in out
    assert "unknown command /nope" in out
    summaries = [line for line in out.splitlines() if line.startswith("✓ finished")]
    assert summaries[0].startswith("✓ finished · 1 call #1 · ")
    assert summaries[1].startswith("✓ finished · 1 call #2 · ")  # numbering goes on
    assert len(summaries) == 2  # one line per answer, not a block
    assert "journal head" not in out
    assert users(ws) == ["first", "second"]
    assert not (tmp_path / "state").exists()  # no history for piped input


@pytest.mark.system  # a terminal, end to end
def test_two_ctrl_c_abort_a_command_keep_what_it_printed_and_the_answer_counts_it(
    ws: Path, tmp_path: Path
) -> None:
    """A command prints 15 lines, then sleeps; the person presses Ctrl-C twice. The command
    is stopped, its 15 lines are kept as its outcome's evidence, the call ends with its own
    row and the answer's line counts it as aborted; `log`, `show` and `stats` agree."""
    printing = "for i in $(seq 1 15); do echo line $i; done; sleep 8; echo never"
    term = repl(ws, tmp_path, [{"calls": [bash(printing)]}, *answers(1)], columns=200)
    term.send("go" + ENTER)
    term.wait_screen("running")
    captured = ws / ".epistemic"
    term.wait_for(
        lambda: any(p.read_bytes().count(b"\n") == 15 for p in captured.rglob("tmp/*.out")),
        what="the 15 lines in the capture file",
    )
    term.send(CTRL_C)
    term.wait_screen("Ctrl-C again aborts it")
    term.send(CTRL_C)
    term.wait_screen("stopped: interrupted")
    at_prompt(term)
    screen = "\n".join(term.display())
    assert "✗ aborted · #1 was interrupted before it finished" in screen, screen
    assert "no calls" not in screen and "1 call #1" in screen and "1 aborted" in screen, screen
    term.send(CTRL_D)
    assert term.close() == 130  # as its last answer ended: interrupted

    (outcome,) = records(ws, "outcome")
    assert outcome["interrupted"] is True and outcome["ok"] is False
    printed = "".join(f"line {i}\n" for i in range(1, 16)).encode()
    stdout = outcome["evidence"]["stdout"]
    assert (stdout["bytes"], stdout["kept"]) == (len(printed), len(printed))
    (blob,) = captured.rglob(f"evidence/{stdout['sha256'][:2]}/{stdout['sha256']}")
    assert blob.read_bytes() == printed

    def read(*args: str) -> Any:
        done = subprocess.run([EPISTEMIC, *args, "--json", "-C", str(ws)],
                              capture_output=True, text=True, timeout=60, check=True)  # fmt: skip
        return json.loads(done.stdout)

    (logged,) = read("log")
    (session,) = read("stats")["sessions"]
    assert logged["fate"] == read("show", "1")["view"]["fate"] == "aborted"
    assert {fate: n for fate, n in session["fates"].items() if n} == {"aborted": 1}
