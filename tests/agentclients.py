"""The real agent clients (installed by tests/npminstall.py), driven headless against
tests/modelserver.py. A client turn runs the exact headless invocation `epistemic init`
prints (epistemic_agent.cli.client_setup), in a private HOME, with no network but the model
server.

For tests of approvals: `with client.start_turn(...) as turn:` runs a turn in the background;
`turn.wait_pending()` blocks until a call waits for an approval (as `epistemic pending --json`
shows it), `turn.finish()` waits for the client to end its turn, and leaving the `with` ends
whatever the turn started. `start_turn(..., tool_timeout=S)` shortens the client's own wait
for one call (Codex's `tool_timeout_sec`, Claude Code's per-server `timeout`): when it runs
out, both clients tell the model the call timed out and go on.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from conftest import EPISTEMIC
from npminstall import pinned

#: What each client says its name is in the MCP handshake (and so in the journal's header).
HANDSHAKE_NAMES = {"claude-code": "claude-code", "codex": "codex-mcp-client"}


def base_env(home: Path) -> dict[str, str]:
    """A clean environment: no credentials or client settings of the machine's leak in."""
    keep = ("PATH", "LANG", "LC_ALL", "TZ", "TMPDIR", "PYTHONPATH")
    env = {name: os.environ[name] for name in keep if name in os.environ}
    home.mkdir(parents=True, exist_ok=True)
    env["HOME"] = str(home)
    env.update(
        DISABLE_AUTOUPDATER="1",
        DISABLE_TELEMETRY="1",
        DISABLE_ERROR_REPORTING="1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        NO_COLOR="1",
    )
    return env


