"""`epistemic mcp`: the real server process, driven by the official SDK's client over stdio."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import EPISTEMIC, eventually
from epistemic_agent.agent.prompt import system_prompt
from epistemic_agent.core.tools import TOOL_SPECS
from epistemic_agent.journal.verify import verify_journal
from mcpclient import INITIALIZED, connect, initialize_request

LOOK = "Nothing is known about this workspace yet; I need to see what files exist."
CHANGE = "The task asks for a notes file; writing it is the change itself."

pytestmark = pytest.mark.anyio


def journal(ws: Path) -> list[dict[str, Any]]:
    lines = (ws / ".epistemic" / "journal.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def text_of(result: Any) -> str:
    return "".join(block.text for block in result.content)


async def test_tools_match_the_agent_and_carry_annotations(ws: Path) -> None:
    async with connect(ws) as session:
        listed = await session.list_tools()
        init = session._initialize_result  # what the server said in the handshake
    tools = {tool.name: tool for tool in listed.tools}
    assert list(tools) == [spec.name for spec in TOOL_SPECS]
    for spec in TOOL_SPECS:
        assert tools[spec.name].description == spec.description
        assert tools[spec.name].input_schema == spec.parameters
    reads, runs, writes = (tools[name].annotations for name in ("read_file", "bash", "write_file"))
    assert reads is not None and reads.read_only_hint is True
    assert runs is not None and runs.destructive_hint is True
    assert writes is not None and writes.read_only_hint is False
    assert init is not None and system_prompt() in (init.instructions or "")


async def test_a_call_runs_and_is_journaled_with_the_client(ws: Path) -> None:
    (ws / "hello.txt").write_text("hi\n")
    async with connect(ws) as session:
        result = await session.call_tool(
            "bash", {"command": "cat hello.txt", "type": "collect-info", "reason": LOOK}
        )
    assert result.is_error is False
    assert json.loads(text_of(result))["stdout"] == "hi\n"
    records = journal(ws)
    assert records[0]["mode"] == "mcp"
    assert records[0]["mcp_client"]["name"] == "mcp"  # the SDK client's own name
    assert records[0]["mcp_client"]["version"]
    assert [r["kind"] for r in records[1:3]] == ["call", "outcome"]
    assert "cat hello.txt" in (ws / "RATIONALE.md").read_text()
    assert verify_journal(ws / ".epistemic" / "journal.jsonl").status == "intact"


@pytest.mark.parametrize(
    ("name", "arguments", "rule"),
    [
        ("bash", {"command": "ls"}, "type-missing"),
        ("bash", {"command": "ls", "type": "explore", "reason": LOOK}, "type-unknown"),
        ("bash", {"command": "ls", "type": "collect-info", "reason": "ls"}, "reason-too-short"),
        (
            "bash",
            {"command": "rm -f x", "type": "collect-info", "reason": LOOK},
            "observation-writes",
        ),
        ("launch_rocket", {"reason": LOOK}, "unknown-tool"),
        ("read_file", {"path": "../outside", "reason": LOOK}, "path-outside-workspace"),
    ],
)
async def test_each_kind_of_rejection_is_an_error_result(
    ws: Path, name: str, arguments: dict[str, Any], rule: str
) -> None:
    async with connect(ws) as session:
        result = await session.call_tool(name, arguments)
    assert result.is_error is True
    assert text_of(result).startswith(f"REJECTED {rule}:")
    rejected = [r for r in journal(ws) if r["kind"] == "rejected"]
    assert [r["rule"] for r in rejected] == [rule]


async def test_a_file_edit_through_mcp(ws: Path) -> None:
    async with connect(ws) as session:
        wrote = await session.call_tool(
            "write_file", {"path": "notes.md", "content": "one\ntwo\n", "reason": CHANGE}
        )
        edited = await session.call_tool(
            "str_replace_edit",
            {"path": "notes.md", "old": "two", "new": "three", "reason": CHANGE},
        )
        read = await session.call_tool("read_file", {"path": "notes.md", "reason": LOOK})
    assert not wrote.is_error and not edited.is_error
    assert (ws / "notes.md").read_text() == "one\nthree\n"
    assert "three" in text_of(read)
    acts = [r["act"] for r in journal(ws) if r["kind"] == "call"]
    assert acts == ["change-state", "change-state", "collect-info"]


@pytest.mark.system  # end to end, slow for the default tier
async def test_a_policy_denial_and_an_approval_through_files(ws: Path) -> None:
    (ws / "epistemic.toml").write_text(
        'default = "allow"\n'
        '[[rule]]\nid = "no-rm"\nwhen = "argv0 == \'rm\'"\ndecision = "deny"\n'
        'message = "never rm"\n'
        '[[rule]]\nid = "changes"\nwhen = "mutating"\ndecision = "ask"\n'
        '[approval]\nsignatures = "optional"\n'
    )
    async with connect(ws) as session:
        denied = await session.call_tool(
            "bash",
            {
                "command": "rm -f a.txt",
                "type": "cleanup",
                "reason": "Remove the scratch file I made earlier.",
            },
        )
        approver = subprocess.Popen(  # a human, in another terminal, approves call 2
            [sys.executable, "-c", APPROVE, EPISTEMIC, str(ws), "2"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        approved = await session.call_tool(
            "bash", {"command": "touch made.txt", "type": "change-state", "reason": CHANGE}
        )
        _, err = approver.communicate(timeout=30)
    assert denied.is_error and "never rm" in text_of(denied)
    assert approver.returncode == 0, err
    assert not approved.is_error and (ws / "made.txt").exists()
    approval = next(r for r in journal(ws) if r["kind"] == "approval")
    assert approval["channel"] == "file" and approval["by"] == "reviewer"


APPROVE = """
import json, subprocess, sys, time
cli, ws, seq = sys.argv[1:]
deadline = time.time() + 20
while time.time() < deadline:
    listed = json.loads(subprocess.run([cli, "pending", "--json", "-C", ws],
                                       capture_output=True, text=True).stdout)
    if any(item["seq"] == int(seq) for item in listed):
        done = subprocess.run([cli, "approve", seq, "-C", ws, "--as", "reviewer"])
        sys.exit(done.returncode)
    time.sleep(0.1)
