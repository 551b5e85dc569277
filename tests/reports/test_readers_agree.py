"""Every reader tells the story the journal holds: a property over random sessions.

Hypothesis draws a workspace's history: sessions of calls made through the real session code
(accepted and failed, rejected by the gate, approved, denied, denied when no one answered in
time, cancelled, reverts among them), and `epistemic exec` processes killed mid-call (a crash)
whose open call the next session recovers. While it plays them, the test keeps the ground
truth: each session's calls, in order, with the act and the one word for what each came to.
Then every reader of every session must say the same: `log` (text and JSON), `show --json`,
`stats` (text and JSON), `sessions --json`, and RATIONALE.md (its shape sentence and each
entry's label).
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
from collections import Counter
from contextlib import redirect_stderr, redirect_stdout
from io import StringIO
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from conftest import EPISTEMIC, cli_env
from epistemic_agent import cli
from epistemic_agent.approvals.request import Answer, Request
from epistemic_agent.core.cancel import Cancel
from epistemic_agent.policy.rules import preset
from epistemic_agent.session.results import Settings
from epistemic_agent.session.session import Session

WHY = "check what the workspace holds at this point of the work"
BELIEF = "I believe the workspace is as expected; a failure would mean the belief is wrong"
FATES = ("ran", "failed", "rejected", "denied", "cancelled", "aborted", "unknown")
WORDS = {
    "rejected": "rejected",
    "denied": "denied",
    "cancelled": "cancelled",
    "aborted": "aborted",
    "unknown": "without an outcome",
}
LABELS = {
    "ran": "ok",
    "failed": "FAILED",
    "rejected": "REJECTED",
    "denied": "DENIED",
    "cancelled": "CANCELLED",
    "aborted": "ABORTED",
    "unknown": "running: no outcome yet",
}
TIMEOUT = 1.0  # seconds a command may run (the plan's slow calls sleep longer)
RAN = ("ran", "failed")  # the fates of calls that ran
OBSERVE = ("collect-info", "test-hypothesis", "verify")
MUTATE = ("change-state", "setup", "revert", "cleanup")


class Answers:
    """An approver that gives the answers the plan drew, in order."""

    def __init__(self) -> None:
        self.next: list[Answer] = []

    def ask(self, request: Request, cancel: Cancel | None = None) -> Answer:
        return self.next.pop(0)


# -- what a plan is -----------------------------------------------------------------------------

observe = st.tuples(st.just("observe"), st.sampled_from(OBSERVE), st.booleans())
mutate = st.tuples(
    st.just("mutate"),
    st.sampled_from(MUTATE),
    st.sampled_from(("approved", "denied", "timeout", "cancelled")),
    st.booleans(),
)
reject = st.tuples(st.just("reject"), st.sampled_from(("type", "reason")))
other = st.sampled_from((("slow",), ("compact",)))
call = st.one_of(observe, observe, mutate, mutate, reject, other)
block = st.tuples(st.just("session"), st.lists(call, min_size=0, max_size=6))
crash = st.tuples(st.just("crash"))
plans = st.lists(st.one_of(block, block, block, crash), min_size=1, max_size=4)


# -- playing a plan, keeping the ground truth ---------------------------------------------------


class Truth:
    """Each session's calls as they were made: (act, fate) in seq order."""

    def __init__(self) -> None:
        self.sessions: dict[str, list[tuple[str, str]]] = {}
        self.answers: dict[str, Counter[str]] = {}  # the approvers' answers, per session
        self.open: str | None = None  # a session a killed process left open

    def continue_or_start(self, session_id: str) -> list[tuple[str, str]]:
        """The next process continues a session left open (its open call is now aborted)."""
        if self.open is not None:
            assert session_id == self.open, "the open session was not continued"
            calls = self.sessions[session_id]
            calls[:] = [(act, "aborted" if f == "unknown" else f) for act, f in calls]
        self.open = None
        return self.sessions.setdefault(session_id, [])


