"""`epistemic mcp` answers at once: the handshake while the policy still loads, and a session's
calls without the SDK. No call runs before the policy is loaded and checked, a policy that
cannot be used still ends the server with its error, and what the front says is what the SDK
says."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import EPISTEMIC, eventually
from epistemic_agent.mcp.server import Gatekeeper
from epistemic_agent.mcp.serving import Serving
from epistemic_agent.mcp.stop import Stop
from epistemic_agent.mcp.wire import Out
from epistemic_agent.policy.rules import preset
from mcpclient import INITIALIZED, initialize_request

LOOK = "Nothing is known about this workspace yet; I need to see what files exist."
WAIT = "The build takes a while; waiting for it is the step the task asks for."
LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}


def tool_call(ident: object, command: str, **params: Any) -> dict[str, Any]:
    arguments = {"command": command, "type": "collect-info", "reason": LOOK}
    body = {"name": "bash", "arguments": arguments, **params}
    return {"jsonrpc": "2.0", "id": ident, "method": "tools/call", "params": body}


def journal(ws: Path) -> list[dict[str, Any]]:
    path = ws / ".epistemic" / "journal.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


class Pipes:
    """A client's two pipes to a server run in this process."""

    def __init__(self) -> None:
        self.server_in, self.client_out = os.pipe()
        self.client_in, self.server_out = os.pipe()
        self._seen = b""

    def send(self, *messages: dict[str, Any]) -> None:
        os.write(self.client_out, "".join(json.dumps(m) + "\n" for m in messages).encode())

    def reply(self, seconds: float = 30) -> dict[str, Any] | None:
        """The next line the server wrote, or None when none came within `seconds`."""
        deadline = time.monotonic() + seconds
        while b"\n" not in self._seen:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.client_in], [], [], left)[0]:
                return None
            self._seen += os.read(self.client_in, 1 << 20)
        line, _, self._seen = self._seen.partition(b"\n")
        message: dict[str, Any] = json.loads(line)
        return message

    def close(self) -> None:
        for fd in (self.server_in, self.client_out, self.client_in, self.server_out):
            os.close(fd)


class SlowPolicy:
    """A `prepare` that takes as long as the test wants: the policy loads until `loaded`."""

    def __init__(self, ws: Path) -> None:
        self.ws = ws
        self.asked = threading.Event()
        self.loaded = threading.Event()

    def __call__(self) -> Gatekeeper:
        self.asked.set()
        assert self.loaded.wait(60), "the test never let the policy load"
        return Gatekeeper(self.ws, preset("approve-none"), None)


@pytest.fixture
def pipes() -> Iterator[Pipes]:
    made = Pipes()
    yield made
    made.close()


def test_the_handshake_is_answered_while_the_policy_loads_and_no_call_runs_before(
    ws: Path, pipes: Pipes
) -> None:
    policy = SlowPolicy(ws)
    serving = Serving(policy, pipes.server_in, Out(pipes.server_out))
    worker = threading.Thread(target=serving.run)
    worker.start()
    pipes.send(initialize_request("a-client", "1"), INITIALIZED, LIST, tool_call(3, "ls"))
    first, second = pipes.reply(), pipes.reply()
    assert policy.asked.is_set() and not policy.loaded.is_set()
    assert first is not None and first["id"] == 1 and "serverInfo" in first["result"]
    assert second is not None and second["id"] == 2 and len(second["result"]["tools"]) == 4
    assert pipes.reply(0.5) is None, "a call was answered before the policy was in force"
    assert journal(ws) == [] and not (ws / ".epistemic").exists()
    policy.loaded.set()
    answered = pipes.reply()
    assert answered is not None and answered["id"] == 3, answered
    assert answered["result"]["isError"] is False, answered
    os.close(pipes.client_out)
    pipes.client_out = os.open(os.devnull, os.O_RDONLY)  # closed by the fixture instead
    worker.join(30)
    assert not worker.is_alive()
    kinds = [record["kind"] for record in journal(ws)]
    assert kinds == ["session", "call", "outcome", "closed"], kinds
    assert journal(ws)[0]["mcp_client"] == {"name": "a-client", "version": "1"}
    assert serving.farewell().startswith("epistemic mcp: connection closed; the session is")


@pytest.fixture
def signals() -> Iterator[None]:
    """The process's signal handlers and wake-up fd, as they were, after the test."""
    handlers = {number: signal.getsignal(number) for number in Stop.SIGNALS}
    wakeup = signal.set_wakeup_fd(-1)
    signal.set_wakeup_fd(wakeup)
    yield
    for number, handler in handlers.items():
        signal.signal(number, handler)
    signal.set_wakeup_fd(wakeup)


