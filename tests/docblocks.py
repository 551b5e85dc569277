"""The docs' code blocks, and a scratch workspace that runs their commands as written
(tests/project/test_runnable_docs.py).

The convention: a fenced block is run when the line just before its opening fence is
`<!-- runnable -->`, an HTML comment that GitHub shows as nothing. Each line of the block is
one command (a line ending in a backslash goes on to the next; comment lines are left out),
run with `sh -c` in the scratch repository, and must exit 0. Only the docs' placeholders are
replaced (`substituted`); nothing else in a command changes.

Imported as `from docblocks import ...`; pytest puts tests/ on the path (pyproject's
`pythonpath`).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

from agentclients import base_env
from fakeserver import LocalServer
from sshkeys import new_key
from wire import AnthropicWire, OpenAIWire, ResponsesWire

MARKER = "<!-- runnable -->"
FENCE = re.compile(r"^(\s*)```(\S*)\s*$")
VENV_BIN = Path(sys.executable).parent
KEY = "sk-test-not-a-key"
SIGNER = "alice@example.com"  # the comment of the scratch HOME's ~/.ssh/id_ed25519
TASK = "List the files, then stop."
ANSWER = "Nothing needed changing."
#: The scratch repository: a function the README's tour looks for, a README it reads.
REPO_FILES = {
    "README.md": "# Orders\n\nReads this week's orders and totals them.\n",
    "src/orders.py": 'def parse(line):\n    return line.rstrip("\\n").split(",")\n',
    "tests/test_dates.py": "def test_today():\n    assert True\n",
}


@dataclass(frozen=True)
class Block:
    """One fenced block of a doc."""

    doc: str  # the file, relative to the repository
    line: int  # the opening fence's line number
    section: str  # the last `#` heading above it
    lang: str
    text: str
    marked: bool

    @property
    def where(self) -> str:
        return f"{self.doc}:{self.line} ({self.section})"

    def commands(self) -> list[str]:
        """One command a line; a line ending in `\\` goes on; comment lines are left out."""
        joined = re.sub(r"\\\n\s*", " ", self.text)
        lines = [line.strip() for line in joined.splitlines()]
        return [line for line in lines if line and not line.startswith("#")]


def blocks(root: Path, doc: str) -> list[Block]:
    """Every fenced block of `root / doc`, indented ones (in list items) too."""
    lines = (root / doc).read_text().splitlines()
    found: list[Block] = []
    section, start, indent, lang = "", -1, "", ""
    for number, line in enumerate(lines):
        fence = FENCE.match(line)
        if start < 0 and line.startswith("#"):
            section = line.lstrip("#").strip()
        elif start < 0 and fence:
            start, indent, lang = number, fence.group(1), fence.group(2)
        elif start >= 0 and fence and fence.group(1) == indent and not fence.group(2):
            body = [text[len(indent) :] for text in lines[start + 1 : number]]
            marked = start > 0 and lines[start - 1].strip() == MARKER
            text = "\n".join(body) + "\n"
            found.append(Block(doc, start + 1, section, lang, text, marked))
            start = -1
    return found


def substituted(command: str, repo: Path, before: str) -> str:
    """The command with the docs' placeholders filled in: `/path/to/repo`, `path/to/repo` and
    `-C repo` name the scratch repository, `"TASK"` is `TASK`, and `HASH` is the journal head
    the command before printed (`epistemic verify --expect-head HASH` after `epistemic
    verify`)."""
    where = shlex.quote(str(repo))
    command = command.replace("/path/to/repo", where).replace("path/to/repo", where)
    command = re.sub(r"(?<=-C )repo(?=\s|$)", where, command)
    command = command.replace('"TASK"', shlex.quote(TASK))
    if re.search(r"\bHASH\b", command):
        head = re.search(r"head ([0-9a-f]{64})", before)
        assert head, f"no journal head in the output before {command!r}: {before!r}"
        command = re.sub(r"\bHASH\b", head.group(1), command)
    return command


@dataclass
class Ran:
    command: str
    code: int
    stdout: str
    stderr: str
    seconds: float

    def said(self) -> str:
        return f"$ {self.command}\n(exit {self.code})\n{self.stdout[-3000:]}\n{self.stderr[-3000:]}"


Hook = Callable[["Scratch"], None]


class Scratch:
    """A throwaway place for the docs' commands under `root`: a git repository (REPO_FILES), a
    HOME with an SSH key for alice@example.com and no agent, a TMPDIR, .venv/bin (then `path`)
    first on PATH, the SDKs pointed at `model_url` with a test key. `ran` lists what ran."""

    def __init__(self, root: Path, model_url: str, path: Sequence[Path] = ()) -> None:
        self.root, self.repo, self.home = root, root / "repo", root / "home"
        self.ran: list[Ran] = []
        for name, text in REPO_FILES.items():
            (self.repo / name).parent.mkdir(parents=True, exist_ok=True)
            (self.repo / name).write_text(text)
        (self.home / ".ssh").mkdir(parents=True, mode=0o700)
        new_key(self.home / ".ssh", "id_ed25519", SIGNER)
        (root / "tmp").mkdir()
        env = base_env(self.home)  # no credentials or client settings of the machine's
        env["PATH"] = os.pathsep.join([str(VENV_BIN), *map(str, path), env["PATH"]])
        env.update(TMPDIR=str(root / "tmp"), NO_PROXY="127.0.0.1,localhost")
        env.update(OPENAI_BASE_URL=f"{model_url}/v1", ANTHROPIC_BASE_URL=model_url)
        env.update(OPENAI_API_KEY=KEY, ANTHROPIC_API_KEY=KEY, no_proxy=env["NO_PROXY"])
        self.env = env
        git = ["git", "-c", "user.name=Alice", "-c", f"user.email={SIGNER}"]
        for step in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "The orders script"]):
            subprocess.run([*git, *step], cwd=self.repo, env=env, check=True)

    def run(self, command: str, input: str | None = None, timeout: float = 180) -> Ran:
        started = time.monotonic()
        done = subprocess.run(
            ["sh", "-c", command],
            cwd=self.repo,
            env=self.env,
            input=input or "",
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        ran = Ran(command, done.returncode, done.stdout, done.stderr, time.monotonic() - started)
        self.ran.append(ran)
        return ran

    def play(
        self,
        block: Block,
        before: Mapping[str, Hook] | None = None,
        after: Mapping[str, Hook] | None = None,
        inputs: Mapping[str, str] | None = None,
    ) -> list[Ran]:
        """Run the block's commands in order; each must exit 0. A hook or an input is chosen
        by how the command starts (as written)."""
        played: list[Ran] = []
        for command in block.commands():
            if hook := _chosen(before, command):
                hook(self)
            previous = played[-1].stdout + played[-1].stderr if played else ""
            ran = self.run(substituted(command, self.repo, previous), _chosen(inputs, command))
            assert ran.code == 0, f"{block.where}: a command failed\n{ran.said()}"
            played.append(ran)
            if hook := _chosen(after, command):
                hook(self)
        return played

    def epistemic_json(self, *args: str) -> Any:
        done = self.run(shlex.join(["epistemic", *args, "--json"]))
        assert done.code == 0, done.said()
        return json.loads(done.stdout)


def _chosen(table: Mapping[str, Any] | None, command: str) -> Any:
    """The value for the first key the command starts with, if any."""
    return next((value for key, value in (table or {}).items() if command.startswith(key)), None)


class DocsModel(LocalServer):
    """A model for `epistemic run` and `repl`: every request gets a final answer (no tool
    calls) in the API it came in, OpenAI Chat Completions, OpenAI Responses or Anthropic
    Messages, streamed when the request asks. `models` lists the model each request named."""

    def __init__(self, port: int = 0) -> None:
        self.models: list[str] = []
        super().__init__(self._handler(), port)

    def answer(self, path: str, request: dict[str, Any]) -> tuple[int, bytes, str]:
        wires: dict[str, Any] = {"/chat/completions": OpenAIWire, "/responses": ResponsesWire}
        wires["/messages"] = AnthropicWire
        kind = next((w for end, w in wires.items() if path.split("?")[0].endswith(end)), None)
        if kind is None:
            return 404, b'{"error": {"message": "not a model endpoint"}}', "application/json"
        self.models.append(str(request.get("model")))
        body, headers = kind(bool(request.get("stream"))).response(ANSWER, [], (120, 12, 0))
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        return 200, data, headers.get("Content-Type", "application/json")

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                size = int(self.headers.get("Content-Length") or 0)
                request = json.loads(self.rfile.read(size) or b"{}")
                status, data, kind = server.answer(self.path, request)
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self.wfile.write(data)

        return Handler


@contextlib.contextmanager
def models_on_ports(ports: Sequence[int]) -> Iterator[list[DocsModel]]:
    """DocsModel on each fixed port a doc's command names (`--base-url
    http://localhost:11434/v1`), for one test run at a time on this machine (a lock file
    each)."""
    with contextlib.ExitStack() as stack:
        servers = []
        for port in ports:
            lock = Path(tempfile.gettempdir()) / f"epistemic-docs-port-{port}.lock"
            fcntl.flock(stack.enter_context(open(lock, "w")), fcntl.LOCK_EX)
            try:
                server = DocsModel(port)
            except OSError as error:
                raise AssertionError(
                    f"port {port} is taken ({error}): a doc's command sends its model requests "
                    "there, and the test serves them"
                ) from None
            servers.append(stack.enter_context(server))
        yield servers