def play_call(session: Session, answers: Answers, step: tuple[Any, ...]) -> tuple[str, str]:
    """One call of the plan; what it came to."""
    if step[0] == "observe":
        _, act, ok = step
        session.bash("true" if ok else "false", act, BELIEF if act == "test-hypothesis" else WHY)
        return act, "ran" if ok else "failed"
    if step[0] == "slow":  # past the session's timeout: stopped, and failed
        session.bash("sleep 30", "verify", WHY)
        return "verify", "failed"
    if step[0] == "compact":  # what the agent loop journals when it compacts its context
        session.event(
            "compaction",
            step=1,
            trigger="near-limit",
            context_window=1000,
            estimated_tokens_before=900,
            estimated_tokens_after=300,
            calls=[],
            results=1,
            chars_removed=2000,
            reasoning_dropped=0,
        )
        return "", ""
    if step[0] == "reject":
        if step[1] == "type":
            session.bash("true", "explore", WHY)
            return "explore", "rejected"
        session.bash("true", "verify", "x")
        return "verify", "rejected"
    _, act, answer, ok = step
    if answer == "timeout":
        answers.next.append(Answer("denied", None, "file", "no answer", timed_out=True))
    else:
        answers.next.append(Answer(answer, "alice", "test", "as drawn"))
    session.bash("true" if ok else "false", act, WHY)
    fate = {"approved": "ran" if ok else "failed", "cancelled": "cancelled"}.get(answer, "denied")
    return act, fate


