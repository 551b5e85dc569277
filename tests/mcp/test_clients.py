"""The real clients, headless, behind `epistemic mcp` with the setup `epistemic init` wrote:
Claude Code and Codex CLI against scripted model servers on 127.0.0.1, and the MCP Inspector.

The clients come from npm (tests/npminstall.py installs them once under .venv/npm/). When
they cannot be installed these tests fail and say why: they are the integrations users rely
on, so they never skip.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from agentclients import (
    HANDSHAKE_NAMES,
    ClaudeCode,
    Client,
    Codex,
    init,
)
from conftest import EPISTEMIC, eventually
from epistemic_agent.cli.client_setup import CLAUDE_DENY
from epistemic_agent.core.tools import TOOL_SPECS
from modelserver import Call, ModelServer, Step
from npminstall import InstallError, install
from sshkeys import new_key, signer_line

pytestmark = pytest.mark.system  # the real clients, installed from npm

LOOK = "Nothing is known about this workspace yet; list it before changing anything."
WRITE = "The task asks for a notes file; writing it is the deliverable itself."
GHOST = "Creating the marker file the task mentions, as the first change."
PURGE = "The old export in data/ is obsolete; removing it is the requested change."
CHECK = "Reading the notes back confirms the write landed as intended."
NOTES = "# Notes\nThe gate journals every act.\n"
POLICY = """default = "allow"

