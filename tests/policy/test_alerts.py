"""Alerts: hooks in the policy file fire on the first revert, any revert, a rejection, a
declared-versus-done flag and a denial; as a command fed JSON, or as a line on stderr."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from epistemic_agent.approvals.request import Answer, Request
from epistemic_agent.policy.alerts import Alerts, Hook
from epistemic_agent.policy.file import load_policy
from epistemic_agent.session.session import Session, Settings

pytestmark = pytest.mark.usefixtures("systmp")

CHANGE = "The task asks for a marker file; creating it is the change itself."
UNDO = "The marker was the wrong approach; take the change back to where it started."
LOOK = "Nothing is known about this workspace yet; I need to see what files exist."


def policy_with_hooks(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "policy.toml"
    path.write_text('default = "allow"\n' + body)
    return path


def alerts_file(tmp_path: Path) -> str:
    """Where a hook writes what it received: a hook is confined like an observation act,
    so it may write only the session's scratch folder, which is its $TMPDIR."""
    return "$TMPDIR/alerts.jsonl"


def received(tmp_path: Path) -> list[dict[str, Any]]:
    found = sorted((tmp_path / "systmp" / "epistemic").glob("*/alerts.jsonl"))
    return [json.loads(line) for path in found for line in path.read_text().splitlines()]


def journal(ws: Path) -> list[dict[str, Any]]:
    lines = (ws / ".epistemic" / "journal.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def test_first_revert_fires_once_and_revert_every_time(ws: Path, tmp_path: Path) -> None:
    sink = alerts_file(tmp_path)
    path = policy_with_hooks(
        tmp_path,
        f'[[hook]]\nid = "qa"\non = ["first-revert"]\ncommand = "cat >> {sink}"\n'
        f'[[hook]]\nid = "all"\non = "revert"\ncommand = "cat >> {sink}"\n',
    )
    with Session(ws, policy=load_policy(path)) as session:
        session.bash("echo one > a.txt", "change-state", CHANGE)
        session.bash("rm a.txt", "revert", UNDO)
        session.bash("echo two > a.txt", "change-state", CHANGE)
        session.bash("rm a.txt", "revert", UNDO)
    events = [(e["event"], e["seq"]) for e in received(tmp_path)]
    assert events == [("first-revert", 2), ("revert", 2), ("revert", 4)]
    first = received(tmp_path)[0]
    assert first["act"] == "revert" and first["reason"] == UNDO and first["command"] == "rm a.txt"
    assert first["session"] and first["workspace"] == str(ws)
    alerts = [r for r in journal(ws) if r["kind"] == "alert"]
    assert [(a["event"], a["seq"]) for a in alerts] == events
    assert alerts[0]["hooks"][0]["hook"] == "qa" and alerts[0]["hooks"][0]["ok"] is True


def test_rejection_and_flag_alerts_on_stderr(ws: Path, tmp_path: Path) -> None:
    path = policy_with_hooks(tmp_path, '[[hook]]\non = ["rejection", "flag"]\nstderr = true\n')
    err = io.StringIO()
    with Session(ws, Settings(enforce=False), policy=load_policy(path)) as session:
        session.alerts.err = err
        session.bash("ls", "collect-info", "short")  # rejected: the reason is too short
        sneaky = "python3 -c \"open('x.txt', 'w').write('1')\""
        session.bash(sneaky, "collect-info", LOOK)
    lines = err.getvalue().splitlines()
    assert lines[0].startswith("epistemic: alert: rejection: call 1 (collect-info)")
    assert lines[1].startswith("epistemic: alert: flag: call 2 (collect-info)")
    assert "undeclared-write" in lines[1]


def test_denial_alerts_for_policy_rules_and_for_humans(ws: Path, tmp_path: Path) -> None:
    sink = alerts_file(tmp_path)
    path = policy_with_hooks(
        tmp_path,
        '[[rule]]\nid = "no-rm"\nwhen = "argv0 == \'rm\'"\ndecision = "deny"\nmessage = "no rm"\n'
        '[[rule]]\nid = "changes"\nwhen = "mutating"\ndecision = "ask"\n'
        '[approval]\nsignatures = "optional"\n'
        f'[[hook]]\non = "denial"\ncommand = "cat >> {sink}"\n',
    )

    class No:
        def ask(self, request: Request) -> Answer:
            return Answer("denied", "bob", "test", "too risky")

    with Session(ws, policy=load_policy(path), approver=No()) as session:
        session.bash("rm -f a.txt", "cleanup", "Remove the scratch file from earlier.")
        session.bash("touch b.txt", "change-state", CHANGE)
    first, second = received(tmp_path)
    assert first["event"] == "denial" and first["rule"] == "no-rm" and "no rm" in first["message"]
    assert second["by"] == "bob" and second["comment"] == "too risky"


def test_a_failing_or_slow_hook_never_breaks_the_session(tmp_path: Path) -> None:
    hooks = (
        Hook("fails", ("revert",), command="exit 3"),
        Hook("slow", ("revert",), command="sleep 5", timeout=0.2),
        Hook("missing", ("revert",), command="/no/such/program"),
    )
    fired = Alerts(hooks, str(tmp_path)).fire("revert", {"seq": 1})
    assert [(f["hook"], f["ok"]) for f in fired] == [
        ("fails", False),
        ("slow", False),
        ("missing", False),
    ]
    assert fired[0]["returncode"] == 3 and "timed out" in fired[1]["error"]
    assert fired[2]["returncode"] == 127


def test_the_hook_sees_its_event_in_the_environment(tmp_path: Path) -> None:
    out = tmp_path / "env.txt"
    hook = Hook("env", ("flag",), command=f'echo "$EPISTEMIC_EVENT" > {out}')
    assert Alerts((hook,), str(tmp_path)).fire("flag", {"seq": 2})[0]["ok"] is True
    assert out.read_text().strip() == "flag"
    assert Alerts((hook,), str(tmp_path)).fire("revert", {"seq": 3}) == []


def test_a_denied_revert_is_not_a_revert(ws: Path, tmp_path: Path) -> None:
    sink = alerts_file(tmp_path)
    path = policy_with_hooks(
        tmp_path,
        '[[rule]]\nid = "reverts"\nwhen = "act == \'revert\' && reverts == 0"\ndecision = "ask"\n'
        '[approval]\nsignatures = "optional"\n'
        f'[[hook]]\non = ["first-revert"]\ncommand = "cat >> {sink}"\n',
    )

    class NoThenYes:
        def __init__(self) -> None:
            self.answers = ["denied", "approved"]

        def ask(self, request: Request) -> Answer:
            return Answer(self.answers.pop(0), "carol", "test", "")

    with Session(ws, policy=load_policy(path), approver=NoThenYes()) as session:
        session.bash("echo one > a.txt", "change-state", CHANGE)
        denied = session.bash("rm a.txt", "revert", UNDO)
        ran = session.bash("rm a.txt", "revert", UNDO)  # still the first: asked again
    assert denied.status == "denied" and ran.status == "ran"
    assert [(e["event"], e["seq"]) for e in received(tmp_path)] == [("first-revert", 3)]
