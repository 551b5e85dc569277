"""The MCP connection, served before and mostly without the SDK.

Importing the `mcp` SDK costs about a second of CPU here, and some clients give a server about
that long to start before they begin without its tools. So the front reads the client's
messages itself, and answers the handshake (`initialize`, `tools/list`) at once, while the
policy is still loading. Once it has answered `initialize`, it also serves what a session is
made of: `tools/call` (calls.py; those that come before the policy is loaded and checked wait
for it), `ping`, `notifications/initialized` and `notifications/cancelled`, each with the
SDK's own reply (tests/mcp/test_mcp_front.py compares them).

Anything else (a method the front does not serve, a malformed message, a client that speaks
the newer era without `initialize`) goes to the SDK: it is loaded then, and handed the stream
from the `initialize` the front answered (its reply to it is dropped: the front's is on the
wire) and the messages it did not serve, then reads the rest of the connection itself.
Before `initialize`, what the front does not answer waits for it (Claude Code probes the
newer era with `server/discover`, then falls back to `initialize`): answered then as the SDK
would answer it after `initialize`, or, if the SDK is ready first, by the SDK.
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING

from .calls import Calls, plain_id
from .handshake import client_of, handshake_answers
from .streams import Replay, Wire
from .wire import INVALID_REQUEST

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from .stop import Stop
    from .wire import Out

LINE_CAP = 4 << 20  # a longer message is left to the SDK to refuse
ENVELOPE = "io.modelcontextprotocol/protocolVersion"  # the 2026-07-28 era's per-request key
#: The SDK's answer, after `initialize`, to a request carrying the newer era's envelope.
ERA_REFUSAL = (
    "this connection serves the handshake protocol era; "
    "requests carrying the 2026-07-28 envelope are not accepted on it"
)
_SERVED = object()  # a tools/call of a shape the SDK would not refuse


class Front:
    """Reads the client's messages from `infd` and answers what it can on `out`."""

    def __init__(self, infd: int, out: Out) -> None:
        self.infd, self.out = infd, out
        self.answers = handshake_answers()
        self.calls: Calls | None = None  # made when `initialize` names the client
        self.opening: bytes | None = None  # the `initialize` the front answered
        self.opening_id: object = None
        self.held: list[bytes] = []  # before `initialize`: lines that wait for it
        self.kept: list[bytes] = []  # lines the SDK reads after `initialize` if it takes over
        self.needs_sdk = False  # a line came that only the SDK answers: it serves from there
        self.ended = False  # the client closed its end
        self._rest = b""  # the start of a line not yet ended

    def take(self) -> None:
        """Read what the client sent (the input is readable) and answer what the front can."""
        chunk = os.read(self.infd, 1 << 16)
        lines = (self._rest + chunk).split(b"\n")
        self._rest = lines.pop() if chunk else b""  # at the end, the last line even unended
        self.ended = not chunk
        for line in lines:
            self._line(line)

    def _line(self, line: bytes) -> None:
        if self.needs_sdk:
            self.kept.append(line)
            return
        if not line.strip():  # the SDK answers nothing to an empty line either
            return
        message = _parsed(line)
        if self.opening is None:
            self._before(line, message)
        else:
            self._after(line, message)

    def _before(self, line: bytes, message: dict[str, Any] | None) -> None:
        """Before `initialize`: the handshake is answered, anything else waits for it."""
        method = (
            message.get("method") if message is not None and plain_id(message.get("id")) else None
        )
        if message is None or method not in self.answers:
            self.held.append(line)
            return
        self._answer(message)
        if method == "initialize":
            self.opening, self.opening_id = line, message["id"]
            self.calls = Calls(self.out, client_of(message.get("params")))
            held, self.held = self.held, []
            for waited in held:
                self._line(waited)

    def _after(self, line: bytes, message: dict[str, Any] | None) -> None:
        """After `initialize`: what a session is made of is served here, the rest by the SDK."""
        assert self.calls is not None
        method = message.get("method") if message is not None else None
        if message is None or message.get("jsonrpc") != "2.0" or not isinstance(method, str):
            self._to_sdk(line)
        elif "id" not in message:  # a notification: the SDK ignores those it has no use for
            if method == "notifications/cancelled":
                self.calls.cancelled(message.get("params"))
            elif method == "notifications/initialized":
                self.kept.append(line)  # the SDK notes it
        elif not plain_id(message["id"]) or not isinstance(message.get("params", {}), dict):
            self._to_sdk(line)
        elif _enveloped(message.get("params")):
            self.out.error(message["id"], INVALID_REQUEST, ERA_REFUSAL)
        elif method == "ping":
            self.out.result(message["id"], {})
        elif method == "tools/list":
            self._answer(message)
        elif method == "tools/call" and (token := _call_token(message.get("params"))) is not None:
            self.calls.submit(message["id"], message["params"], _unwrap(token))
        else:
            self._to_sdk(line)

    def _answer(self, message: dict[str, Any]) -> None:
        self.out.result(message["id"], self.answers[message["method"]](message.get("params")))

    def _to_sdk(self, line: bytes) -> None:
        self.needs_sdk = True
        self.kept.append(line)

    def reader(self, on_end: Callable[[], None] | None = None, stop: Stop | None = None) -> Replay:
        """The input for the SDK: the `initialize` the front answered, the lines it did not
        serve, then the rest of the input. `on_end` is called when the client closes its end."""
        head = [self.opening] if self.opening is not None else []
        lines = b"".join(line + b"\n" for line in [*head, *self.held, *self.kept]) + self._rest
        watch = self.calls.watch if self.calls is not None else None
        return Replay(lines, self.infd, self.ended, on_end, stop, watch)

    def writer(self) -> Wire:
        """The wire for the SDK, without its reply to the `initialize` the front answered."""
        return Wire(self.out, {self.opening_id} if self.opening is not None else set())


def _parsed(line: bytes) -> dict[str, Any] | None:
    if len(line) > LINE_CAP:
        return None
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):
        return None
    return message if isinstance(message, dict) else None


def _enveloped(params: object) -> bool:
    meta = params.get("_meta") if isinstance(params, dict) else None
    return isinstance(meta, dict) and ENVELOPE in meta


def _call_token(params: object) -> object:
    """For a `tools/call` the SDK would take as it is: its progress token, `_SERVED` when it
    has none; None for any other shape (the SDK answers it)."""
    if not isinstance(params, dict) or not isinstance(params.get("name"), str):
        return None
    if not set(params) <= {"name", "arguments", "_meta"}:
        return None
    if not isinstance(params.get("arguments", {}), dict | None):
        return None
    meta = params.get("_meta", {})
    if not isinstance(meta, dict):
        return None
    if "progressToken" not in meta:
        return _SERVED
    token = meta["progressToken"]
    return token if plain_id(token) else None


def _unwrap(token: object) -> object:
    return None if token is _SERVED else token
