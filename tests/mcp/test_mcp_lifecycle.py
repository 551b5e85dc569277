"""The MCP server's lifecycle around a call: a client that cancels it (or times it out) while
it waits for approval or runs, a client that goes away, and signs of life while it waits."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from conftest import EPISTEMIC, eventually
from mcpclient import INITIALIZED, connect, initialize_request

CHANGE = "The task asks for this file; creating it is the change itself."
LOOK = "Nothing is known about this workspace yet; I need to see what files exist."
ASKS = """default = "allow"
[approval]
channel = "file"
timeout = 120
signatures = "optional"
[[rule]]
id = "changes"
when = "act == 'change-state'"
decision = "ask"
message = "a human approves every change"
"""

pytestmark = pytest.mark.anyio


def journal(ws: Path) -> list[dict[str, Any]]:
    path = ws / ".epistemic" / "journal.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def outcome_of(ws: Path, seq: int) -> dict[str, Any] | None:
    found = [r for r in journal(ws) if r["kind"] == "outcome" and r.get("seq") == seq]
    return found[0] if found else None


def approve(ws: Path, seq: int) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [EPISTEMIC, "approve", str(seq), "-C", str(ws), "--as", "qa"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.mark.system  # end to end, slow for the default tier
async def test_a_client_timeout_withdraws_the_waiting_call_for_good(ws: Path) -> None:
    (ws / "epistemic.toml").write_text(ASKS)
    async with connect(ws) as session:
        with pytest.raises(Exception):  # noqa: B017 - the SDK's own timeout error
            await session.call_tool(
                "bash",
                {"command": "touch ran.txt", "type": "change-state", "reason": CHANGE},
                read_timeout_seconds=1.5,
            )
        done = await anyio.to_thread.run_sync(lambda: eventually(lambda: outcome_of(ws, 1), "it"))
        later = await session.call_tool(
            "bash", {"command": "ls", "type": "collect-info", "reason": LOOK}
        )
    assert done["cancelled"] is True and done["cancelled_by"] == "mcp", done
    assert done["outcome"].startswith("cancelled by mcp: the client cancelled the request")
    assert later.is_error is False  # nothing queues behind the withdrawn call
    closed = json.loads((ws / ".epistemic" / "pending" / "1.closed.json").read_text())
    assert closed["why"] == "withdrawn"
    late = approve(ws, 1)  # a human comes back after the client gave up
    assert late.returncode == 1 and "withdrawn" in late.stderr, late
    assert not (ws / "ran.txt").exists()
    assert not [r for r in journal(ws) if r["kind"] == "approval"]
    assert "CANCELLED" in (ws / "RATIONALE.md").read_text()


@pytest.mark.system  # end to end, slow for the default tier
async def test_a_client_timeout_stops_a_running_command(ws: Path) -> None:
    async with connect(ws) as session:
        await session.call_tool("bash", {"command": "ls", "type": "collect-info", "reason": LOOK})
        started = time.monotonic()
        with pytest.raises(Exception):  # noqa: B017
            await session.call_tool(
                "bash",
                {"command": "sleep 30; touch late.txt", "type": "change-state", "reason": CHANGE},
                read_timeout_seconds=2.0,
            )
        done = await anyio.to_thread.run_sync(lambda: eventually(lambda: outcome_of(ws, 2), "it"))
    assert time.monotonic() - started < 15
    assert done["cancelled"] is True and "stopped while it ran" in done["outcome"]
    assert not (ws / "late.txt").exists()


@pytest.mark.system  # end to end, slow for the default tier
async def test_progress_notifications_keep_a_waiting_call_alive(ws: Path) -> None:
    (ws / "epistemic.toml").write_text(ASKS)
    beats: list[float] = []

    async def progress(value: float, total: float | None, message: str | None) -> None:
        beats.append(value)

    async with connect(ws, "--progress-interval", "0.3") as session:
        await session.call_tool("bash", {"command": "ls", "type": "collect-info", "reason": LOOK})
        with pytest.raises(Exception):  # noqa: B017
            await session.call_tool(
                "bash",
                {"command": "touch ran.txt", "type": "change-state", "reason": CHANGE},
                read_timeout_seconds=2.0,
                progress_callback=progress,
            )
    assert len(beats) >= 3 and beats == sorted(beats), beats


@pytest.mark.system  # end to end, slow for the default tier
def test_a_client_that_goes_away_leaves_nothing_waiting(ws: Path) -> None:
    """Raw JSON-RPC: the client asks, then closes its end while the call waits."""
    (ws / "epistemic.toml").write_text(ASKS)
    server = subprocess.Popen(
        [EPISTEMIC, "mcp", "-C", str(ws)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert server.stdin is not None
    messages = [
        initialize_request("a-client", "1"),
        INITIALIZED,
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {
                "name": "bash",
                "arguments": {"command": "touch ran.txt", "type": "change-state", "reason": CHANGE},
            },
        },
    ]
    for message in messages:
        server.stdin.write((json.dumps(message) + "\n").encode())
        server.stdin.flush()
    request = ws / ".epistemic" / "pending" / "1.request.json"
    eventually(request.exists, "the approval request")
    server.stdin.close()
    assert server.wait(timeout=30) == 0
    done = outcome_of(ws, 1)
    assert done is not None and done["cancelled"] is True, done
    assert done["cancelled_by"] in ("a-client", "epistemic mcp")
    assert "the client disconnected" in json.dumps(done), done  # not "cancelled the request"
    assert not request.exists()
    late = approve(ws, 1)
    assert late.returncode == 1, late
    assert not (ws / "ran.txt").exists()
    assert "CANCELLED" in (ws / "RATIONALE.md").read_text()
    assert server.stdout is not None and server.stderr is not None
    server.stdout.close()
    server.stderr.close()


def test_approve_refuses_a_request_whose_session_is_gone(ws: Path) -> None:
    folder = ws / ".epistemic" / "pending"
    folder.mkdir(parents=True)
    dead = subprocess.Popen(["true"])
    dead.wait()
    request = {"seq": 3, "pid": dead.pid, "requested": "2026-01-01T00:00:00.000Z", "nonce": "x"}
    (folder / "3.request.json").write_text(json.dumps(request))
    done = approve(ws, 3)
    assert done.returncode == 4 and "is gone" in done.stderr, done  # docs/policy.md: exit 4
    assert not (folder / "3.answer.json").exists()
    unknown = approve(ws, 9)
    assert unknown.returncode == 4 and "was ever opened" in unknown.stderr
    assert os.listdir(folder) == ["3.request.json"]
