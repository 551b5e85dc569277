"""The agent loop end to end with the scripted model (`replay:PATH`).

Every test plays a JSON script of assistant turns against a real workspace under tmp_path,
through the Python API (Agent/Session/ReplayProvider) or the `epistemic` command line.
"""

from __future__ import annotations

import hashlib
import json
import re
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conftest import EPISTEMIC, cli_env, epistemic, eventually, running_below
from epistemic_agent.agent import prompt
from epistemic_agent.agent.loop import EXIT_CODES, Agent, AgentConfig, Stop
from epistemic_agent.cli import app as cli
from epistemic_agent.core.tools import TOOLS_BY_NAME, anthropic_tools, openai_tools
from epistemic_agent.core.vocabulary import ACT_NAMES, ACTS
from epistemic_agent.journal.beliefs import ASK
from epistemic_agent.journal.verify import verify_journal
from epistemic_agent.providers.base import (
    AssistantMessage,
    Message,
    ToolResult,
    ToolResults,
    Turn,
    UserMessage,
)
from epistemic_agent.providers.replay import ReplayProvider
from epistemic_agent.session.session import Session

LOOK = "Nothing is known about this workspace yet; I need to see what files exist."
WRITE = "The task asks for a hello script; this file is the deliverable itself."
GENERATE = "Produce the output file the user asked for, from the script I just wrote."
CONFIRM = "Confirm the finished work: the output must hold exactly the greeting line."
APPEND = "Record the order in which the calls of this turn were executed for the check."
HYPOTHESIS = (
    "I believe the directory is empty apart from my files; if other files are listed, "
    "that belief is refuted."
)
TASK = "Write hello.py that prints hello, and save its output to out.txt."
FINAL = "Done: hello.py prints hello and out.txt holds its output."


# -- helpers ---------------------------------------------------------------------------------


def bash(
    command: str, act: str = "collect-info", reason: str = LOOK, **extra: Any
) -> dict[str, Any]:
    """A scripted bash call; `extra` sets `id` (None for a missing id) or other call keys."""
    return {"tool": "bash", "args": {"command": command, "type": act, "reason": reason}, **extra}


def tool(name: Any, args: Any, **extra: Any) -> dict[str, Any]:
    return {"tool": name, "args": args, **extra}


def calls(*items: dict[str, Any], text: str | None = None) -> dict[str, Any]:
    turn: dict[str, Any] = {"calls": list(items)}
    if text is not None:
        turn["text"] = text
    return turn


def final(text: str = FINAL) -> dict[str, Any]:
    return {"final": text}


def write_script(directory: Path, turns: Any, name: str = "script.json") -> Path:
    path = directory / name
    path.write_text(json.dumps(turns, indent=1), encoding="utf-8")
    return path


