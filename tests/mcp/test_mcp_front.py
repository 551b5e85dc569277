"""The MCP handshake answered before the SDK loads: the same answers as the SDK's own, and
a clean hand-over of the stream to it when a message only the SDK answers comes."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
from typing import Any

import anyio
import mcp_types
import pytest
from mcp.shared.message import SessionMessage

from conftest import EPISTEMIC, eventually
from epistemic_agent.mcp import handshake
from epistemic_agent.mcp.front import ERA_REFUSAL, Front
from epistemic_agent.mcp.handshake import handshake_answers
from epistemic_agent.mcp.server import Gatekeeper, build_server
from epistemic_agent.mcp.wire import Out
from epistemic_agent.policy.rules import preset
from mcpclient import INITIALIZED, initialize_request

INITIALIZE = initialize_request("probe", "1")
LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}


def test_the_versions_are_the_sdks() -> None:
    assert handshake.HANDSHAKE_VERSIONS == mcp_types.version.HANDSHAKE_PROTOCOL_VERSIONS
    assert handshake.negotiated("2025-06-18") == "2025-06-18"
    assert handshake.negotiated("1999-01-01") == mcp_types.version.LATEST_HANDSHAKE_VERSION
    assert handshake.negotiated(None) == mcp_types.version.LATEST_HANDSHAKE_VERSION


async def sdk_answers(requested: str, tmp: Any) -> list[dict[str, Any]]:
    """What the SDK's own server replies to initialize and tools/list."""
    keeper = Gatekeeper(tmp, preset("approve-none"), None)
    server = build_server(keeper)
    to_server, server_in = anyio.create_memory_object_stream[SessionMessage | Exception](8)
    server_out, from_server = anyio.create_memory_object_stream[SessionMessage](8)
    initialize = {**INITIALIZE, "params": {**INITIALIZE["params"], "protocolVersion": requested}}
    replies = []
    async with anyio.create_task_group() as group:
        group.start_soon(server.run, server_in, server_out, server.create_initialization_options())
        for message in (
            initialize,
            INITIALIZED,
            LIST,
        ):
            parsed = mcp_types.jsonrpc_message_adapter.validate_python(message, by_name=False)
            await to_server.send(SessionMessage(parsed))
            if "id" in message:
                reply = await from_server.receive()
                replies.append(
                    json.loads(reply.message.model_dump_json(by_alias=True, exclude_unset=True))
                )
        group.cancel_scope.cancel()
    return replies


@pytest.mark.anyio
@pytest.mark.parametrize("requested", ["2025-06-18", "2024-11-05", "2031-01-01"])
async def test_the_front_says_what_the_sdk_says(tmp_path: Any, requested: str) -> None:
    initialize, listed = await sdk_answers(requested, tmp_path)
    answers = handshake_answers()
    assert answers["initialize"]({"protocolVersion": requested}) == initialize["result"]
    assert answers["tools/list"](None) == listed["result"]


def feed(front: Front, client: int, messages: list[Any]) -> None:
    """Write the messages (JSON, or raw text) as the client, and let the front read them."""
    lines = [m if isinstance(m, str) else json.dumps(m) for m in messages]
    os.write(client, "".join(line + "\n" for line in lines).encode())
    front.take()


def replies(reader: int) -> list[dict[str, Any]]:
    """What the front wrote so far."""
    received = b""
    while select.select([reader], [], [], 0)[0]:
        received += os.read(reader, 1 << 20)
    return [json.loads(line) for line in received.splitlines()]


def test_the_front_answers_then_hands_the_stream_over_from_initialize() -> None:
    front_reads, client_writes = os.pipe()
    client_reads, front_writes = os.pipe()
    front = Front(front_reads, Out(front_writes))
    feed(front, client_writes, [INITIALIZE, INITIALIZED, LIST])
    first, second = replies(client_reads)  # the answers to initialize and tools/list, at once
    assert first["id"] == 1 and first["result"]["serverInfo"]["name"] == "epistemic"
    assert second["id"] == 2 and next(t["name"] for t in second["result"]["tools"]) == "bash"
    assert not front.needs_sdk
    odd = {"jsonrpc": "2.0", "id": 3, "method": "resources/list"}
    later = {"jsonrpc": "2.0", "id": 4, "method": "ping"}
    feed(front, client_writes, [odd, later])
    assert front.needs_sdk and replies(client_reads) == []  # the SDK answers from there on
    os.write(client_writes, b'{"jsonrpc": "2.0", "id": 5, "met')  # half a line, not yet read
    replay = front.reader()
    os.write(client_writes, b'hod": "ping"}\n')
    read = [json.loads(replay.readline()) for _ in range(5)]
    assert read == [INITIALIZE, INITIALIZED, odd, later, {**later, "id": 5}]
    wire = front.writer()
    for number in (1, 3):  # the SDK's replies: the one to initialize is on the wire already
        wire.write(json.dumps({"jsonrpc": "2.0", "id": number, "result": {}}) + "\n")
    assert [reply["id"] for reply in replies(client_reads)] == [3]
    for fd in (front_reads, client_writes, client_reads, front_writes):
        os.close(fd)


