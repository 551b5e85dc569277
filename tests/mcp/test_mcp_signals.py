"""A session ends when its client ends the server: SIGINT, SIGTERM, SIGHUP or the end of its
input, with a call in flight or not. The journal ends with the call's outcome and `closed`
within a second, the server exits, and the next `epistemic exec` in the workspace goes to a
session of its own, never to the agent's."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from conftest import EPISTEMIC, eventually, running_below
from mcpclient import INITIALIZED, connect, initialize_request

LOOK = "Nothing is known about this workspace yet; I need to see what files exist."
WAIT = "The build takes a while; waiting for it is the step the task asks for."
ENDINGS = ["SIGINT", "SIGTERM", "SIGHUP", "eof"]
CLOSE_WITHIN = 1.0  # seconds from the signal to the `closed` record


def journal(ws: Path) -> list[dict[str, Any]]:
    path = ws / ".epistemic" / "journal.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def declared(ws: Path, seq: int) -> bool:
    return any(r["kind"] == "call" and r.get("seq") == seq for r in journal(ws))


def closed_after(ws: Path, started: float, limit: float = 15.0) -> float:
    """Seconds from `started` until the journal ends with `closed`."""
    while time.monotonic() - started < limit:
        records = journal(ws)
        if records and records[-1]["kind"] == "closed":
            return time.monotonic() - started
        time.sleep(0.01)
    raise AssertionError(f"no `closed` record: {[r['kind'] for r in journal(ws)]}")


def tool_call(ident: int, command: str, act: str, reason: str) -> dict[str, Any]:
    arguments = {"command": command, "type": act, "reason": reason}
    params = {"name": "bash", "arguments": arguments}
    return {"jsonrpc": "2.0", "id": ident, "method": "tools/call", "params": params}


class Server:
    """`epistemic mcp` over raw JSON-RPC, as a client drives it."""

    def __init__(self, ws: Path) -> None:
        self.process = subprocess.Popen(
            [EPISTEMIC, "mcp", "-C", str(ws)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )

    def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write((json.dumps(message) + "\n").encode())
        self.process.stdin.flush()

    def answer(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        reply: dict[str, Any] = json.loads(self.process.stdout.readline())
        return reply

    def end(self, how: str) -> float:
        """End it as a client would; when that happened (monotonic)."""
        started = time.monotonic()
        if how == "eof":
            assert self.process.stdin is not None
            self.process.stdin.close()
        else:
            self.process.send_signal(getattr(signal, how))
        return started

    def finish(self) -> tuple[int, str]:
        code = self.process.wait(timeout=10)
        assert self.process.stderr is not None and self.process.stdout is not None
        err = self.process.stderr.read().decode()
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            if stream is not None and not stream.closed:
                stream.close()
        return code, err


def serving(ws: Path) -> Server:
    """A server that has answered one call (so its session is open)."""
    server = Server(ws)
    server.send(initialize_request("a-client", "1"))
    assert server.answer()["id"] == 1
    server.send(INITIALIZED)
    server.send(tool_call(2, "ls", "collect-info", LOOK))
    assert server.answer()["id"] == 2
    return server


def exec_elsewhere(ws: Path, mcp_session: str) -> None:
    """A human's `exec` afterwards starts a session of its own; the agent's stays closed."""
    command = [EPISTEMIC, "exec", "-C", str(ws), "--type", "collect-info", "--reason", LOOK]
    done = subprocess.run([*command, "--", "true"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    listed = subprocess.run(
        [EPISTEMIC, "sessions", "-C", str(ws), "--json"], capture_output=True, text=True
    )
    sessions = {entry["id"]: entry for entry in json.loads(listed.stdout)}
    agent = sessions.pop(mcp_session)
    assert agent["status"] == "closed" and agent["mode"] == "mcp", agent
    (human,) = sessions.values()
    assert human["mode"] != "mcp" and human["calls"] == 1, human


@pytest.mark.system  # end to end, slow for the default tier
@pytest.mark.parametrize("in_flight", [False, True], ids=["idle", "in-flight"])
@pytest.mark.parametrize("how", ENDINGS)
def test_a_signal_or_the_end_of_input_closes_the_session(
    ws: Path, how: str, in_flight: bool
) -> None:
    server = serving(ws)
    if in_flight:
        server.send(tool_call(3, "sleep 30; touch late.txt", "change-state", WAIT))
        eventually(lambda: declared(ws, 2), "the long call's declaration")
        eventually(lambda: running_below(server.process.pid, "sleep 30"), "the command to run")
    took = closed_after(ws, server.end(how))
    code, err = server.finish()
    assert took < CLOSE_WITHIN, f"closed {took:.2f} s after {how}"
    assert code == 0, err
    kinds = [r["kind"] for r in journal(ws)]
    assert kinds[-1] == "closed" and kinds.count("closed") == 1, kinds
    if in_flight:
        assert kinds[-3:] == ["call", "outcome", "closed"], kinds
        outcome = journal(ws)[-2]
        assert outcome["cancelled"] is True and outcome["seq"] == 2, outcome
        why = "the server was ended by" if how != "eof" else "the client disconnected"
        assert why in outcome["outcome"], outcome["outcome"]
        assert not (ws / "late.txt").exists()
    if how != "eof":
        assert f"ended by {how}" in err, err
    exec_elsewhere(ws, journal(ws)[0]["session"])


def test_a_second_signal_while_closing_loses_nothing(ws: Path) -> None:
    """Claude Code's way: SIGINT, then SIGTERM 0.1 s later, here with more after it."""
    server = serving(ws)
    server.send(tool_call(3, "sleep 30", "collect-info", WAIT))
    eventually(lambda: declared(ws, 2), "the long call's declaration")
    started = server.end("SIGINT")
    for _ in range(5):
        time.sleep(0.05)
        server.process.send_signal(signal.SIGTERM)
    took = closed_after(ws, started)
    code, err = server.finish()
    assert took < CLOSE_WITHIN and code == 0, (took, err)
    records = journal(ws)
    assert [r["kind"] for r in records[-2:]] == ["outcome", "closed"]
    assert records[-2]["cancelled"] is True