def play_crash(workspace: Path, truth: Truth) -> None:
    """`epistemic exec` killed while its command runs: the call stays without an outcome."""
    journal_lines = _lines(workspace)
    process = subprocess.Popen(
        [EPISTEMIC, "exec", "--type", "verify", "--reason", WHY, "--", "sleep 60"],
        cwd=workspace,
        env=cli_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 30
    while not _calls_after(workspace, journal_lines):
        assert time.monotonic() < deadline and process.poll() is None
        time.sleep(0.02)
    os.kill(process.pid, signal.SIGKILL)
    process.wait(timeout=30)
    session_id = _newest_session(workspace)
    calls = truth.continue_or_start(session_id)
    calls.append(("verify", "unknown"))
    truth.open = session_id


def _lines(workspace: Path) -> dict[Path, int]:
    return {j: len(j.read_bytes().splitlines()) for j in workspace.glob(".epistemic/**/*.jsonl")}


def _calls_after(workspace: Path, before: dict[Path, int]) -> bool:
    for journal in workspace.glob(".epistemic/**/journal.jsonl"):
        lines = journal.read_bytes().splitlines()[before.get(journal, 0) :]
        if any(json.loads(line).get("kind") == "call" for line in lines if line.endswith(b"}")):
            return True
    return False


def _newest_session(workspace: Path) -> str:
    listing = json.loads(run_cli("sessions", "--json", cwd=workspace))
    return str(max(listing, key=lambda s: s["started"])["id"])


def play(workspace: Path, plan: list[tuple[Any, ...]]) -> Truth:
    truth = Truth()
    policy = preset("approve-mutating")
    for step in plan:
        if step[0] == "crash":
            play_crash(workspace, truth)
            continue
        answers = Answers()
        settings = Settings(timeout=TIMEOUT)
        with Session(workspace, settings, policy=policy, approver=answers) as session:
            calls = truth.continue_or_start(session.session_id)
            given = truth.answers.setdefault(session.session_id, Counter())
            for item in step[1]:
                given.update([item[2]] if item[0] == "mutate" else [])
                act, fate = play_call(session, answers, item)
                calls += [(act, fate)] if fate else []
    return truth


# -- what each reader says ---------------------------------------------------------------------


def run_cli(*args: str, cwd: Path) -> str:
    out, err = StringIO(), StringIO()
    here = Path.cwd()
    os.chdir(cwd)
    try:
        with redirect_stdout(out), redirect_stderr(err):
            status = cli.main(list(args))
    finally:
        os.chdir(here)
    assert status == 0, (args, err.getvalue())
    return out.getvalue()


def sentence(calls: list[tuple[str, str]]) -> str:
    """What the calls came to, in the words every reader uses (ground truth, counted here)."""
    if not calls:
        return "no calls"
    fates = Counter(fate for _, fate in calls)
    parts = []
    ran = fates["ran"] + fates["failed"]
    if ran:
        parts.append(f"{ran} ran" + (f" ({fates['failed']} failed)" if fates["failed"] else ""))
    parts += [f"{fates[f]} {word}" for f, word in WORDS.items() if fates[f]]
    return f"{len(calls)} call{'s' if len(calls) != 1 else ''}: " + ", ".join(parts)


def check_session(
    workspace: Path, session_id: str, calls: list[tuple[str, str]], answers: Counter[str]
) -> None:
    pick = ("--session", session_id)
    fates = [fate for _, fate in calls]
    logged = json.loads(run_cli("log", "--json", *pick, cwd=workspace))
    assert [v["seq"] for v in logged] == list(range(1, len(calls) + 1))
    assert [v["fate"] for v in logged] == fates, "log --json"
    assert [v["act"] for v in logged if v["fate"] != "rejected"] == [
        act for act, fate in calls if fate != "rejected"
    ]
    text = run_cli("log", *pick, cwd=workspace)
    rows = [line.split("│") for line in text.splitlines() if line.startswith("│")]
    assert [(int(r[1]), r[3].split()[0]) for r in rows] == list(enumerate(fates, 1)), "log"
    for seq, fate in enumerate(fates, 1):
        shown = json.loads(run_cli("show", str(seq), "--json", *pick, cwd=workspace))
        assert shown["view"]["fate"] == fate, ("show", seq)
    (row,) = json.loads(run_cli("stats", "--json", *pick, cwd=workspace))["sessions"]
    counted = Counter(fates)
    assert row["fates"] == {fate: counted[fate] for fate in FATES}, "stats --json"
    assert row["calls"] == len(calls) and row["counted"] == sentence(calls)
    ran = Counter(act for act, fate in calls if fate in ("ran", "failed"))
    assert row["ran_acts"] == {act: n for act, n in ran.items() if n}
    assert row["reverts_ran"] == ran["revert"]
    assert row["ran"] == sum(counted[f] for f in ("ran", "failed", "cancelled", "aborted"))
    said = run_cli("stats", *pick, cwd=workspace)
    assert f"calls      {sentence(calls)}\n" in said, "stats"
    assert (row["approved"], row["approval_timeouts"]) == (answers["approved"], answers["timeout"])
    assert row["denied"] == answers["denied"] + answers["timeout"]
    approvals = f"{answers['approved']} approved, {answers['denied']} denied by a human"
    if answers["timeout"]:
        approvals += f", {answers['timeout']} denied because no one answered in time"
    assert f"approvals  {approvals}\n" in said, "stats approvals"
    run_cli("report", *pick, cwd=workspace)
    rationale = _rationale(workspace, session_id).read_text(encoding="utf-8")
    words = sentence(calls)
    assert f"_{words[:1].upper()}{words[1:]}" in rationale, "RATIONALE.md shape"
    titles = [line for line in rationale.splitlines() if re.match(r"### \d+\. ", line)]
    assert [t.rsplit(" · ", 1)[1] for t in titles] == [LABELS[f] for f in fates]
    reverts = [seq for seq, (act, f) in enumerate(calls, 1) if act == "revert" and f in RAN]
    dead = rationale.split("## Dead ends\n", 1)[1].split("\n## ", 1)[0]
    assert [int(n) for n in re.findall(r"^- \*\*Call (\d+)\*\*", dead, re.M)] == reverts
    assert row["dead_ends_ran"] == reverts
    page_file = workspace / "page.html"
    run_cli("html", "-o", str(page_file), *pick, cwd=workspace)
    page = page_file.read_text(encoding="utf-8")
    assert f"<p>{words[:1].upper()}{words[1:]};" in page, "html shape"
    marked = re.findall(r'data-seq="(\d+)"[^>]*data-status="(\w+)"', page)
    marks = {int(seq): status for seq, status in marked}
    assert marks == {seq: "ok" if f == "ran" else f for seq, f in enumerate(fates, 1)}, "html"


def _rationale(workspace: Path, session_id: str) -> Path:
    """RATIONALE.md, as `report --session ID` just rendered it for that session."""
    return workspace / "RATIONALE.md"


@pytest.mark.system  # end to end, slow for the default tier
@settings(
    max_examples=int(os.environ.get("READERS_AGREE_EXAMPLES", "25")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@example([("session", [("mutate", "revert", "denied", True), ("observe", "verify", True)])])
@example(
    [("session", [("mutate", "revert", "cancelled", True), ("mutate", "revert", "approved", 0)])]
)
@example([("crash",), ("session", [("mutate", "setup", "cancelled", True), ("slow",)])])
@example([("session", [("reject", "type"), ("compact",), ("mutate", "cleanup", "timeout", 1)])])
@given(plans)
def test_every_reader_tells_the_story_the_journal_holds(plan: list[tuple[Any, ...]]) -> None:
    with TemporaryDirectory() as temp:
        workspace = Path(temp) / "ws"
        workspace.mkdir()
        truth = play(workspace, plan)
        listing = {s["id"]: s for s in json.loads(run_cli("sessions", "--json", cwd=workspace))}
        assert set(listing) == set(truth.sessions), "sessions --json"
        for session_id, calls in truth.sessions.items():
            assert listing[session_id]["calls"] == len(calls), "sessions --json"
            check_session(workspace, session_id, calls, truth.answers.get(session_id, Counter()))
