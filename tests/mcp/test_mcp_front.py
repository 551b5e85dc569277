"""The MCP handshake answered before the SDK loads: the same answers as the SDK's own, and
a clean hand-over of the stream to it."""

from __future__ import annotations

import json
import os
import select
import threading
from typing import Any

import anyio
import mcp_types
import pytest
from mcp.shared.message import SessionMessage

from conftest import EPISTEMIC
from epistemic_agent.mcp import front as mcp_front
from epistemic_agent.mcp.server import Gatekeeper, build_server, handshake_answers
from epistemic_agent.policy.rules import preset
from mcpclient import INITIALIZED, initialize_request

INITIALIZE = initialize_request("probe", "1")
LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}


def test_the_versions_are_the_sdks() -> None:
    assert mcp_front.HANDSHAKE_VERSIONS == mcp_types.version.HANDSHAKE_PROTOCOL_VERSIONS
    assert mcp_front.negotiated("2025-06-18") == "2025-06-18"
    assert mcp_front.negotiated("1999-01-01") == mcp_types.version.LATEST_HANDSHAKE_VERSION
    assert mcp_front.negotiated(None) == mcp_types.version.LATEST_HANDSHAKE_VERSION


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


def test_the_front_answers_then_hands_the_whole_stream_over() -> None:
    front_reads, client_writes = os.pipe()
    client_reads, front_writes = os.pipe()
    front = mcp_front.Front(front_reads, front_writes, handshake_answers())
    ready = threading.Event()
    worker = threading.Thread(target=front.until, args=(ready,))
    worker.start()
    lines = [INITIALIZE, INITIALIZED, LIST]
    os.write(client_writes, "".join(json.dumps(m) + "\n" for m in lines).encode())
    received = b""
    while received.count(b"\n") < 2:  # the answers to initialize and tools/list, at once
        received += os.read(client_reads, 1 << 20)
    first, second = (json.loads(line) for line in received.splitlines())
    assert first["id"] == 1 and first["result"]["serverInfo"]["name"] == "epistemic"
    assert second["id"] == 2 and next(t["name"] for t in second["result"]["tools"]) == "bash"
    ready.set()  # the SDK is loaded: it reads from the first byte
    worker.join(timeout=10)
    replay = front.reader()
    assert [json.loads(replay.readline()) for _ in lines] == lines
    wire = front.writer()
    for number in (1, 2, 3):  # the SDK's replies: two were answered already
        wire.write(json.dumps({"jsonrpc": "2.0", "id": number, "result": {}}) + "\n")
    os.close(front_writes)
    rest = b""
    while chunk := os.read(client_reads, 1 << 20):
        rest += chunk
    assert [json.loads(line)["id"] for line in rest.splitlines()] == [3]
    for fd in (front_reads, client_writes, client_reads):
        os.close(fd)


@pytest.mark.parametrize("odd", [[1], {"a": 1}, None, True, 1.5])
def test_a_malformed_id_is_left_to_the_sdk(odd: object) -> None:
    """An id that is not a string or an integer (unhashable, null, a bool) is not the front's
    to answer: it stays quiet, leaves the line to the SDK and answers what follows."""
    front_reads, client_writes = os.pipe()
    client_reads, front_writes = os.pipe()
    front = mcp_front.Front(front_reads, front_writes, handshake_answers())
    ready = threading.Event()
    worker = threading.Thread(target=front.until, args=(ready,))
    worker.start()
    lines = [{**INITIALIZE, "id": odd}, LIST]
    os.write(client_writes, "".join(json.dumps(m) + "\n" for m in lines).encode())
    readable, _, _ = select.select([client_reads], [], [], 10)
    assert readable, "the front answered nothing: it choked on the malformed id"
    received = os.read(client_reads, 1 << 20)
    assert [json.loads(line)["id"] for line in received.splitlines()] == [2]
    ready.set()
    worker.join(timeout=10)
    assert not worker.is_alive()
    replay = front.reader()
    assert [json.loads(replay.readline()) for _ in lines] == lines
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
