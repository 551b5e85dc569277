"""A call a human denied did not run: no reader counts it as an act done, and a denied revert
undid nothing (no dead end). Once each reader counted it in its own way: the `run` summary said
`reverts: 1`, `stats` counted `rev 1`, while the HTML page said "No reverts" and its shape bars
counted both denied calls."""

from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest

from epistemic_agent import cli
from epistemic_agent.agent.events import JsonEvents
from epistemic_agent.agent.live.view import LiveEvents
from epistemic_agent.agent.loop import Stop
from epistemic_agent.approvals.request import Answer, Request
from epistemic_agent.core.cancel import Cancel
from epistemic_agent.policy.rules import preset
from epistemic_agent.session.session import Session

WHY = "take back the marker change because it broke the build"
LOOK = "see which files the workspace holds before changing anything"


class Denies:
    def ask(self, request: Request, cancel: Cancel | None = None) -> Answer:
        return Answer("denied", "alice", "test", "not now")


@pytest.fixture
def denied(tmp_path: Path) -> tuple[Path, Session]:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    session = Session(workspace, policy=preset("approve-mutating"), approver=Denies()).open()
    session.bash("ls", "collect-info", LOOK)
    session.bash("touch marker", "change-state", WHY)
    session.bash("rm -f marker", "revert", WHY)
    return workspace, session


def test_the_run_summaries_count_no_revert(denied: tuple[Path, Session]) -> None:
    _, session = denied
    stop = Stop("finished", "the model answered without tool calls", 3)
    live = StringIO()
    LiveEvents(live, color=False).summary(session, stop)
    assert "the whole session so far: 3 calls: 1 ran, 2 denied\n" in live.getvalue()
    assert "acts that ran: collect-info 1; reverts that ran: 0\n" in live.getvalue()
    events = StringIO()
    JsonEvents(events).summary(session, stop)
    summary = json.loads(events.getvalue())
    assert summary["reverts"] == 0 and summary["reverts_ran"] == 0
    assert summary["ran"] == {"collect-info": 1}
    assert summary["calls"] == {"ran": 1, "denied": 2}
    session.close()


def test_stats_rationale_and_the_page_count_no_revert(
    denied: tuple[Path, Session], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    workspace, session = denied
    session.close()
    assert cli.main(["stats", str(workspace), "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)["sessions"]
    assert row["reverts_ran"] == 0 and row["dead_ends_ran"] == []
    assert row["ran_acts"] == {"collect-info": 1}
    assert row["reverts"] == 1  # past the gate: its documented meaning, kept for old consumers
    assert cli.main(["stats", str(workspace)]) == 0
    text = capsys.readouterr().out
    assert "calls      3 calls: 1 ran, 2 denied\n" in text
    assert "acts ran   collect-info     1  100.0%\n" in text
    assert "reverts    0 ran; call 3 denied\n" in text
    rationale = (workspace / "RATIONALE.md").read_text(encoding="utf-8")
    assert "_3 calls: 1 ran, 2 denied; 1 of the 1 that ran was a shell act._" in rationale
    assert "_No reverts: no change-state was undone._" in rationale
    page = tmp_path / "page.html"
    assert cli.main(["html", str(workspace), "-o", str(page)]) == 0
    html = page.read_text(encoding="utf-8")
    assert "<p>3 calls: 1 ran, 2 denied;" in html
    assert 'data-act="revert" data-status="denied"' in html
