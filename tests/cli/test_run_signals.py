"""`run` ends its session when it is told to stop: SIGTERM and SIGHUP stop the running call,
record its outcome and close the session, as a second Ctrl-C does. And an agent's session
left open by a kill (`kill -9`, the OOM killer) is never continued by a human's `exec`."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import EPISTEMIC, cli_env, epistemic, eventually

WAIT = "The build takes a while; waiting for it is the step the task asks for."
LOOK = "see what the workspace holds before anything else"


def records(journal: Path) -> list[dict[str, Any]]:
    if not journal.exists():
        return []
    return [json.loads(line) for line in journal.read_text().splitlines() if line.endswith("}")]


def sleeping_run(ws: Path, tmp_path: Path) -> subprocess.Popen[str]:
    script = tmp_path / "session.json"
    call = {"command": "sleep 30", "type": "verify", "reason": WAIT}
    script.write_text(json.dumps([{"calls": [{"tool": "bash", "args": call}]}, {"final": "ok"}]))
    process = subprocess.Popen(
        [EPISTEMIC, "run", "--model", f"replay:{script}", "-C", str(ws), "--json", "wait"],
        env=cli_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    journal = ws / ".epistemic" / "journal.jsonl"
    eventually(lambda: any(r["kind"] == "call" for r in records(journal)), "the call")
    return process


@pytest.mark.parametrize("name", ["SIGTERM", "SIGHUP"])
def test_a_signal_stops_the_call_and_closes_the_session(
    ws: Path, tmp_path: Path, name: str
) -> None:
    process = sleeping_run(ws, tmp_path)
    number = getattr(signal, name)
    sent = time.monotonic()
    process.send_signal(number)
    process.communicate(timeout=30)
    assert process.returncode == 128 + number
    found = records(ws / ".epistemic" / "journal.jsonl")
    assert found[-1]["kind"] == "closed", [r["kind"] for r in found]
    outcome = next((r for r in found if r["kind"] == "outcome"), found)
    assert isinstance(outcome, dict), [(r["kind"], r.get("seq")) for r in found]
    assert outcome.get("interrupted") is True or outcome["ok"] is False
    assert time.monotonic() - sent < 5
    assert epistemic("verify", str(ws)).returncode == 0


def test_an_agents_session_a_kill_left_open_is_not_continued_by_exec(
    ws: Path, tmp_path: Path
) -> None:
    process = sleeping_run(ws, tmp_path)
    process.kill()  # nothing closes the session
    process.communicate(timeout=30)
    agent = ws / ".epistemic" / "journal.jsonl"
    before = agent.read_bytes()
    done = epistemic(
        "exec", "-C", str(ws), "--type", "collect-info", "--reason", LOOK, "--", "true"
    )
    assert done.returncode == 0, done.stderr
    assert agent.read_bytes() == before  # the agent's record: untouched
    (human,) = ws.glob(".epistemic/sessions/*/journal.jsonl")
    assert "model" not in records(human)[0]