def test_a_signal_right_after_the_handshake_leaves_nothing_open(ws: Path) -> None:
    """The session opens once the policy is in force and the client has introduced itself;
    a signal that comes first opens nothing (tests/mcp/test_mcp_start.py holds the policy
    back to see it), one that comes later closes the session, with no call in it."""
    server = Server(ws)
    server.send(initialize_request("a-client", "1"))
    assert server.answer()["id"] == 1
    server.end("SIGTERM")
    code, err = server.finish()
    assert code == 0 and "ended by SIGTERM" in err, err
    kinds = [r["kind"] for r in journal(ws)]
    assert kinds in ([], ["session", "closed"]), kinds


def server_pid(ws: Path) -> int:
    """The server's pid, as its session's call records name it."""
    pid: int = next(r["pid"] for r in journal(ws) if r["kind"] == "call")
    return pid


@pytest.mark.system  # end to end, slow for the default tier
@pytest.mark.anyio
@pytest.mark.parametrize("in_flight", [False, True], ids=["idle", "in-flight"])
@pytest.mark.parametrize("how", ENDINGS)
async def test_the_sdk_client_sees_the_session_closed(ws: Path, how: str, in_flight: bool) -> None:
    """Through the official SDK client: a signal to its server, or the client leaving (it
    closes the server's stdin)."""

    async def wait_long(session: Any) -> None:
        with contextlib.suppress(Exception):  # the connection ends under it
            await session.call_tool(
                "bash", {"command": "sleep 30", "type": "collect-info", "reason": WAIT}
            )

    async with connect(ws) as session, anyio.create_task_group() as group:
        await session.call_tool("bash", {"command": "ls", "type": "collect-info", "reason": LOOK})
        if in_flight:
            group.start_soon(wait_long, session)
            await anyio.to_thread.run_sync(lambda: eventually(lambda: declared(ws, 2), "it"))
        started = time.monotonic()
        if how != "eof":
            os.kill(server_pid(ws), getattr(signal, how))
            await anyio.to_thread.run_sync(lambda: closed_after(ws, started))
        group.cancel_scope.cancel()
    took = closed_after(ws, started)
    assert took < CLOSE_WITHIN, f"closed {took:.2f} s after {how}"
    kinds = [r["kind"] for r in journal(ws)]
    assert kinds[-1] == "closed" and kinds.count("closed") == 1, kinds
    if in_flight:
        assert kinds[-2] == "outcome" and journal(ws)[-2]["cancelled"] is True
    exec_elsewhere(ws, journal(ws)[0]["session"])