class RecordingProvider(ReplayProvider):
    """The scripted model, keeping what the loop sent it on every request."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.requests: list[tuple[str, list[Message]]] = []

    def complete(self, system: str, messages: list[Message]) -> Turn:
        self.requests.append((system, list(messages)))
        return super().complete(system, messages)


def play(
    workspace: Path, turns: Any, task: str = TASK, **config: Any
) -> tuple[Agent, Stop, RecordingProvider]:
    """Run the loop through the Python API on a script; return the agent, its stop, the model."""
    script = write_script(workspace.parent, turns)
    provider = RecordingProvider(script)
    header = {"task": task, "model": f"replay:{script}"}
    with Session(workspace, header=header) as session:
        agent = Agent(session, provider, AgentConfig(**config))
        stop = agent.run(task)
    return agent, stop, provider


def journal(workspace: Path) -> list[dict[str, Any]]:
    path = workspace / ".epistemic" / "journal.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def of_kind(records: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [r for r in records if r["kind"] == kind]


def tool_results(agent: Agent) -> list[ToolResult]:
    return [r for m in agent.messages if isinstance(m, ToolResults) for r in m.results]


def assistant_messages(agent: Agent) -> list[AssistantMessage]:
    return [m for m in agent.messages if isinstance(m, AssistantMessage)]


Runner = Callable[..., "subprocess.CompletedProcess[str]"]


@pytest.fixture
def main(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Runner:
    """`epistemic ...` in this process (fast): an exception escaping `cli.main` fails the test."""
    monkeypatch.delenv("EPISTEMIC_MODEL", raising=False)
    monkeypatch.setenv("COLUMNS", "300")
    capsys.readouterr()

    def call(*args: str) -> subprocess.CompletedProcess[str]:
        code = cli.main(list(args))
        out, err = capsys.readouterr()
        return subprocess.CompletedProcess(list(args), code, out, err)

    return call


def run_cli(
    workspace: Path,
    script: Path,
    *options: str,
    task: str = TASK,
    runner: Runner = epistemic,
    **kwargs: Any,
) -> subprocess.CompletedProcess[str]:
    return runner(
        "run", "--model", f"replay:{script}", "-C", str(workspace), *options, task, **kwargs
    )


def json_lines(stdout: str) -> list[dict[str, Any]]:
    lines = stdout.splitlines()
    assert lines, "no output"
    return [json.loads(line) for line in lines]


HAPPY = [
    calls(bash("ls -a", "collect-info", LOOK), text="Looking around first."),
    calls(tool("write_file", {"path": "hello.py", "content": "print('hello')\n", "reason": WRITE})),
    calls(bash("python3 hello.py > out.txt", "change-state", GENERATE)),
    calls(bash("grep -qx hello out.txt", "verify", CONFIRM)),
    final(),
]


# -- a happy session -------------------------------------------------------------------------


def test_happy_session_finishes_and_journals_every_step(ws: Path) -> None:
    agent, stop, provider = play(ws, HAPPY)

    assert stop == Stop("finished", "the model answered without tool calls", 5, FINAL)
    assert stop.exit_code == 0
    assert (ws / "hello.py").read_text() == "print('hello')\n"
    assert (ws / "out.txt").read_text() == "hello\n"

    records = journal(ws)
    assert [r["n"] for r in records] == list(range(1, len(records) + 1))
    session = records[0]
    assert session["kind"] == "session"
    assert session["task"] == TASK
    assert session["model"] == f"replay:{provider.path}"
    assert len(of_kind(records, "session")) == 1

    users = of_kind(records, "user")
    assert [u["text"] for u in users] == [TASK]
    models = of_kind(records, "model")
    assert [m["step"] for m in models] == [1, 2, 3, 4, 5]
    assert {m["provider"] for m in models} == {"replay"}
    assert [m["calls"] for m in models] == [1, 1, 1, 1, 0]
    assert [(t["step"], t["text"]) for t in of_kind(records, "text")] == [
        (1, "Looking around first."),
        (5, FINAL),
    ]
    call_records = of_kind(records, "call")
    assert [(c["seq"], c["tool"], c["act"]) for c in call_records] == [
        (1, "bash", "collect-info"),
        (2, "write_file", "change-state"),
        (3, "bash", "change-state"),
        (4, "bash", "verify"),
    ]
    outcomes = of_kind(records, "outcome")
    assert [(o["seq"], o["ok"]) for o in outcomes] == [(s, True) for s in (1, 2, 3, 4)]
    assert not of_kind(records, "rejected")
    # each outcome follows its own declaration
    for c in call_records:
        declared = records.index(c)
        assert records[declared + 1]["kind"] == "outcome"
        assert records[declared + 1]["seq"] == c["seq"]
    (final_record,) = of_kind(records, "final")
    assert (final_record["step"], final_record["text"]) == (5, FINAL)
    assert records[-1]["kind"] == "stop"  # the Python API's session is not closed: no `closed`
    assert records[-1]["reason"] == "finished"
    assert records[-1]["steps"] == 5

    result = verify_journal(ws / ".epistemic" / "journal.jsonl", ws / ".epistemic" / "head.json")
    assert result.status == "intact"
    assert result.lines == len(records)

    # the model saw one result per call, none an error
    results = tool_results(agent)
    assert len(results) == 4
    assert not any(r.is_error for r in results)
    assert json.loads(results[0].text)["returncode"] == 0
    assert isinstance(agent.messages[0], UserMessage)
    assert agent.messages[0].text == TASK
    assert assistant_messages(agent)[-1] == AssistantMessage(FINAL, ())


def test_happy_session_rationale_has_every_section(ws: Path) -> None:
    _, _, provider = play(ws, HAPPY)
    text = (ws / "RATIONALE.md").read_text(encoding="utf-8")
    lines = (ws / ".epistemic" / "journal.jsonl").read_bytes().splitlines()

    assert text.startswith("# RATIONALE\n")
    assert f"**Task:** {TASK}" in text
    assert "_4 calls: 4 ran; 3 of the 4 that ran were shell acts._" in text
    assert "| act type | calls that ran | share |" in text
    assert "| `collect-info` | 1 | 25% |" in text
    assert "| `change-state` | 2 | 50% |" in text
    assert "| `verify` | 1 | 25% |" in text
    assert f"_Model `replay:{provider.path}`: 5 model call(s), no token usage reported._" in text
    sections = ["## Narrative", "## Dead ends", "## Rejections by rule", "## How it ended"]
    positions = [text.index(s) for s in sections]
    assert positions == sorted(positions)
    assert "### 1. `collect-info` · ok" in text
    assert "### 2. `change-state` · ok · write_file" in text
    assert "### 4. `verify` · ok" in text
    assert f"**Why:** {CONFIRM}" in text
    assert "_No reverts: no change-state was undone._" in text
    assert "_No call was rejected._" in text
    assert "**Stopped:** `finished`: the model answered without tool calls" in text
    assert f"**Final answer:**\n\n> {FINAL}" in text
    head = hashlib.sha256(lines[-1]).hexdigest()
    assert text.endswith(
        f"_Journal head: `{head}` after {len(lines)} line(s) of `.epistemic/journal.jsonl`. "
        "Check it with `epistemic verify`._\n"
    )


def test_happy_session_via_cli(ws: Path, tmp_path: Path) -> None:
    script = write_script(tmp_path, HAPPY)
    done = run_cli(ws, script)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    records = journal(ws)
    assert records[0]["kind"] == "session"
    assert records[0]["task"] == TASK
    assert records[0]["model"] == f"replay:{script}"
    assert (records[-1]["kind"], records[-1]["stop"]) == ("closed", "finished")
    assert records[-2]["kind"] == "stop"
    assert records[-2]["reason"] == "finished"
    assert (ws / "out.txt").read_text() == "hello\n"
    assert epistemic("verify", str(ws)).returncode == 0


def test_system_prompt_reaches_the_model_with_the_transcript(ws: Path) -> None:
    _, _, provider = play(ws, HAPPY)
    assert len(provider.requests) == 5
    assert {system for system, _ in provider.requests} == {prompt.system_prompt()}
    first = provider.requests[0][1]
    assert first == [UserMessage(TASK)]
    second = provider.requests[1][1]
    assert [type(m) for m in second] == [UserMessage, AssistantMessage, ToolResults]
    assert isinstance(second[2], ToolResults)
    assert second[2].results[0].call_id == "replay-1-1"


# -- rejected calls go back to the model -----------------------------------------------------


def test_rejected_call_is_a_tool_error_and_the_model_retries(ws: Path) -> None:
    turns = [
        calls(bash("touch ran.txt", "explore", LOOK)),
        calls(bash("touch ran.txt", "setup", LOOK)),
        final(),
    ]
    agent, stop, provider = play(ws, turns)
    assert stop.reason == "finished"
    assert (ws / "ran.txt").exists()

    results = tool_results(agent)
    assert len(results) == 2
    rejected, accepted = results
    assert rejected.is_error is True
    assert rejected.text.startswith("REJECTED type-unknown: ")
    assert "'explore'" in rejected.text
    assert rejected.call_id == "replay-1-1"
    assert accepted.is_error is False
    assert accepted.call_id == "replay-2-1"

    # the rejection was in the transcript the model got for its next turn
    sent = provider.requests[1][1]
    assert isinstance(sent[-1], ToolResults)
    assert sent[-1].results == (rejected,)

    records = journal(ws)
    (record,) = of_kind(records, "rejected")
    assert record["seq"] == 1
    assert record["rule"] == "type-unknown"
    assert record["given"]["type"] == "explore"
    (call,) = of_kind(records, "call")
    assert (call["seq"], call["act"]) == (2, "setup")
    text = (ws / "RATIONALE.md").read_text()
    assert "### 1. (no act) · REJECTED" in text
    assert "| `type-unknown` | 1 |" in text


def test_rejected_call_does_not_run(ws: Path) -> None:
    turns = [calls(bash("touch ran.txt", "setup", "too short")), final()]
    agent, stop, _ = play(ws, turns)
    assert stop.reason == "finished"
    assert not (ws / "ran.txt").exists()
    (result,) = tool_results(agent)
    assert result.is_error
    assert result.text.startswith("REJECTED reason-too-short")


def test_failed_command_is_an_error_result_but_not_a_rejection(ws: Path) -> None:
    turns = [
        calls(bash("echo oops >&2; exit 3", "test-hypothesis", HYPOTHESIS)),
        calls(bash("exit 4", "collect-info")),
        calls(bash("exit 5", "collect-info")),
        final(),
    ]
    agent, stop, _ = play(ws, turns, max_rejections=1)
    assert stop.reason == "finished"
    results = tool_results(agent)
    assert all(r.is_error for r in results)
    body = json.loads(results[0].text)
    assert body == {"returncode": 3, "stdout": "", "stderr": "oops\n", "belief": ASK}


# -- malformed model output never crashes ----------------------------------------------------

MALFORMED = {
    "args-invalid-json-string": (
        tool("bash", '{"command": "touch ran.txt", "type": '),
        "args-not-object",
    ),
    "unknown-tool": (tool("frobnicate", {"command": "touch ran.txt"}), "unknown-tool"),
    "tool-not-a-string": (tool(None, {"command": "touch ran.txt"}), "unknown-tool"),
    "id-null": (bash("touch ran.txt", "setup", LOOK, id=None), "call-id-missing"),
    "id-empty": (bash("touch ran.txt", "setup", LOOK, id=""), "call-id-missing"),
    "id-a-number": (bash("touch ran.txt", "setup", LOOK, id=7), "call-id-missing"),
    "args-a-number": (tool("bash", 42), "args-not-object"),
    "args-a-list": (tool("bash", ["touch ran.txt", "setup"]), "args-not-object"),
    "args-a-json-list-string": (tool("bash", '["touch ran.txt"]'), "args-not-object"),
    "args-null": (tool("write_file", None), "args-not-object"),
    "args-extra-key": (
        tool("bash", {"command": "touch ran.txt", "type": "setup", "reason": LOOK, "cwd": "/"}),
        "unknown-argument",
    ),
    "args-wrong-type": (
        tool("bash", {"command": ["touch", "ran.txt"], "type": "setup", "reason": LOOK}),
        "wrong-type",
    ),
}


@pytest.mark.parametrize("name", list(MALFORMED))
def test_malformed_call_is_rejected_not_crashed(ws: Path, name: str) -> None:
    call, rule = MALFORMED[name]
    turns = [calls(call), calls(bash("touch fixed.txt", "setup", LOOK)), final()]
    agent, stop, _ = play(ws, turns)

    assert stop.reason == "finished"
    assert not (ws / "ran.txt").exists()
    assert (ws / "fixed.txt").exists()
    bad, good = tool_results(agent)
    assert bad.is_error
    assert bad.text.startswith(f"REJECTED {rule}: ")
    assert not good.is_error
    records = journal(ws)
    (rejected,) = of_kind(records, "rejected")
    assert (rejected["seq"], rejected["rule"]) == (1, rule)
    assert [c["seq"] for c in of_kind(records, "call")] == [2]
    assert verify_journal(ws / ".epistemic" / "journal.jsonl").status == "intact"


def test_invalid_json_arguments_say_why(ws: Path) -> None:
    agent, _, _ = play(ws, [calls(tool("bash", "{not json")), final()])
    (result,) = tool_results(agent)
    assert result.text.startswith("REJECTED args-not-object: the arguments are not valid JSON")
    (rejected,) = of_kind(journal(ws), "rejected")
    assert rejected["given"] == "{not json"


def test_missing_id_gets_a_stand_in_so_the_call_can_be_answered(ws: Path) -> None:
    agent, _, _ = play(ws, [calls(bash("true", id=None), bash("true", id=None)), final()])
    first, second = tool_results(agent)
    assert (first.call_id, second.call_id) == ("missing-id-1-1", "missing-id-1-2")
    message = assistant_messages(agent)[0]
    assert [c.id for c in message.calls] == ["missing-id-1-1", "missing-id-1-2"]


def test_arguments_as_a_json_string_are_accepted(ws: Path) -> None:
    """Providers send arguments as a JSON string; a valid one runs like an object."""
    args = json.dumps({"command": "touch ran.txt", "type": "setup", "reason": LOOK})
    agent, stop, _ = play(ws, [calls(tool("bash", args)), final()])
    assert stop.reason == "finished"
    assert (ws / "ran.txt").exists()
    assert not tool_results(agent)[0].is_error


UNENCODABLE = {
    "nul-in-command": bash("echo a\x00b > ran.txt", "setup", LOOK),
    "surrogate-in-command": bash("echo \ud800 > ran.txt", "setup", LOOK),
    "nul-in-path": tool("read_file", {"path": "a\x00b", "reason": LOOK}),
    "surrogate-in-path": tool("read_file", {"path": "a\ud800.txt", "reason": LOOK}),
    "surrogate-in-content": tool(
        "write_file", {"path": "ran.txt", "content": "bad \ud800 char", "reason": WRITE}
    ),
}


@pytest.mark.parametrize("name", list(UNENCODABLE))
def test_unencodable_text_is_rejected_not_crashed(ws: Path, name: str) -> None:
    """NUL bytes and lone surrogates reach neither the shell nor the disk, and crash nothing."""
    agent, stop, _ = play(ws, [calls(UNENCODABLE[name]), final()])
    assert stop.reason == "finished"
    assert not (ws / "ran.txt").exists()
    (result,) = tool_results(agent)
    assert result.is_error
    assert result.text.startswith("REJECTED text-unencodable: ")
    assert verify_journal(ws / ".epistemic" / "journal.jsonl").status == "intact"


def test_lone_surrogates_in_model_text_do_not_crash_or_poison_the_workspace(
    ws: Path, tmp_path: Path, main: Runner
) -> None:
    turns = [calls(bash("true", "collect-info"), text="hmm \ud800"), final("done \ud800")]
    _, stop, _ = play(ws, turns)
    assert stop.reason == "finished"
    assert stop.final == "done \ud800"
    assert "done" in (ws / "RATIONALE.md").read_text(encoding="utf-8")
    assert verify_journal(ws / ".epistemic" / "journal.jsonl").status == "intact"
    # the same workspace keeps working afterwards, in both output modes
    script = write_script(tmp_path, turns, "again.json")
    for options in ((), ("--json",)):
        done = run_cli(ws, script, *options, runner=main)
        assert done.returncode == 0, done.stderr
    assert main("verify", str(ws)).returncode == 0


def test_lone_surrogates_in_json_output_as_a_real_process(ws: Path, tmp_path: Path) -> None:
    turns = [calls(bash("true", "collect-info"), text="hmm \ud800"), final("done \ud800")]
    done = run_cli(ws, write_script(tmp_path, turns), "--json")
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    events = json_lines(done.stdout)
    assert events[-1]["event"] == "stop"
    assert events[-1]["final"] == "done \ud800"


# -- several calls in one turn ---------------------------------------------------------------


def test_calls_of_one_turn_run_in_order_each_with_its_own_result(ws: Path) -> None:
    turn = calls(
        bash("echo one >> order.txt", "setup", APPEND, id="a"),
        tool(
            "write_file",
            {"path": "note.txt", "content": "two\n", "reason": WRITE},
            id="b",
        ),
        bash("cat note.txt >> order.txt", "setup", APPEND, id="c"),
        bash("echo never >> order.txt", "setup", "short", id="d"),
        bash("echo three >> order.txt", "setup", APPEND, id="e"),
        text="Five calls at once.",
    )
    agent, stop, _ = play(ws, [turn, final()])
    assert stop.reason == "finished"
    assert stop.steps == 2
    assert (ws / "order.txt").read_text() == "one\ntwo\nthree\n"

    (message,) = [m for m in assistant_messages(agent) if m.calls]
    assert message.text == "Five calls at once."
    assert [c.id for c in message.calls] == ["a", "b", "c", "d", "e"]
    results = tool_results(agent)
    assert [r.call_id for r in results] == ["a", "b", "c", "d", "e"]
    assert [r.is_error for r in results] == [False, False, False, True, False]
    assert results[1].text == "created note.txt"
    assert results[3].text.startswith("REJECTED reason-too-short")
    # all results go back in one message, right after the assistant turn
    index = agent.messages.index(message)
    assert agent.messages[index + 1] == ToolResults(tuple(results))

    records = journal(ws)
    seqs = [(r["kind"], r["seq"]) for r in records if "seq" in r]
    assert seqs == [
        ("call", 1),
        ("outcome", 1),
        ("call", 2),
        ("outcome", 2),
        ("call", 3),
        ("outcome", 3),
        ("rejected", 4),
        ("call", 5),
        ("outcome", 5),
    ]
    (model,) = [m for m in of_kind(records, "model") if m["step"] == 1]
    assert model["calls"] == 5


# -- stops -----------------------------------------------------------------------------------


def test_max_steps_stops_and_reports_unplayed_turns(ws: Path) -> None:
    turns = [calls(bash(f"echo {n} >> steps.txt", "setup", APPEND)) for n in range(5)]
    _, stop, _ = play(ws, [*turns, final()], max_steps=2)
    assert stop.reason == "max-steps"
    assert stop.exit_code == 3
    assert stop.steps == 2
    assert "--max-steps 2 reached" in stop.message
    assert "4 unplayed turn(s)" in stop.message
    assert (ws / "steps.txt").read_text() == "0\n1\n"
    records = journal(ws)
    assert len(of_kind(records, "model")) == 2
    assert records[-1]["kind"] == "stop"
    assert records[-1]["reason"] == "max-steps"
    assert "unplayed" in records[-1]["message"]
    text = (ws / "RATIONALE.md").read_text()
    assert "**Stopped:** `max-steps`" in text
    assert "**Final answer:**" not in text


def test_max_steps_via_cli(ws: Path, tmp_path: Path, main: Runner) -> None:
    turns = [calls(bash("true", "collect-info")) for _ in range(4)]
    script = write_script(tmp_path, [*turns, final()])
    done = run_cli(ws, script, "--max-steps", "2", "--json", runner=main)
    assert done.returncode == 3, done.stderr
    stop = json_lines(done.stdout)[-1]
    assert stop["event"] == "stop"
    assert (stop["reason"], stop["exit_code"], stop["steps"]) == ("max-steps", 3, 2)
    assert "3 unplayed turn(s)" in stop["message"]


def test_consecutive_rejections_stop_the_loop(ws: Path) -> None:
    bad = [calls(bash("touch ran.txt", "explore")) for _ in range(3)]
    turns = [*bad, calls(bash("touch late.txt", "setup")), final()]
    _, stop, provider = play(ws, turns, max_rejections=3)
    assert stop.reason == "rejections"
    assert stop.exit_code == 4
    assert stop.steps == 3
    assert stop.message.startswith("3 consecutive calls were rejected")
    assert "2 unplayed turn(s)" in stop.message
    assert provider.played == 3
    assert not (ws / "late.txt").exists()
    records = journal(ws)
    assert len(of_kind(records, "rejected")) == 3
    assert records[-1]["reason"] == "rejections"


def test_rejections_in_one_turn_count_too(ws: Path) -> None:
    turn = calls(bash("a", "explore"), tool("nope", {}), tool("bash", "{"))
    _, stop, _ = play(ws, [turn, final()], max_rejections=3)
    assert stop.reason == "rejections"
    assert stop.steps == 1


def test_a_call_that_runs_resets_the_rejection_streak(ws: Path) -> None:
    turns = [
        calls(bash("a", "explore")),
        calls(bash("b", "explore")),
        calls(bash("true", "collect-info")),
        calls(bash("c", "explore")),
        calls(bash("d", "explore")),
        final(),
    ]
    _, stop, _ = play(ws, turns, max_rejections=3)
    assert stop.reason == "finished"
    assert len(of_kind(journal(ws), "rejected")) == 4


def test_rejections_via_cli(ws: Path, tmp_path: Path, main: Runner) -> None:
    bad = [calls(tool("bash", 1)) for _ in range(3)]
    script = write_script(tmp_path, [*bad, final()])
    done = run_cli(ws, script, "--max-rejections", "3", runner=main)
    assert done.returncode == 4, done.stderr
    assert "stopped: rejections (3 consecutive calls were rejected" in done.stdout
    assert "Traceback" not in done.stderr


def test_script_exhausted_without_final_is_a_provider_error(ws: Path) -> None:
    turns = [calls(bash("true", "collect-info")), calls(bash("true", "collect-info"))]
    _, stop, _ = play(ws, turns)
    assert stop.reason == "provider-error"
    assert stop.exit_code == 5
    assert "no turn left" in stop.message
    assert "unplayed" not in stop.message
    records = journal(ws)
    (error,) = of_kind(records, "model-error")
    assert error["step"] == 3
    assert error["retrying"] is False
    assert records[-1]["reason"] == "provider-error"


def test_script_exhausted_via_cli(ws: Path, tmp_path: Path, main: Runner) -> None:
    script = write_script(tmp_path, [calls(bash("true", "collect-info"))])
    done = run_cli(ws, script, runner=main)
    assert done.returncode == 5
    assert "no turn left" in done.stdout
    assert "Traceback" not in done.stderr


def test_leftover_turns_after_the_final_are_reported(
    ws: Path, tmp_path: Path, main: Runner
) -> None:
    turns = [final("early"), calls(bash("touch never.txt", "setup")), final()]
    _, stop, _ = play(ws, turns)
    assert stop.reason == "finished"
    assert stop.final == "early"
    assert "the script still had 2 unplayed turn(s)" in stop.message
    assert not (ws / "never.txt").exists()
    assert "unplayed" in journal(ws)[-1]["message"]

    other = tmp_path / "other"
    other.mkdir()
    done = run_cli(other, write_script(tmp_path, turns, "cli.json"), "--json", runner=main)
    assert done.returncode == 0
    assert "2 unplayed turn(s)" in json_lines(done.stdout)[-1]["message"]


def test_broken_journal_is_not_reported_as_max_steps(
    ws: Path, tmp_path: Path, main: Runner
) -> None:
    script = write_script(tmp_path, [calls(bash("true")), final()])
    assert run_cli(ws, script, runner=main).returncode == 0
    path = ws / ".epistemic" / "journal.jsonl"
    path.write_text(path.read_text().replace(TASK, TASK + " (edited)", 1))
    session_id = journal(ws)[0]["session"]
    done = run_cli(ws, script, "--session", session_id, runner=main)
    assert_one_clear_line(done, "hash chain")
    assert done.returncode not in set(EXIT_CODES.values())


def test_exit_codes_table() -> None:
    assert EXIT_CODES == {
        "finished": 0,
        "max-steps": 3,
        "rejections": 4,
        "provider-error": 5,
        "interrupted": 130,
    }


# -- malformed script files ------------------------------------------------------------------

GOOD_CALL = bash("true", "collect-info")
BAD_SCRIPTS: dict[str, str | None] = {
    "missing": None,
    "not-json": "[{calls: ]",
    "not-an-array": json.dumps({"calls": [GOOD_CALL]}),
    "empty-array": "[]",
    "turn-not-an-object": json.dumps(["final"]),
    "calls-and-final": json.dumps([{"calls": [GOOD_CALL], "final": "both"}]),
    "neither": json.dumps([{"text": "hmm"}]),
    "unknown-key": json.dumps([{"final": "x", "extra": 1}]),
    "call-without-args": json.dumps([{"calls": [{"tool": "bash"}]}]),
    "call-without-tool": json.dumps([{"calls": [{"args": {}}]}]),
    "calls-empty": json.dumps([{"calls": []}]),
    "calls-not-a-list": json.dumps([{"calls": GOOD_CALL}]),
    "final-not-a-string": json.dumps([{"final": 3}]),
    "text-not-a-string": json.dumps([{"text": 3, "calls": [GOOD_CALL]}]),
    "not-utf8": "\udcff[]",
}


def bad_script(tmp_path: Path, name: str) -> Path:
    script = tmp_path / f"{name}.json"
    content = BAD_SCRIPTS[name]
    if content is not None:
        script.write_bytes(content.encode("utf-8", "surrogateescape"))
    return script


def assert_one_clear_line(done: subprocess.CompletedProcess[str], *words: str) -> None:
    assert done.returncode != 0
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("epistemic: ")
    for word in words:
        assert word in lines[0]


@pytest.mark.parametrize("name", list(BAD_SCRIPTS))
def test_malformed_script_is_one_clear_line(
    ws: Path, tmp_path: Path, name: str, main: Runner
) -> None:
    script = bad_script(tmp_path, name)
    done = run_cli(ws, script, runner=main)
    assert_one_clear_line(done, str(script))
    assert done.returncode == 2  # the script is the user's input: a usage error
    assert done.stdout == ""
    assert not (ws / ".epistemic").exists()


@pytest.mark.parametrize(
    ("name", "says"),
    [
        ("missing", "does not exist"),
        ("not-json", "is not valid JSON"),
        ("not-an-array", "must be a non-empty JSON array"),
        ("calls-and-final", "exactly one of `calls` and `final`"),
        ("call-without-args", "must be an object with `tool` and `args`"),
    ],
)
def test_malformed_script_as_a_real_process(ws: Path, tmp_path: Path, name: str, says: str) -> None:
    script = bad_script(tmp_path, name)
    done = run_cli(ws, script)
    assert_one_clear_line(done, str(script), says)
    assert done.stdout == ""


def test_script_that_is_a_directory(ws: Path, tmp_path: Path, main: Runner) -> None:
    assert_one_clear_line(run_cli(ws, tmp_path, runner=main), "cannot be read")


def test_deeply_nested_script_is_one_clear_line(ws: Path, tmp_path: Path) -> None:
    script = tmp_path / "deep.json"
    script.write_text("[" * 100_000)
    assert_one_clear_line(run_cli(ws, script), str(script))


# -- naming the model ------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["run", "repl"])
def test_no_model_named_is_a_usage_error(
    ws: Path, command: str, main: Runner, monkeypatch: pytest.MonkeyPatch
) -> None:
    words = [command, "-C", str(ws)] + (["some task"] if command == "run" else [])
    for value in (None, ""):
        if value is not None:
            monkeypatch.setenv("EPISTEMIC_MODEL", value)
        done = main(*words)
        assert done.returncode == 2
        assert_one_clear_line(done, "--model", "$EPISTEMIC_MODEL", "replay:FILE")
        assert not (ws / ".epistemic").exists()


def test_no_model_named_as_a_real_process(ws: Path) -> None:
    done = epistemic("run", "-C", str(ws), "some task")
    assert done.returncode == 2
    assert_one_clear_line(done, "--model")


def test_epistemic_model_variable_names_the_model(ws: Path, tmp_path: Path) -> None:
    script = write_script(tmp_path, HAPPY)
    done = epistemic("run", "-C", str(ws), TASK, env=cli_env(EPISTEMIC_MODEL=f"replay:{script}"))
    assert done.returncode == 0, done.stderr
    assert journal(ws)[0]["model"] == f"replay:{script}"
    assert (ws / "out.txt").read_text() == "hello\n"


def test_model_option_wins_over_the_variable(
    ws: Path, tmp_path: Path, main: Runner, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = write_script(tmp_path, HAPPY)
    monkeypatch.setenv("EPISTEMIC_MODEL", "replay:/nonexistent/script.json")
    done = run_cli(ws, script, runner=main)
    assert done.returncode == 0, done.stderr
    assert journal(ws)[0]["model"] == f"replay:{script}"


@pytest.mark.parametrize(
    "options", [("--max-steps", "0"), ("--max-rejections", "0"), ("--timeout", "0")]
)
def test_non_positive_limits_are_usage_errors(
    ws: Path, tmp_path: Path, options: tuple[str, str], main: Runner
) -> None:
    script = write_script(tmp_path, HAPPY)
    done = run_cli(ws, script, *options, runner=main)
    assert done.returncode == 2
    assert_one_clear_line(done, "positive")


@pytest.mark.parametrize("spec", ["nosuch:model", "replay", "replay:"])
def test_unknown_provider_and_bad_spec(ws: Path, spec: str, main: Runner) -> None:
    assert_one_clear_line(main("run", "--model", spec, "-C", str(ws), TASK))
    assert not (ws / ".epistemic").exists()


def test_missing_workspace_is_a_usage_error(tmp_path: Path, main: Runner) -> None:
    script = write_script(tmp_path, HAPPY)
    done = run_cli(tmp_path / "nope", script, runner=main)
    assert done.returncode == 2
    assert_one_clear_line(done, "not a directory")


def test_empty_task_is_a_usage_error(ws: Path, tmp_path: Path, main: Runner) -> None:
    done = run_cli(ws, write_script(tmp_path, HAPPY), task="  ", runner=main)
    assert done.returncode == 2
    assert_one_clear_line(done, "empty")


# -- output ----------------------------------------------------------------------------------


def test_json_output_is_json_lines_only(ws: Path, tmp_path: Path) -> None:
    turns = [
        calls(bash("echo 'not json'; echo '{oops' >&2", "collect-info")),
        calls(bash("true", "explore")),
        *HAPPY[1:],
    ]
    script = write_script(tmp_path, turns)
    done = run_cli(ws, script, "--json")
    assert done.returncode == 0, done.stderr
    events = json_lines(done.stdout)  # every line parses
    assert all(isinstance(e, dict) and "event" in e for e in events)
    kinds = [e["event"] for e in events]
    assert set(kinds) <= {"model-start", "model", "call-start", "call", "notice", "stop"}
    assert kinds.count("model-start") == kinds.count("model") == 6
    starts = [e for e in events if e["event"] == "call-start"]
    assert [s["seq"] for s in starts] == [1, 3, 4, 5]  # a rejected call never starts
    assert starts[0]["reason"] == LOOK and starts[0]["act"] == "collect-info"
    for start in starts:  # each one before its call's end
        assert events.index(start) < next(
            i for i, e in enumerate(events) if e["event"] == "call" and e["seq"] == start["seq"]
        )
    call_events = [e for e in events if e["event"] == "call"]
    assert [(c["seq"], c["status"]) for c in call_events] == [
        (1, "ran"),
        (2, "rejected"),
        (3, "ran"),
        (4, "ran"),
        (5, "ran"),
    ]
    assert call_events[0]["stdout"] == "not json\n"
    assert call_events[0]["command"] == "echo 'not json'; echo '{oops' >&2"
    assert call_events[1]["rule"] == "type-unknown"
    assert call_events[2]["tool"] == "write_file"
    assert call_events[2]["command"] == "hello.py"
    assert call_events[4]["act"] == "verify"
    stop = events[-1]
    assert stop["event"] == "stop"
    assert (stop["reason"], stop["exit_code"]) == ("finished", 0)
    assert stop["final"] == FINAL
    assert stop["rejections"] == 1
    assert Path(stop["report"]) == (ws / "RATIONALE.md").resolve()
    assert Path(stop["journal"]) == (ws / ".epistemic" / "journal.jsonl").resolve()


def test_json_output_on_a_failing_stop(ws: Path, tmp_path: Path, main: Runner) -> None:
    script = write_script(tmp_path, [calls(bash("true", "collect-info"))])
    done = run_cli(ws, script, "--json", runner=main)
    assert done.returncode == 5
    events = json_lines(done.stdout)
    assert events[-1]["event"] == "stop"
    assert (events[-1]["reason"], events[-1]["exit_code"]) == ("provider-error", 5)


LIVE_ROW = re.compile(r"^([●⊘]) +(\d+) (\S+) +(.*)$")  # mark, seq, act (or rejected), command
LIVE_END = re.compile(r"^ +([✓✗]) \d+\.\d\d s(.*)$")


def test_live_output_has_a_row_per_call_and_a_summary(ws: Path, tmp_path: Path) -> None:
    turns = [
        calls(bash("ls -a", "collect-info"), bash("ls", "explore")),
        calls(
            bash("echo first; echo 'the real reason' >&2; exit 1", "test-hypothesis", HYPOTHESIS)
        ),
        *HAPPY[1:],
    ]
    script = write_script(tmp_path, turns)
    done = run_cli(ws, script)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    rows = [m.groups() for line in lines if (m := LIVE_ROW.match(line))]
    assert rows == [
        ("●", "1", "collect-info", "ls -a"),
        ("⊘", "2", "rejected", "ls"),
        ("●", "3", "test-hypothesis", "echo first; echo 'the real reason' >&2; exit 1"),
        ("●", "4", "change-state", "write_file hello.py (15 bytes)"),
        ("●", "5", "change-state", "python3 hello.py > out.txt"),
        ("●", "6", "verify", "grep -qx hello out.txt"),
    ]
    ends = [m.groups() for line in lines if (m := LIVE_END.match(line))]
    assert [mark for mark, _ in ends] == ["✓", "✗", "✓", "✓", "✓"]
    assert ends[1][1] == " · exit 1 · the real reason"  # the line that says why
    first = lines.index(next(line for line in lines if LIVE_ROW.match(line)))
    assert lines[first + 1].strip() == LOOK  # the reason, under the row
    rejected = lines.index(next(line for line in lines if line.startswith("⊘")))
    assert lines[rejected + 1].strip().startswith("type-unknown: ")
    out = done.stdout
    assert FINAL in out
    assert "stopped: finished (the model answered without tool calls)" in out
    assert "the whole session so far: 6 calls: 5 ran (1 failed), 1 rejected\n" in out
    assert "; reverts that ran: 0\n" in out
    assert "model calls: 6, tokens: not reported" in out
    assert f"report: {(ws / 'RATIONALE.md').resolve()}\n" in out
    assert "Traceback" not in done.stderr


def test_live_output_shows_commands_with_brackets_verbatim(ws: Path, tmp_path: Path) -> None:
    command = "echo '[bold]x[/bold]' | tr '[/]' '_'"
    script = write_script(tmp_path, [calls(bash(command, "collect-info")), final()])
    done = run_cli(ws, script)
    assert "Traceback" not in done.stderr
    assert done.returncode == 0
    assert command in done.stdout


def test_live_summary_keeps_a_long_report_path_on_one_line(tmp_path: Path) -> None:
    deep = tmp_path / ("a-rather-long-directory-name-" * 3) / "workspace"
    deep.mkdir(parents=True)
    script = write_script(tmp_path, HAPPY)
    done = run_cli(deep, script, env=cli_env(COLUMNS=None))
    assert done.returncode == 0
    assert f"report: {(deep / 'RATIONALE.md').resolve()}\n" in done.stdout


# -- the REPL --------------------------------------------------------------------------------


def test_repl_messages_continue_one_session(ws: Path, tmp_path: Path) -> None:
    turns = [
        calls(bash("echo one >> log.txt", "setup", APPEND)),
        final("first done"),
        calls(bash("echo two >> log.txt", "setup", APPEND)),
        final("second done"),
    ]
    script = write_script(tmp_path, turns)
    done = epistemic(
        "repl", "--model", f"replay:{script}", "-C", str(ws), input="first message\n\nsecond\n"
    )
    assert done.returncode == 0, done.stderr
    assert "first done" in done.stdout
    assert "second done" in done.stdout
    assert (ws / "log.txt").read_text() == "one\ntwo\n"

    records = journal(ws)
    assert [r["n"] for r in records] == list(range(1, len(records) + 1))
    (session,) = of_kind(records, "session")
    assert session["mode"] == "repl"
    assert session["model"] == f"replay:{script}"
    assert [u["text"] for u in of_kind(records, "user")] == ["first message", "second"]
    assert [c["seq"] for c in of_kind(records, "call")] == [1, 2]
    assert [s["reason"] for s in of_kind(records, "stop")] == ["finished", "finished"]
    assert len(of_kind(records, "final")) == 2
    # the second message comes after the first run's stop
    first_stop = records.index(of_kind(records, "stop")[0])
    second_user = records.index(of_kind(records, "user")[1])
    assert first_stop < second_user
    assert epistemic("verify", str(ws)).returncode == 0


def test_repl_in_python_keeps_the_transcript(ws: Path, tmp_path: Path) -> None:
    script = write_script(tmp_path, [calls(bash("true")), final("a"), final("b")])
    provider = RecordingProvider(script)
    with Session(ws) as session:
        agent = Agent(session, provider)
        assert agent.run("one").final == "a"
        assert agent.run("two").final == "b"
    last = provider.requests[-1][1]
    assert [type(m) for m in last] == [
        UserMessage,
        AssistantMessage,
        ToolResults,
        AssistantMessage,
        UserMessage,
    ]
    assert last[-1] == UserMessage("two")


def test_second_run_continues_the_journal(ws: Path, tmp_path: Path, main: Runner) -> None:
    script = write_script(tmp_path, [calls(bash("true")), final()])
    assert run_cli(ws, script, runner=main).returncode == 0
    first = journal(ws)[0]["session"][:8]
    assert run_cli(ws, script, "--session", first, task="again", runner=main).returncode == 0
    records = journal(ws)
    assert len(of_kind(records, "session")) == 1
    (run_record,) = of_kind(records, "run")
    assert run_record["task"] == "again"
    assert [c["seq"] for c in of_kind(records, "call")] == [1, 2]
    assert main("verify", str(ws)).returncode == 0


# -- Ctrl-C ----------------------------------------------------------------------------------


def start_run(ws: Path, script: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [EPISTEMIC, "run", "--model", f"replay:{script}", "-C", str(ws), TASK],
        env=cli_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_until_running(ws: Path, proc: subprocess.Popen[str], seq: int = 1) -> None:
    path = ws / ".epistemic" / "journal.jsonl"

    def declared() -> bool:
        assert proc.poll() is None, "the run ended before the call started"
        if not path.exists():
            return False
        return any(
            r.get("kind") == "call" and r.get("seq") == seq
            for r in (json.loads(x) for x in path.read_text().splitlines() if x.endswith("}"))
        )

    eventually(declared, "the call to be declared", 10)
    eventually(lambda: running_below(proc.pid, "sleep"), "the command to run", 10)


def ctrl_c_twice(proc: subprocess.Popen[str]) -> tuple[str, str]:
    """Ctrl-C, and Ctrl-C again once the run says it heard the first; what it printed (stdout,
    stderr), once it ended."""
    out: list[str] = []
    err: list[str] = []
    readers = [
        threading.Thread(target=lambda: out.append(proc.stdout.read())),  # type: ignore[union-attr]
        threading.Thread(target=lambda: err.extend(iter(proc.stderr.readline, ""))),  # type: ignore[union-attr]
    ]
    for reader in readers:
        reader.start()
    proc.send_signal(signal.SIGINT)
    eventually(lambda: "Ctrl-C again aborts it" in "".join(err), "the first Ctrl-C heard", 10)
    proc.send_signal(signal.SIGINT)
    proc.wait(timeout=15)
    for reader in readers:
        reader.join(timeout=15)
    return "".join(out), "".join(err)


@pytest.mark.system  # end to end, slow for the default tier
def test_one_ctrl_c_finishes_the_call_and_stops_before_the_next(ws: Path, tmp_path: Path) -> None:
    turns = [
        calls(
            bash("sleep 3 && touch slept.txt", "change-state", APPEND),
            bash("touch after.txt", "setup", APPEND),
        ),
        calls(bash("touch turn2.txt", "setup", APPEND)),
        final(),
    ]
    proc = start_run(ws, write_script(tmp_path, turns))
    try:
        wait_until_running(ws, proc)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=15)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    assert (ws / "slept.txt").exists()
    assert not (ws / "after.txt").exists()
    assert not (ws / "turn2.txt").exists()
    assert "stopped: interrupted" in out

    records = journal(ws)
    kinds = [r["kind"] for r in records]
    assert kinds.count("interrupt") == 1
    # the interruption is journaled at the next safe point: after the running call
    assert kinds.index("outcome") < kinds.index("interrupt")
    assert [c["seq"] for c in of_kind(records, "call")] == [1]
    (outcome,) = of_kind(records, "outcome")
    assert outcome["ok"] is True
    assert outcome["duration"] >= 2.5
    assert "interrupted" not in outcome
    assert len(of_kind(records, "model")) == 1
    assert records[-1]["kind"] == "closed" and records[-1]["stop"] == "interrupted"
    stop = records[-2]
    assert stop["kind"] == "stop"
    assert stop["reason"] == "interrupted"
    assert "Ctrl-C" in stop["message"]
    assert "2 unplayed turn(s)" in stop["message"]
    assert verify_journal(ws / ".epistemic" / "journal.jsonl").status == "intact"


def test_two_ctrl_c_abort_the_running_command(ws: Path, tmp_path: Path) -> None:
    turns = [
        calls(
            bash("sleep 8 && touch slept.txt", "change-state", APPEND),
            bash("touch after.txt", "setup", APPEND),
        ),
        final(),
    ]
    proc = start_run(ws, write_script(tmp_path, turns))
    try:
        wait_until_running(ws, proc)
        started = time.monotonic()
        out, err = ctrl_c_twice(proc)
        elapsed = time.monotonic() - started
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    assert elapsed < 5, "the sleep was not aborted"
    assert not (ws / "slept.txt").exists()
    assert not (ws / "after.txt").exists()

    records = journal(ws)
    assert len(of_kind(records, "interrupt")) == 1
    (outcome,) = of_kind(records, "outcome")
    assert outcome["seq"] == 1
    assert outcome["interrupted"] is True
    assert outcome["ok"] is False
    assert records[-1]["kind"] == "closed" and records[-1]["stop"] == "interrupted"
    stop = records[-2]
    assert stop["kind"] == "stop"
    assert stop["reason"] == "interrupted"
    assert "second Ctrl-C" in stop["message"]
    assert "stopped: interrupted" in out
    verified = epistemic("verify", str(ws))
    assert verified.returncode == 0, verified.stdout
    text = (ws / "RATIONALE.md").read_text()
    assert "**Stopped:** `interrupted`" in text


@pytest.mark.system  # end to end, slow for the default tier
def test_two_ctrl_c_keep_what_the_command_printed_and_every_reader_says_aborted(
    ws: Path, tmp_path: Path
) -> None:
    """A command prints 15 lines, then sleeps; the user presses Ctrl-C twice. The command is
    stopped, and its outcome keeps the 15 lines as evidence, as any outcome would, and says it
    was interrupted; `log`, `show` and `stats` all call it aborted, and the run's summary
    counts it."""
    printing = "for i in $(seq 1 15); do echo line $i; done; sleep 8; echo never"
    turns = [calls(bash(printing, "collect-info", LOOK)), final()]
    proc = start_run(ws, write_script(tmp_path, turns))
    try:
        wait_until_running(ws, proc)
        captured = ws / ".epistemic" / "tmp"
        eventually(
            lambda: any(p.read_bytes().count(b"\n") == 15 for p in captured.glob("*.out")),
            "the 15 lines in the capture file",
            10,
        )
        out, err = ctrl_c_twice(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err
    assert "Traceback" not in err

    records = journal(ws)
    (outcome,) = of_kind(records, "outcome")
    assert outcome["seq"] == 1 and outcome["interrupted"] is True and outcome["ok"] is False
    printed = "".join(f"line {i}\n" for i in range(1, 16)).encode()
    stdout = outcome["evidence"]["stdout"]
    assert stdout["bytes"] == len(printed) and stdout["kept"] == len(printed)
    blob = ws / ".epistemic" / "evidence" / stdout["sha256"][:2] / stdout["sha256"]
    assert blob.read_bytes() == printed
    assert stdout["sha256"] == hashlib.sha256(printed).hexdigest()
    assert "line 1" in outcome["outcome"] and "interrupted" in outcome["outcome"]
    assert not list((ws / ".epistemic" / "tmp").glob("*.out"))  # taken into the evidence

    logged = json.loads(epistemic("log", "--json", "-C", str(ws), check=True).stdout)
    (view,) = [entry for entry in logged if entry["seq"] == 1]
    shown = json.loads(epistemic("show", "1", "--json", "-C", str(ws), check=True).stdout)
    stats = json.loads(epistemic("stats", "--json", "-C", str(ws), check=True).stdout)
    (session,) = stats["sessions"]
    assert view["fate"] == shown["view"]["fate"] == "aborted", (view, shown["view"])
    assert view["interrupted"] is True and shown["view"]["interrupted"] is True
    assert {fate: n for fate, n in session["fates"].items() if n} == {"aborted": 1}, session
    text = epistemic("show", "1", "-C", str(ws), check=True).stdout
    assert f"stdout ({len(printed)} bytes)" in text and "line 15" in text, text
    summary = out[out.index("stopped: interrupted") :]
    assert "no calls" not in summary and "1 aborted" in summary, summary
    assert epistemic("verify", str(ws)).returncode == 0


def test_ctrl_c_during_a_journal_append_keeps_the_chain(
    ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from epistemic_agent.journal.writer import JournalWriter

    script = write_script(tmp_path, [calls(bash("true")), calls(bash("true")), final()])
    real_write = JournalWriter._write
    fired: list[bool] = []

    def write_then_ctrl_c(self: JournalWriter, data: bytes) -> None:
        real_write(self, data)
        if b'"kind":"call"' in data and not fired:
            fired.append(True)
            signal.raise_signal(signal.SIGINT)  # as if Ctrl-C came during the fsync

    with Session(ws) as session:
        agent = Agent(session, ReplayProvider(script))
        monkeypatch.setattr(JournalWriter, "_write", write_then_ctrl_c)
        try:
            stop = agent.run(TASK)
        except KeyboardInterrupt:  # pragma: no cover - would be a second bug
            pytest.fail("one Ctrl-C raised KeyboardInterrupt")
        monkeypatch.undo()
    assert fired
    assert stop.reason == "interrupted"
    layout = ws / ".epistemic"
    assert verify_journal(layout / "journal.jsonl", layout / "head.json").status == "intact"
    assert len(of_kind(journal(ws), "interrupt")) == 1


def test_a_signal_during_the_fsync_of_a_call_record_still_closes_the_call(
    ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SIGTERM or SIGHUP (`run` raises SystemExit on them) or a second Ctrl-C can land while
    the call record, already written, is being synced: the call is in the journal, so it must
    get its outcome (interrupted), not be left without one."""
    from epistemic_agent.journal import writer as journal_writer
    from epistemic_agent.journal.writer import JournalWriter

    script = write_script(tmp_path, [calls(bash("true")), final()])
    real_write, real_fsync = JournalWriter._write, journal_writer.os.fsync
    state = {"call": False, "fired": False}

    def write(self: JournalWriter, data: bytes) -> None:
        real_write(self, data)
        state["call"] = b'"kind":"call"' in data

    def fsync(fd: int) -> None:
        if state["call"] and not state["fired"]:
            state["fired"] = True
            raise SystemExit(143)  # as `run`'s handler does, the signal landing in the fsync
        real_fsync(fd)

    with Session(ws) as session:
        agent = Agent(session, ReplayProvider(script))
        monkeypatch.setattr(JournalWriter, "_write", write)
        monkeypatch.setattr(journal_writer.os, "fsync", fsync)
        with pytest.raises(SystemExit):
            agent.run(TASK)
        monkeypatch.undo()
    assert state["fired"]
    records = journal(ws)
    (call,) = of_kind(records, "call")
    (outcome,) = of_kind(records, "outcome")
    assert outcome["seq"] == call["seq"] and outcome["interrupted"] is True
    layout = ws / ".epistemic"
    assert verify_journal(layout / "journal.jsonl", layout / "head.json").status == "intact"


