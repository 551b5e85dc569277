"""A scripted model on 127.0.0.1 for the real agent clients (stdlib only).

It speaks what the clients speak, with the builders of tests/wire.py: Anthropic Messages with
SSE streaming (Claude Code) and the OpenAI Responses API with SSE streaming (Codex). A *turn*
request (one that offers tools) gets the next scripted step; when the script is over it gets a
final text, which ends the client's turn. Requests without tools (Claude Code's titles and
checks) get a short text. Every request is kept, so a test can read what the client sent back
after each call: the tool results the model saw.
"""

from __future__ import annotations

import contextlib
import json
import re
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from fakeserver import LocalServer
from wire import AnthropicWire, ResponsesWire

SERVER = "epistemic"
TOKENS = (120, 12, 0)
FINAL = "The scripted session is over."


@dataclass(frozen=True)
class Call:
    """One tool call. `tool` is an epistemic tool unless `builtin`: then the client's own tool
    name, sent as it is (Claude Code's `Bash`, Codex's `exec_command`); `freeform` sends `args`
    (a string) as a Responses custom tool call (Codex's `apply_patch`)."""

    tool: str
    args: Any
    builtin: bool = False
    freeform: bool = False


@dataclass
class Step:
    calls: list[Call] = field(default_factory=list)
    text: str | None = None


@dataclass
class Result:
    """A tool result as the client sent it back to the model."""

    text: str
    is_error: bool | None  # None: the wire has no such flag (Responses)


class ModelServer(LocalServer):
    """`with ModelServer("anthropic", steps) as model:`; `model.url` is the base URL."""

    def __init__(self, wire: str, steps: list[Step]) -> None:
        assert wire in ("anthropic", "responses")
        self.wire = wire
        self.steps = list(steps)
        self.turns: list[dict[str, Any]] = []  # the bodies of turn requests, in order
        self.side: list[tuple[str, str]] = []  # (method, path) of every other request
        self.ids: list[list[str]] = []  # the call ids sent in each turn's answer
        self.lock = threading.Lock()
        super().__init__(self._handler())

    def answer(self, method: str, path: str, body: bytes) -> tuple[bytes, str]:
        """The bytes to send back and their content type."""
        request: Any = json.loads(body) if body else {}
        if method != "POST" or not isinstance(request, dict):
            self.side.append((method, path))
            return b'{"object": "list", "data": []}', "application/json"
        if path.split("?")[0].endswith("/count_tokens"):
            self.side.append((method, path))
            return b'{"input_tokens": 120}', "application/json"
        if not request.get("tools"):
            self.side.append((method, path))
            return self._render(Step(text="OK"), count=False), "text/event-stream"
        with self.lock:
            self.turns.append(request)
            step = self.steps.pop(0) if self.steps else Step(text=FINAL)
            return self._render(step), "text/event-stream"

    def _render(self, step: Step, count: bool = True) -> bytes:
        number = len(self.turns)
        ids = [f"call_{number}_{n}" for n in range(len(step.calls))]
        if count:
            self.ids.append(ids)
        if self.wire == "anthropic":
            calls: list[tuple[str | None, str, Any]] = [
                (i, c.tool if c.builtin else f"mcp__{SERVER}__{c.tool}", c.args)
                for i, c in zip(ids, step.calls, strict=True)
            ]
            data, _ = AnthropicWire(True).response(step.text, calls, TOKENS)
            return bytes(data)
        return self._responses(step, ids)

    def _responses(self, step: Step, ids: list[str]) -> bytes:
        wire = ResponsesWire(True)
        body, _ = ResponsesWire(False).response(step.text, [], TOKENS)
        for n, (call_id, call) in enumerate(zip(ids, step.calls, strict=True)):
            item: dict[str, Any]
            if call.freeform:
                item = {"type": "custom_tool_call", "id": f"ctc_{n}", "call_id": call_id}
                item.update(name=call.tool, input=call.args, status="completed")
            else:
                item = {"type": "function_call", "id": f"fc_{n}", "call_id": call_id}
                item["name"] = call.tool
                if not call.builtin:  # Codex offers an MCP server's tools as a namespace
                    item["namespace"] = f"mcp__{SERVER}"
                item.update(arguments=json.dumps(call.args), status="completed")
            body["output"].append(item)
        return wire.events(body)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _serve(self) -> None:
                size = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(size) if size else b""
                try:
                    data, kind = server.answer(self.command, self.path, body)
                except Exception as error:  # a test's own bug: say so to the client
                    data, kind = json.dumps({"error": {"message": repr(error)}}).encode(), ""
                    self.send_response(500)
                else:
                    self.send_response(200)
                self.send_header("Content-Type", kind or "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self.wfile.write(data)  # the client gave up

            do_GET = do_POST = do_HEAD = _serve

        return Handler

    # What the client sent: the tools it offered and the results of the calls.

    def results(self) -> dict[str, Result]:
        """Every tool result the client sent back, by call id."""
        out: dict[str, Result] = {}
        for body in self.turns:
            if self.wire == "anthropic":
                for message in body.get("messages", []):
                    for block in _blocks(message):
                        if block.get("type") == "tool_result":
                            text = _text(block.get("content"))
                            out[block["tool_use_id"]] = Result(text, bool(block.get("is_error")))
            else:
                for item in body.get("input", []):
                    if item.get("type") in ("function_call_output", "custom_tool_call_output"):
                        out[item["call_id"]] = Result(_text(item.get("output")), None)
        return out

    def result(self, turn: int, index: int = 0) -> Result:
        """The result of call INDEX of the answer to turn TURN (0-based)."""
        call_id = self.ids[turn][index]
        found = self.results()
        assert call_id in found, f"the client never sent back a result for {call_id}"
        return found[call_id]

    def offered(self, turn: int = 0) -> list[str]:
        """The tools offered in a turn: Claude Code's deferred ones too; Codex's namespaced
        tools as `namespace.name`."""
        body = self.turns[turn]
        names: list[str] = []
        for tool in body.get("tools", []):
            if tool.get("type") == "namespace":
                names += [f"{tool['name']}.{inner['name']}" for inner in tool.get("tools", [])]
            else:
                names.append(str(tool.get("name") or tool.get("type")))
        if self.wire == "anthropic":
            names += deferred(json.dumps(body.get("messages", [])))
        return names


def deferred(messages: str) -> list[str]:
    """The tools Claude Code lists as deferred (loaded on demand through ToolSearch)."""
    found = re.search(r"to load tool schemas before calling them:((?:\\n[A-Za-z0-9_]+)+)", messages)
    return found.group(1).split("\\n")[1:] if found else []


def _blocks(message: Any) -> list[Any]:
    content = message.get("content") if isinstance(message, dict) else None
    return content if isinstance(content, list) else []


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""