[[rule]]
id = "keep-the-data"
when = "mutating && paths.exists(p, p.startsWith('data/'))"
decision = "deny"
message = "data/ holds the customer's records: never change them"
"""
#: Built-in tools each client may keep: none of them runs a program or touches a file.
HARMLESS = {
    "claude-code": {
        "Agent",
        "ListAgents",
        "ReportFindings",
        "ScheduleWakeup",
        "Skill",
        "ToolSearch",
        "Workflow",
        "DeferredToolPlaceholder",
        "CronCreate",
        "CronDelete",
        "CronList",
        "SendMessage",
        "TaskStop",
        "WebFetch",
        "WebSearch",
    },
    "codex": {
        "list_mcp_resources",
        "list_mcp_resource_templates",
        "read_mcp_resource",
        "request_user_input",
        "get_goal",
        "create_goal",
        "update_goal",
        *(f"multi_agent_v1.{name}" for name in ("spawn_agent", "send_input", "resume_agent")),
        *(f"multi_agent_v1.{name}" for name in ("wait_agent", "close_agent")),  # same config
        "web_search",
        "tool_search",
        "apply_patch",  # offered by catalogue models; refused by the read-only sandbox
    },
}


@pytest.fixture(scope="session")
def binaries() -> Path:
    try:
        return install()
    except InstallError as error:
        pytest.fail(f"the real MCP clients could not be installed: {error}", pytrace=False)


@pytest.fixture(params=["claude-code", "codex"])
def client(request: pytest.FixtureRequest, binaries: Path) -> Client:
    return ClaudeCode(binaries) if request.param == "claude-code" else Codex(binaries)


def workspace(
    tmp_path: Path, client: Client, policy: str | None = POLICY, signers: str = ""
) -> Path:
    ws = tmp_path / "ws"
    (ws / "data").mkdir(parents=True)
    (ws / "data" / "keep.csv").write_text("id,name\n1,Ada\n")
    if signers:
        (ws / "allowed_signers").write_text(signers)
    if policy is not None:
        (ws / "epistemic.toml").write_text(policy)
    done = init(client.name, ws)
    assert done.returncode == 0, done.stderr
    return ws


def calls(ws: Path) -> list[dict[str, Any]]:
    done = subprocess.run(
        [EPISTEMIC, "log", str(ws), "--json"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    views: list[dict[str, Any]] = json.loads(done.stdout)
    return views


def calls_of_every_session(ws: Path) -> list[dict[str, Any]]:
    """The calls of all the workspace's sessions, oldest session first (each process an
    Inspector CLI call starts is a session of its own)."""
    done = subprocess.run(
        [EPISTEMIC, "sessions", "-C", str(ws), "--json"], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    views: list[dict[str, Any]] = []
    for entry in json.loads(done.stdout):
        log = [EPISTEMIC, "log", entry["journal"], "--json"]
        listed = subprocess.run(log, capture_output=True, text=True, timeout=60)
        assert listed.returncode == 0, listed.stderr
        views += json.loads(listed.stdout)
    return views


def header(ws: Path) -> dict[str, Any]:
    first = (ws / ".epistemic" / "journal.jsonl").read_text().splitlines()[0]
    record: dict[str, Any] = json.loads(first)
    return record


def builtin(client: Client, offered: list[str]) -> set[str]:
    """The client's own tools among those offered (not the epistemic server's)."""
    prefix = "mcp__epistemic__" if client.name == "claude-code" else "mcp__epistemic."
    return {name for name in offered if not name.startswith(prefix)}


def test_calls_are_gated_journaled_and_answered(client: Client, tmp_path: Path) -> None:
    ws = workspace(tmp_path, client)
    steps = [
        Step([Call("bash", {"command": "ls", "type": "collect-info", "reason": LOOK})]),
        Step([Call("write_file", {"path": "notes.md", "content": NOTES, "reason": WRITE})]),
        Step([Call("bash", {"command": "touch ghost", "reason": GHOST})]),  # no type
        Step(
            [Call("bash", {"command": "rm data/keep.csv", "type": "change-state", "reason": PURGE})]
        ),
        Step([Call("read_file", {"path": "notes.md", "reason": CHECK})]),
    ]
    with ModelServer(client.wire, steps) as model:
        done = client.run_turn(ws, model.url, "Write the notes file.", tmp_path / "home")
    assert done.returncode == 0, done.stderr[-3000:]
    assert len(model.turns) == 6, (model.side, done.stdout[-2000:])

    tools = model.offered(0)
    prefix = "mcp__epistemic__" if client.name == "claude-code" else "mcp__epistemic."
    assert {prefix + spec.name for spec in TOOL_SPECS} <= set(tools)
    assert builtin(client, tools) <= HARMLESS[client.name], "a built-in tool is still offered"

    listed, written, rejected, denied, read = (model.result(turn) for turn in range(5))
    assert "epistemic.toml" in listed.text and listed.is_error is not True
    assert written.is_error is not True and (ws / "notes.md").read_text() == NOTES
    assert "REJECTED type-missing" in rejected.text and rejected.is_error in (True, None)
    assert "REJECTED policy" in denied.text and "keep-the-data" in denied.text
    assert denied.is_error in (True, None)
    assert "The gate journals every act." in read.text
    assert not (ws / "ghost").exists(), "a rejected call ran"
    assert (ws / "data" / "keep.csv").is_file(), "a denied call ran"

    views = calls(ws)
    shape = [(v["tool"], v["act"], v["status"], v["rule"], v["reason"]) for v in views]
    assert shape == [
        ("bash", "collect-info", "ran", None, LOOK),
        ("write_file", "change-state", "ran", None, WRITE),
        ("bash", None, "rejected", "type-missing", GHOST),
        ("bash", "change-state", "rejected", "policy", PURGE),
        ("read_file", "collect-info", "ran", None, CHECK),
    ]
    assert header(ws)["mcp_client"] == {
        "name": HANDSHAKE_NAMES[client.name],
        "version": client.version,
    }
    verified = subprocess.run([EPISTEMIC, "verify", str(ws)], capture_output=True, text=True)
    assert verified.returncode == 0, verified.stdout


def sessions(ws: Path) -> list[dict[str, Any]]:
    done = subprocess.run(
        [EPISTEMIC, "sessions", "-C", str(ws), "--json"], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    listed: list[dict[str, Any]] = json.loads(done.stdout)
    return listed


def test_the_session_ends_when_the_client_does(client: Client, tmp_path: Path) -> None:
    """Each client ends its server its own way (Claude Code: SIGINT, then SIGTERM; Codex:
    SIGTERM) and exits without waiting: the session is closed all the same, so a human's
    `exec` afterwards is never recorded as the agent's."""
    ws = workspace(tmp_path, client)
    look = {"command": "ls", "type": "collect-info", "reason": LOOK}
    with (
        ModelServer(client.wire, [Step([Call("bash", look)])]) as model,
        client.start_turn(ws, model.url, "List the files.", tmp_path / "home") as turn,
    ):
        done = turn.finish(timeout=120)
        assert done.returncode == 0, done.stderr[-3000:]
        eventually(lambda: sessions(ws)[0]["status"] != "open", "the session to close", 5)
    (agent,) = sessions(ws)
    assert (agent["mode"], agent["calls"], agent["status"]) == ("mcp", 1, "closed"), agent
    human = [EPISTEMIC, "exec", "-C", str(ws), "--type", "collect-info", "--reason", LOOK]
    ran = subprocess.run([*human, "--", "true"], capture_output=True, text=True, timeout=60)
    assert ran.returncode == 0, ran.stderr
    first, second = sessions(ws)
    assert first == agent and second["mode"] != "mcp" and second["calls"] == 1