# -- the record is off limits ----------------------------------------------------------------


def test_the_model_never_touches_the_record(ws: Path) -> None:
    (ws / "j").symlink_to(".epistemic/journal.jsonl")
    turns = [
        calls(tool("read_file", {"path": ".epistemic/journal.jsonl", "reason": LOOK})),
        calls(tool("write_file", {"path": "RATIONALE.md", "content": "pwned", "reason": WRITE})),
        calls(
            tool(
                "str_replace_edit",
                {"path": "./RATIONALE.md", "old": "#", "new": "!", "reason": WRITE},
            )
        ),
        calls(tool("read_file", {"path": "sub/../.epistemic/head.json", "reason": LOOK})),
        calls(tool("read_file", {"path": "j", "reason": LOOK})),
        final(),
    ]
    agent, stop, _ = play(ws, turns, max_rejections=10)
    assert stop.reason == "finished"
    results = tool_results(agent)
    assert len(results) == 5
    for result in results:
        assert result.is_error
        assert result.text.startswith("REJECTED path-protected: ")
        assert '"kind"' not in result.text
    assert "pwned" not in (ws / "RATIONALE.md").read_text()
    assert (ws / "RATIONALE.md").read_text().startswith("# RATIONALE")
    assert not of_kind(journal(ws), "call")
    assert verify_journal(ws / ".epistemic" / "journal.jsonl").status == "intact"


