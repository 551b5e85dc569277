"""The MCP handshake answered before the SDK loads: the same answers as the SDK's own, and
a clean hand-over of the stream to it when a message only the SDK answers comes."""

from __future__ import annotations

import json
import os
import select
from typing import Any

import anyio
import mcp_types
import pytest
from mcp.shared.message import SessionMessage

from conftest import EPISTEMIC
from epistemic_agent.mcp import handshake
from epistemic_agent.mcp.front import Front
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
    `initialize` when no answer comes in time. The front answers that `initialize` before the
    SDK has loaded; the SDK must then serve the handshake era too, or it refuses every later
    call for lacking the newer era's envelope."""
    import subprocess

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
    assert "error" not in replies[3], replies[3]
    assert replies[3]["result"]["isError"] is False