def attacks(client: Client, ws: Path) -> list[Call]:
    """A model that reaches for the client's own tools anyway."""
    if client.name == "claude-code":
        return [
            Call("Bash", {"command": "touch by-bash", "description": "make it"}, builtin=True),
            Call("Write", {"file_path": str(ws / "by-write"), "content": "x"}, builtin=True),
            Call("Read", {"file_path": str(ws / "data" / "keep.csv")}, builtin=True),
            Call(
                "Monitor",
                {"description": "w", "timeout_ms": 5000, "command": "touch by-monitor"},
                builtin=True,
            ),
            Call(
                "NotebookEdit",
                {"notebook_path": str(ws / "by-nb.ipynb"), "new_source": "x"},
                builtin=True,
            ),
        ]
    patch = "*** Begin Patch\n*** Add File: by-patch\n+x\n*** End Patch\n"
    return [
        Call("exec_command", {"cmd": "touch by-exec"}, builtin=True),
        Call("shell", {"command": ["touch", "by-shell"]}, builtin=True),
        Call("apply_patch", patch, freeform=True),
        Call("view_image", {"path": str(ws / "data" / "keep.csv")}, builtin=True),
    ]


def test_the_clients_own_shell_and_file_tools_are_gone(client: Client, tmp_path: Path) -> None:
    ws = workspace(tmp_path, client, policy=None)
    if isinstance(client, Codex):
        client.model = "gpt-5.5"  # from Codex's catalogue: it offers apply_patch
    tried = attacks(client, ws)
    with ModelServer(client.wire, [Step(tried)]) as model:
        done = client.run_turn(ws, model.url, "Make the files.", tmp_path / "home")
    assert done.returncode == 0, done.stderr[-3000:]
    offered = builtin(client, model.offered(0))
    assert offered <= HARMLESS[client.name], offered
    if client.name == "claude-code":
        assert not offered & set(CLAUDE_DENY)
    made = sorted(p.name for p in ws.iterdir() if p.name.startswith("by-"))
    assert made == [], f"a built-in tool wrote {made}"
    for index in range(len(tried)):
        result = model.result(0, index)
        assert result.is_error in (True, None)
        assert "Ada" not in result.text  # nothing was read either
        assert any(
            word in result.text.lower()
            for word in ("no such tool", "unsupported", "rejected", "unknown")
        )
    # and nothing reached the gate (the session opens as the client connects: it stays empty)
    assert not (ws / ".epistemic").exists() or calls_of_every_session(ws) == []