# -- system prompt and tools -----------------------------------------------------------------


def test_system_prompt_says_what_the_model_must_know() -> None:
    text = prompt.system_prompt()
    lowered = text.lower()
    assert "epistemic situation" in lowered
    assert "pytest" in text
    assert "test-hypothesis" in text
    assert "verify" in text
    assert "reason" in lowered
    assert "at least 20 characters" in text
    assert "never a restatement of the command" in text
    assert "belief" in lowered
    assert "refute" in lowered
    assert "rejected and does not run" in text
    assert ".epistemic/" in text
    assert "RATIONALE.md" in text
    assert "never edit them" in text
    assert "answer without tool calls" in text
    # the act list reaches the model once, through the tool schema, not the prompt
    for act in ACTS:
        assert act.meaning not in text
    assert "at least 42 characters" in prompt.system_prompt(42)


def test_agent_uses_the_sessions_reason_minimum(ws: Path, tmp_path: Path) -> None:
    from epistemic_agent.session.session import Settings

    script = write_script(tmp_path, [final()])
    with Session(ws, Settings(min_reason=33)) as session:
        agent = Agent(session, ReplayProvider(script))
    assert agent.system == prompt.system_prompt(33)


def test_bash_tool_type_is_the_vocabulary() -> None:
    spec = TOOLS_BY_NAME["bash"]
    kind = spec.parameters["properties"]["type"]
    assert kind["enum"] == list(ACT_NAMES)
    assert spec.required == ("command", "type", "reason")
    description = kind["description"]
    for act in ACTS:
        assert description.count(act.meaning) == 1, act.name
    every_description = json.dumps(openai_tools())
    for act in ACTS:
        assert every_description.count(json.dumps(act.meaning)[1:-1]) == 1, act.name