def init(client: str, workspace: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    """`epistemic init CLIENT -C WORKSPACE`, as a user runs it."""
    command = [EPISTEMIC, "init", client, "-C", str(workspace), *extra]
    return subprocess.run(command, capture_output=True, text=True, timeout=60)


@dataclass
class Finished:
    returncode: int
    stdout: str
    stderr: str
    seconds: float


class Turn:
    """A client turn running in the background."""

    def __init__(self, process: subprocess.Popen[str], workspace: Path) -> None:
        self.process = process
        self.workspace = workspace
        self.started = time.monotonic()

    def wait_pending(self, timeout: float = 60.0) -> list[dict[str, Any]]:
        """The open approval requests, once there is one (fails after `timeout` seconds)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            listed = subprocess.run(
                [EPISTEMIC, "pending", "-C", str(self.workspace), "--json"],
                capture_output=True,
                text=True,
                timeout=30,
            )
            requests: list[dict[str, Any]] = json.loads(listed.stdout or "[]")
            if requests:
                return requests
            if self.process.poll() is not None:
                out, err = self.process.communicate()
                raise AssertionError(f"the client ended before asking: {out}\n{err}")
            time.sleep(0.2)
        self.kill()
        raise AssertionError(f"no approval request within {timeout} s")

    def finish(self, timeout: float = 120.0) -> Finished:
        try:
            out, err = self.process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            out, err = self.process.communicate()
            raise AssertionError(
                f"the client's turn took over {timeout} s:\n{out}\n{err}"
            ) from None
        code = self.process.returncode
        return Finished(code, out, err, time.monotonic() - self.started)

    def kill(self) -> None:
        """End the client and what it started (they share a process group of their own),
        whether the client is still running or not."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, 9)
        if self.process.returncode is None:
            self.process.wait()

    def __enter__(self) -> Turn:
        return self

    def __exit__(self, *exc: object) -> None:
        """Nothing the turn started outlives the test (`finish` leaves the server alone, so
        that a test can look at what it does once its client is gone)."""
        self.kill()
        for stream in (self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()


class Client:
    """One client: how a turn is started with the setup `epistemic init` wrote."""

    name = ""  # as `epistemic init` calls it
    wire = ""  # what its model server speaks (modelserver.ModelServer)
    package = ""  # its npm package

    def __init__(self, binaries: Path) -> None:
        self.binaries = binaries

    @property
    def version(self) -> str:
        return pinned()[self.package]

    def argv(self, workspace: Path, prompt: str, tool_timeout: float | None) -> list[str]:
        raise NotImplementedError

    def env(self, home: Path, model_url: str) -> dict[str, str]:
        raise NotImplementedError

    def start_turn(
        self,
        workspace: Path,
        model_url: str,
        prompt: str,
        home: Path,
        tool_timeout: float | None = None,
    ) -> Turn:
        """Start a turn; `tool_timeout` (seconds) replaces the client's wait for one call."""
        process = subprocess.Popen(
            self.argv(workspace, prompt, tool_timeout),
            cwd=workspace,
            env=self.env(home, model_url),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        return Turn(process, workspace)

    def run_turn(
        self, workspace: Path, model_url: str, prompt: str, home: Path, timeout: float = 120.0
    ) -> Finished:
        with self.start_turn(workspace, model_url, prompt, home) as turn:
            return turn.finish(timeout)


def documented(line: str, workspace: Path, prompt: str) -> list[str]:
    """A headless invocation as `epistemic init` prints it, with the task filled in."""
    words = shlex.split(line)
    if "&&" in words:  # `cd WORKSPACE && ...`: the turn starts in the workspace anyway
        assert words[:2] == ["cd", str(workspace)], line
        words = words[words.index("&&") + 1 :]
    return [prompt if word == "TASK" else word for word in words]


class ClaudeCode(Client):
    name = "claude-code"
    wire = "anthropic"
    package = "@anthropic-ai/claude-code"

    def argv(self, workspace: Path, prompt: str, tool_timeout: float | None) -> list[str]:
        from epistemic_agent.cli.client_setup import CLAUDE_HEADLESS

        if tool_timeout is not None:  # the server's own `timeout` wins over MCP_TOOL_TIMEOUT
            config = workspace / ".mcp.json"
            entries = json.loads(config.read_text())
            entries["mcpServers"]["epistemic"]["timeout"] = int(tool_timeout * 1000)
            config.write_text(json.dumps(entries, indent=2))
        words = documented(CLAUDE_HEADLESS.format(workspace=workspace), workspace, prompt)
        assert words[0] == "claude"
        return [str(self.binaries / "claude"), *words[1:], "--output-format", "json"]

    def env(self, home: Path, model_url: str) -> dict[str, str]:
        env = base_env(home)
        env.update(ANTHROPIC_BASE_URL=model_url, ANTHROPIC_API_KEY="sk-ant-test-not-a-key")
        return env


class Codex(Client):
    name = "codex"
    wire = "responses"
    package = "@openai/codex"
    model = "test-model"  # not in Codex's catalogue: MCP tools come as a namespace tool

    def home(self, home: Path) -> Path:
        """$CODEX_HOME with a model provider at the model server (the test's, not init's)."""
        return home / ".codex"

    def provider(self, home: Path, model_url: str) -> None:
        codex_home = self.home(home)
        codex_home.mkdir(parents=True, exist_ok=True)
        config = codex_home / "config.toml"
        lines = [
            f'model = "{self.model}"',
            'model_provider = "scripted"',
            "[model_providers.scripted]",
            'name = "scripted"',
            f'base_url = "{model_url}/v1"',
            'wire_api = "responses"',
            'env_key = "SCRIPTED_API_KEY"',
        ]
        kept = config.read_text() if config.is_file() else ""  # `--trust` writes here
        trusted = kept[kept.find("[projects.") :] if "[projects." in kept else ""
        config.write_text("\n".join(lines) + "\n\n" + trusted)

    def argv(self, workspace: Path, prompt: str, tool_timeout: float | None) -> list[str]:
        from epistemic_agent.cli.client_setup import CODEX_HEADLESS

        words = documented(CODEX_HEADLESS.format(workspace=workspace), workspace, prompt)
        assert words[:2] == ["codex", "exec"]
        extra = ["--skip-git-repo-check"]  # the test workspaces are no git repositories
        overrides: dict[str, str] = {}
        if "PYTHONPATH" in os.environ:  # a source tree under test: Codex filters the
            overrides["env"] = _inline({"PYTHONPATH": os.environ["PYTHONPATH"]})  # servers' env
        if tool_timeout is not None:
            overrides["tool_timeout_sec"] = json.dumps(tool_timeout)
        if overrides:
            extra += self._server_overrides(workspace, overrides)
        return [str(self.binaries / "codex"), "exec", *extra, *words[2:]]

    def _server_overrides(self, workspace: Path, values: dict[str, str]) -> list[str]:
        """`-c` overrides of the server entry init wrote. They form a layer of their own,
        checked before the project's, so they repeat its command and args."""
        import tomllib

        config = tomllib.loads((workspace / ".codex" / "config.toml").read_text())
        server = config["mcp_servers"]["epistemic"]
        values = {
            "command": json.dumps(server["command"]),
            "args": json.dumps(server["args"]),
            **values,
        }
        return [
            word
            for key, value in values.items()
            for word in ("-c", f"mcp_servers.epistemic.{key}={value}")
        ]

    def env(self, home: Path, model_url: str) -> dict[str, str]:
        self.provider(home, model_url)
        env = base_env(home)
        env.update(CODEX_HOME=str(self.home(home)), SCRIPTED_API_KEY="not-a-key")
        return env


def _inline(table: dict[str, str]) -> str:
    return "{" + ", ".join(f"{key} = {json.dumps(value)}" for key, value in table.items()) + "}"