sys.exit("no request appeared")
"""


async def test_a_broken_policy_stops_the_server_before_it_serves(ws: Path) -> None:
    (ws / "epistemic.toml").write_text('default = "maybe"\n')
    done = subprocess.run(
        [EPISTEMIC, "mcp", "-C", str(ws)], capture_output=True, text=True, timeout=30, input=""
    )
    assert done.returncode == 2 and done.stdout == ""
    assert "epistemic.toml:1: unknown default" in done.stderr
    assert not (ws / ".epistemic").exists()


@pytest.mark.system  # end to end, slow for the default tier
def test_malformed_requests_get_protocol_errors_and_stdout_stays_clean(ws: Path) -> None:
    lines = [
        "this is not json",
        json.dumps(initialize_request("probe", "9")),
        json.dumps(INITIALIZED),
        json.dumps({"jsonrpc": "2.0", "id": 2, "method": "no/such/method"}),
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 3,
                "method": "tools/call",
                "params": {
                    "name": "bash",
                    "arguments": {
                        "command": "echo noise; echo more >&2",
                        "type": "collect-info",
                        "reason": LOOK,
                    },
                },
            }
        ),
    ]
    process = subprocess.Popen(
        [EPISTEMIC, "mcp", "-C", str(ws)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdin is not None and process.stdout is not None
    for line in lines:
        process.stdin.write(line + "\n")
        process.stdin.flush()
    replies: dict[Any, Any] = {}
    deadline = time.monotonic() + 30
    while 3 not in replies and time.monotonic() < deadline:
        reply = json.loads(process.stdout.readline())  # every stdout line is JSON-RPC
        replies[reply.get("id")] = reply
    process.stdin.close()
    process.wait(timeout=30)
    assert replies[1]["result"]["serverInfo"]["name"] == "epistemic"
    assert replies[2]["error"]["code"] == -32601  # method not found
    assert json.loads(replies[3]["result"]["content"][0]["text"])["stdout"] == "noise\n"
    assert journal(ws)[0]["mcp_client"] == {"name": "probe", "version": "9"}


async def test_the_head_is_printed_to_stderr_when_the_connection_closes(ws: Path) -> None:
    import os

    log_path = ws.parent / "head.err"
    # the SDK passes the server only a few variables: this tree's PYTHONPATH too, here
    with log_path.open("w") as log:
        async with connect(ws, errlog=log, env=dict(os.environ)) as session:
            call = {"command": "true", "type": "collect-info", "reason": LOOK}
            await session.call_tool("bash", call)
    # the server writes its last lines as it exits
    eventually(lambda: "journal head" in log_path.read_text(), "the server's last lines")
    head = verify_journal(ws / ".epistemic" / "journal.jsonl")
    assert f"epistemic mcp: journal head {head.head} (line {head.lines})" in log_path.read_text()