def test_tool_formats_carry_the_same_schemas() -> None:
    names = [t["function"]["name"] for t in openai_tools()]
    assert names == ["bash", "read_file", "write_file", "str_replace_edit"]
    assert [t["name"] for t in anthropic_tools()] == names
    for o, a in zip(openai_tools(), anthropic_tools(), strict=True):
        assert o["function"]["parameters"] == a["input_schema"]
        assert a["input_schema"]["additionalProperties"] is False
        assert "reason" in a["input_schema"]["required"]


def test_live_events_show_a_spinner_during_model_calls_on_a_terminal() -> None:
    import io

    from rich.console import Console

    from epistemic_agent.agent.live.tail import Activity
    from epistemic_agent.agent.live.view import LiveEvents
    from epistemic_agent.providers.base import Turn

    events = LiveEvents(io.StringIO())
    events.console = Console(file=io.StringIO(), force_terminal=True)
    events.activity = Activity(events.console)
    events.model_started(1)
    assert events.activity.active  # the running line turns while the model thinks
    events.model_finished(1, Turn("done"), 0.1)
    assert not events.activity.active
    plain = LiveEvents(io.StringIO())  # not a terminal: no spinner, lines only
    plain.model_started(1)
    assert not plain.activity.active


def test_run_prints_the_journal_head_at_the_end(ws: Path, tmp_path: Path) -> None:
    from epistemic_agent.journal.verify import verify_journal

    script = write_script(tmp_path, [calls(bash("true", "collect-info")), final()])
    done = run_cli(ws, script, "--json", env=cli_env())
    head = verify_journal(ws / ".epistemic" / "journal.jsonl")
    stop = json_lines(done.stdout)[-1]
    assert stop["journal_head"] == {"lines": head.lines, "head": head.head}
    script = write_script(tmp_path, [final()], name="again.json")
    first = journal(ws)[0]["session"]
    done = run_cli(ws, script, "--session", first, env=cli_env())
    head = verify_journal(ws / ".epistemic" / "journal.jsonl")
    assert f"journal head: {head.head} (line {head.lines};" in done.stdout