@pytest.mark.parametrize("odd", [[1], {"a": 1}, None, True, 1.5])
def test_a_malformed_id_is_left_to_the_sdk(odd: object) -> None:
    """An id that is not a string or an integer (unhashable, null, a bool) is not the front's
    to answer: it stays quiet, leaves the line to the SDK and answers what follows."""
    front_reads, client_writes = os.pipe()
    client_reads, front_writes = os.pipe()
    front = Front(front_reads, Out(front_writes))
    feed(front, client_writes, [{**INITIALIZE, "id": odd}, LIST])
    assert [reply["id"] for reply in replies(client_reads)] == [2]
    assert front.opening is None and front.held  # the SDK, once loaded, answers it
    assert json.loads(front.reader().readline()) == {**INITIALIZE, "id": odd}
    feed(front, client_writes, [INITIALIZE, {**LIST, "id": odd}])  # after initialize: the SDK's
    assert [reply["id"] for reply in replies(client_reads)] == [1] and front.needs_sdk
    for fd in (front_reads, client_writes, client_reads, front_writes):
        os.close(fd)


def test_a_client_that_probed_the_newer_era_then_initialized_is_served_in_its_era(
    tmp_path: Any,
) -> None:
    """Claude Code first sends a 2026-07-28 `server/discover` probe, and falls back to
    `initialize` when no answer comes in time. The front answers that `initialize`, then
    serves the handshake era: the probe is refused as the SDK refuses it then, and the calls
    run (they come without the newer era's envelope)."""
    envelope = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    probe: dict[str, Any] = {"jsonrpc": "2.0", "id": "probe", "method": "server/discover"}
    probe["params"] = {"_meta": envelope}
    call = {"jsonrpc": "2.0", "id": 3, "method": "tools/call"}
    call["params"] = {
        "name": "bash",
        "arguments": {"command": "true", "type": "collect-info", "reason": "x" * 30},
    }
    lines = [probe, INITIALIZE, INITIALIZED, call]
    server = subprocess.Popen(
        [EPISTEMIC, "mcp", "-C", str(tmp_path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert server.stdin is not None and server.stdout is not None
    server.stdin.write("".join(json.dumps(m) + "\n" for m in lines).encode())
    server.stdin.flush()  # all at once: the front reads them before the SDK is ready
    replies: dict[object, dict[str, Any]] = {}
    try:
        while 3 not in replies:
            readable, _, _ = select.select([server.stdout], [], [], 60)
            assert readable, f"no answer to the call; so far: {replies}"
            reply = json.loads(server.stdout.readline())
            replies[reply.get("id")] = reply
    finally:
        server.stdin.close()
        server.wait(timeout=30)
    assert replies[1]["result"]["serverInfo"]["name"] == "epistemic"
    assert replies["probe"]["error"] == {"code": -32600, "message": ERA_REFUSAL}
    assert "error" not in replies[3], replies[3]
    assert replies[3]["result"]["isError"] is False


LOOK = "Nothing is known about this workspace yet; I need to see what files exist."
NO_SDK = """
import sys

class NoSdk:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("mcp", "mcp_types", "anyio", "pydantic"):
            raise ImportError(f"{name} may not be imported here")

sys.meta_path.insert(0, NoSdk())
from epistemic_agent.cli import main
sys.exit(main(sys.argv[1:]))
"""


def bash(ident: object, command: str, **params: Any) -> dict[str, Any]:
    arguments = {"command": command, "type": "collect-info", "reason": LOOK}
    body = {"name": "bash", "arguments": arguments, **params}
    return {"jsonrpc": "2.0", "id": ident, "method": "tools/call", "params": body}


class Raw:
    """`epistemic mcp` (or `command`) driven over raw JSON-RPC: what it writes, line by line."""

    def __init__(self, ws: Any, command: list[str] | None = None) -> None:
        argv = command or [EPISTEMIC]
        self.ws = ws
        self.process = subprocess.Popen(
            [*argv, "mcp", "-C", str(ws), "--progress-interval", "0.2"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=ws,
        )
        self.lines: list[bytes] = []  # every line, notifications included

    def send(self, *messages: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write("".join(json.dumps(m) + "\n" for m in messages).encode())
        self.process.stdin.flush()

    def until(self, ident: object) -> bytes:
        """The reply to request `ident` (the lines before it are kept too)."""
        assert self.process.stdout is not None
        while True:
            readable, _, _ = select.select([self.process.stdout], [], [], 60)
            assert readable, f"no reply to {ident!r}; so far {self.lines}"
            line = self.process.stdout.readline()
            assert line, f"the server ended before it answered {ident!r}"
            self.lines.append(line)
            if json.loads(line).get("id") == ident and "method" not in json.loads(line):
                return line

    def end(self) -> tuple[int, str]:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.close()
        self.lines += self.process.stdout.read().splitlines(keepends=True)
        code = self.process.wait(timeout=30)
        assert self.process.stderr is not None
        err = self.process.stderr.read().decode()
        self.process.stdout.close()
        self.process.stderr.close()
        return code, err


def a_session(server: Raw, sdk_first: bool) -> dict[object, bytes]:
    """The same session, served by the front or (`sdk_first`: a method only the SDK answers
    comes first) by the SDK: each request's reply, as bytes."""
    server.send(INITIALIZE, INITIALIZED)
    server.until(1)
    if sdk_first:
        server.send({"jsonrpc": "2.0", "id": "sdk", "method": "resources/list"})
        server.until("sdk")
    envelope = {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}
    requests: list[dict[str, Any]] = [
        {"jsonrpc": "2.0", "id": "p", "method": "ping"},
        {"jsonrpc": "2.0", "id": "p2", "method": "ping", "params": {"_meta": {"a": 1}}},
        bash(3, "printf 'h\\xc3\\xa9 \"q\"\\t\\\\'; echo err >&2"),
        {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "nope"}},
        bash(5, "sleep 0.5", _meta={"progressToken": "tok", "claudecode/toolUseId": "t1"}),
        bash("env", "true", _meta=envelope),
    ]
    replies = {}
    for request in requests:
        server.send(request)
        replies[request["id"]] = server.until(request["id"])
    server.send(bash(6, "sleep 30"))
    declared = lambda: any(r["command"] == "sleep 30" for r in journal_calls(server))  # noqa: E731
    eventually(declared, "the long call's declaration")
    server.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 6}})
    server.send(bash(7, "true"))
    replies[7] = server.until(7)
    code, err = server.end()
    assert code == 0, err
    assert not [line for line in server.lines if json.loads(line).get("id") == 6]  # unanswered
    beats = [line for line in server.lines if b"notifications/progress" in line]
    assert beats, server.lines
    replies["first beat"] = beats[0]
    return replies


def journal_calls(server: Raw) -> list[dict[str, Any]]:
    path = os.path.join(server.ws, ".epistemic", "journal.jsonl")
    if not os.path.exists(path):
        return []
    with open(path) as handle:
        records = [json.loads(line) for line in handle]
    return [record for record in records if record["kind"] == "call"]


@pytest.mark.system  # end to end, slow for the default tier
def test_the_front_says_what_the_sdk_says_in_a_session(tmp_path: Any) -> None:
    """Byte for byte: results, a rejection, progress, ping, the newer era refused, and a
    cancelled call never answered."""
    (tmp_path / "front").mkdir()
    (tmp_path / "sdk").mkdir()
    front = a_session(Raw(tmp_path / "front"), sdk_first=False)
    sdk = a_session(Raw(tmp_path / "sdk"), sdk_first=True)
    assert front == sdk


@pytest.mark.system  # end to end, slow for the default tier
def test_a_session_is_served_without_the_sdk(ws: Any) -> None:
    """The SDK (and pydantic) cannot even be imported: the handshake, calls, progress and
    cancellation are all served."""
    served = a_session(Raw(ws, [sys.executable, "-P", "-c", NO_SDK]), sdk_first=False)
    assert json.loads(served[3])["result"]["isError"] is False
    assert json.loads(served[7])["result"]["isError"] is False
    records = [json.loads(line) for line in (ws / ".epistemic" / "journal.jsonl").open()]
    seq = next(r["seq"] for r in records if r["kind"] == "call" and r["command"] == "sleep 30")
    outcome = next(r for r in records if r["kind"] == "outcome" and r["seq"] == seq)
    assert outcome["cancelled"] is True and outcome["cancelled_by"] == "probe", outcome
    assert records[-1]["kind"] == "closed"