def test_a_turn_waits_in_an_approval_until_it_is_answered(client: Client, tmp_path: Path) -> None:
    """The hook for approval tests: the call waits, `wait_pending` sees it; here nobody
    answers, so the policy's timeout denies it and the client's turn goes on."""
    policy = """default = "allow"
approval = { timeout = 3, channel = "file", signatures = "optional" }

[[rule]]
id = "changes"
when = "act == 'change-state'"
decision = "ask"
message = "a human approves every change"
"""
    ws = workspace(tmp_path, client, policy)
    change = {"command": "touch approved-only", "type": "change-state", "reason": GHOST}
    prompt, home = "Make the marker.", tmp_path / "home"
    with (
        ModelServer(client.wire, [Step([Call("bash", change)])]) as model,
        client.start_turn(ws, model.url, prompt, home) as turn,
    ):
        (request,) = turn.wait_pending(timeout=60)
        assert (request["seq"], request["act"]) == (1, "change-state")
        assert request["command"] == change["command"]
        done = turn.finish(timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    answer = model.result(0)
    assert "DENIED" in answer.text and answer.is_error in (True, None)
    assert not (ws / "approved-only").exists()
    (view,) = calls(ws)
    assert (view["status"], view["approval"]["timed_out"]) == ("denied", True)


SIGNED = """default = "allow"
approval = { timeout = 120, channel = "file", allowed_signers = "allowed_signers" }

[[rule]]
id = "changes"
when = "act == 'change-state'"
decision = "ask"
message = "a qualified engineer signs every change"
"""


def signer(tmp_path: Path) -> tuple[Path, str]:
    """A key for alice@example.com, and the allowed_signers line that trusts it."""
    key = new_key(tmp_path, "alice")
    return key, signer_line(key)


def test_a_signed_approval_runs_the_call(client: Client, tmp_path: Path) -> None:
    key, trusted = signer(tmp_path)
    ws = workspace(tmp_path, client, SIGNED, trusted)
    change = {"command": "touch approved-only", "type": "change-state", "reason": GHOST}
    with (
        ModelServer(client.wire, [Step([Call("bash", change)])]) as model,
        client.start_turn(ws, model.url, "Make the marker.", tmp_path / "home") as turn,
    ):
        (request,) = turn.wait_pending(timeout=60)
        approve = [EPISTEMIC, "approve", str(request["seq"]), "-C", str(ws), "--key", str(key)]
        answered = subprocess.run(approve, capture_output=True, text=True, timeout=60)
        assert answered.returncode == 0, answered.stderr
        done = turn.finish(timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    answer = model.result(0)
    assert '"returncode": 0' in answer.text and answer.is_error in (False, None), answer.text
    assert (ws / "approved-only").exists()
    (view,) = calls(ws)
    assert (view["status"], view["approval"]["decision"]) == ("ran", "approved")
    approval = next(
        json.loads(line)
        for line in (ws / ".epistemic" / "journal.jsonl").read_text().splitlines()
        if '"kind":"approval"' in line
    )
    assert approval["signed"] is True and approval["signer"] == "alice@example.com"


def test_a_client_timeout_during_an_approval_cancels_the_call_for_good(
    client: Client, tmp_path: Path
) -> None:
    key, trusted = signer(tmp_path)
    ws = workspace(tmp_path, client, SIGNED, trusted)
    change = {"command": "touch approved-only", "type": "change-state", "reason": GHOST}
    look = {"command": "ls", "type": "collect-info", "reason": LOOK}  # the server warms up
    steps = [
        Step([Call("bash", look)]),
        Step([Call("bash", change)]),
        Step([], text="The call timed out; stopping."),
    ]
    with (
        ModelServer(client.wire, steps) as model,
        client.start_turn(ws, model.url, "Make the marker.", tmp_path / "home", 5) as turn,
    ):
        turn.wait_pending(timeout=60)
        done = turn.finish(timeout=120)  # the client gives up after 5 s, and says so
    assert "timed out" in model.result(1).text.lower(), model.result(1).text
    first, view = calls(ws)
    assert first["status"] == "ran" and view["status"] == "cancelled", view
    assert view["approval"] is None  # nobody decided
    late = subprocess.run(
        [EPISTEMIC, "approve", "2", "-C", str(ws), "--key", str(key)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert late.returncode == 1 and "withdrawn" in late.stderr, late
    assert not (ws / "approved-only").exists()
    assert done.returncode in (0, 1), done.stderr[-3000:]


def inspector(binaries: Path, ws: Path, *method: str) -> subprocess.CompletedProcess[str]:
    """The MCP Inspector's CLI, with the server entry `epistemic init generic` wrote."""
    command = [str(binaries / "mcp-inspector"), "--cli"]
    if "PYTHONPATH" in os.environ:  # the Inspector gives its servers a filtered environment
        command += ["-e", f"PYTHONPATH={os.environ['PYTHONPATH']}"]
    command += ["--config", str(ws / ".mcp.json"), "--server", "epistemic", *method]
    return subprocess.run(command, cwd=ws, capture_output=True, text=True, timeout=90)


def test_the_mcp_inspector_lists_and_calls_the_tools(binaries: Path, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    assert init("generic", ws).returncode == 0
    listed = inspector(binaries, ws, "--method", "tools/list")
    assert listed.returncode == 0, listed.stderr
    tools = {tool["name"]: tool for tool in json.loads(listed.stdout)["tools"]}
    assert list(tools) == [spec.name for spec in TOOL_SPECS]
    for spec in TOOL_SPECS:
        assert tools[spec.name]["inputSchema"] == spec.parameters

    def call(*args: str) -> dict[str, Any]:
        words = [word for arg in args for word in ("--tool-arg", arg)]
        done = inspector(binaries, ws, "--method", "tools/call", "--tool-name", "bash", *words)
        assert done.returncode == 0, done.stderr
        result: dict[str, Any] = json.loads(done.stdout)
        return result

    ran = call("command=echo made > inspected", "type=change-state", f"reason={WRITE}")
    assert ran["isError"] is False and (ws / "inspected").read_text() == "made\n"
    refused = call("command=touch refused", f"reason={GHOST}")
    assert refused["isError"] is True
    assert refused["content"][0]["text"].startswith("REJECTED type-missing")
    assert not (ws / "refused").exists()
    views = calls_of_every_session(ws)
    assert [(v["act"], v["status"], v["reason"]) for v in views] == [
        ("change-state", "ran", WRITE),
        (None, "rejected", GHOST),
    ]
    assert header(ws)["mcp_client"]["name"] == "inspector-cli"


def test_a_registry_that_cannot_serve_the_clients_fails_the_install(tmp_path: Path) -> None:
    """What the client tests report instead of skipping (a registry that answers 404 to
    everything, so that npm gives up at once)."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Missing(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            pass

    registry = ThreadingHTTPServer(("127.0.0.1", 0), Missing)
    threading.Thread(target=registry.serve_forever, daemon=True).start()
    env = {**os.environ, "npm_config_registry": f"http://127.0.0.1:{registry.server_port}/"}
    env["npm_config_cache"] = str(tmp_path / "cache")  # nothing cached can stand in
    try:
        with pytest.raises(InstallError) as failed:
            install(tmp_path / "npm", env)
    finally:
        registry.shutdown()
    message = str(failed.value)
    assert "npm could not install @anthropic-ai/claude-code@" in message
    assert "is the npm registry reachable?" in message and "404" in message
    assert not (tmp_path / "npm" / ".installed").exists()