@pytest.mark.usefixtures("signals")
def test_a_signal_while_the_policy_loads_opens_nothing(ws: Path, pipes: Pipes) -> None:
    policy = SlowPolicy(ws)
    stop = Stop()
    stop.install()
    serving = Serving(policy, pipes.server_in, Out(pipes.server_out), stop)
    worker = threading.Thread(target=serving.run)
    worker.start()
    pipes.send(initialize_request(), INITIALIZED, tool_call(3, "ls"))
    assert (pipes.reply() or {}).get("id") == 1
    signal.raise_signal(signal.SIGTERM)
    cut = pipes.reply()  # the call that waited for the policy: the SDK's words for it
    assert cut == {
        "jsonrpc": "2.0",
        "id": 3,
        "error": {"code": -32000, "message": "Connection closed"},
    }
    worker.join(0.3)
    assert worker.is_alive(), "it ended before the policy it was loading had loaded"
    policy.loaded.set()
    worker.join(30)
    assert not worker.is_alive()
    assert not (ws / ".epistemic").exists()
    assert serving.farewell() == "epistemic mcp: ended by SIGTERM"


def test_a_policy_that_cannot_load_ends_the_server_with_its_error_after_the_handshake(
    ws: Path,
) -> None:
    """The client keeps its end open: the server still ends, as it always did, with the
    policy's error and exit status 2, and no call runs."""
    (ws / "epistemic.toml").write_text('default = "maybe"\n')
    server = subprocess.Popen(
        [EPISTEMIC, "mcp", "-C", str(ws)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert server.stdin is not None and server.stdout is not None and server.stderr is not None
    lines = [initialize_request(), INITIALIZED, LIST, tool_call(3, "touch ran.txt")]
    server.stdin.write("".join(json.dumps(m) + "\n" for m in lines).encode())
    server.stdin.flush()
    assert server.wait(timeout=60) == 2
    answered = [json.loads(line)["id"] for line in server.stdout.read().splitlines()]
    err = server.stderr.read().decode()
    server.stdin.close()
    server.stdout.close()
    server.stderr.close()
    assert set(answered) <= {1, 2}, answered  # the handshake, perhaps; never the call
    assert "epistemic.toml:1: unknown default" in err and "Traceback" not in err, err
    assert not (ws / ".epistemic").exists() and not (ws / "ran.txt").exists()


def test_the_session_opens_once_the_client_has_introduced_itself(ws: Path) -> None:
    """Its header is written before any call (the first call finds it open), and a client
    that leaves without a call leaves it closed."""
    server = subprocess.Popen(
        [EPISTEMIC, "mcp", "-C", str(ws)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert server.stdin is not None
    server.stdin.write((json.dumps(initialize_request("early", "2")) + "\n").encode())
    server.stdin.flush()
    header = eventually(lambda: journal(ws), "the session's header")[0]
    assert header["kind"] == "session" and header["mcp_client"] == {"name": "early", "version": "2"}
    _, err = server.communicate(timeout=30)
    assert server.returncode == 0, err
    assert [record["kind"] for record in journal(ws)] == ["session", "closed"]
    assert b"connection closed; the session is journaled" in err


def test_a_session_that_cannot_open_fails_each_call_with_why(ws: Path) -> None:
    """It opens as the client connects, in vain: the first call fails with the reason (as a
    JSON-RPC error, as the SDK answers a handler that raised), and the next tries again."""
    (ws / ".epistemic").write_text("a file where the record's folder should be\n")
    server = subprocess.Popen(
        [EPISTEMIC, "mcp", "-C", str(ws)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert server.stdin is not None and server.stdout is not None
    server.stdin.write((json.dumps(initialize_request()) + "\n").encode())
    server.stdin.flush()
    assert json.loads(server.stdout.readline())["id"] == 1
    errors = []
    for ident in (3, 4):
        server.stdin.write((json.dumps(tool_call(ident, "true")) + "\n").encode())
        server.stdin.flush()
        reply = json.loads(server.stdout.readline())
        assert reply["id"] == ident, reply
        errors.append(reply["error"])
    _, err = server.communicate(timeout=30)
    assert server.returncode == 0, err
    for error in errors:
        assert error["code"] == 0 and "Not a directory" in error["message"], error
    assert err.count(b"NotADirectoryError") >= 2  # each attempt, with its traceback
