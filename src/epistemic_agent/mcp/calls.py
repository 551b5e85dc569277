"""`tools/call` served by the front, without the SDK: each call runs in a thread of its own
(commands and approvals block), one at a time through the gatekeeper, with the SDK's
replies, progress notifications and cancellation:

- the result is `{"content": [{"text": ..., "type": "text"}], "isError": ...}`, an exception
  the code 0 error with its message (and its traceback on stderr), as the SDK sends them;
- a client that gave a `progressToken` gets a progress notification every
  `progress_every` seconds while the call waits or runs (`notifications/progress`);
- a call the client cancels (`notifications/cancelled`) is withdrawn or stopped, and never
  answered;
- when the connection ends (the end of input, a signal) each call still running is
  answered with the SDK's `Connection closed` error, then withdrawn or stopped.

Calls that come before the policy is loaded and checked wait for it (`start`).
"""

from __future__ import annotations

import json
import sys
import threading
from typing import TYPE_CHECKING

from ..core import Cancel
from .handshake import PROGRESS_EVERY
from .wire import CONNECTION_CLOSED

if TYPE_CHECKING:
    from typing import Any

    from .server import Gatekeeper
    from .wire import Out


class Call:
    """One `tools/call` request: its id, tool, arguments and progress token."""

    def __init__(self, ident: object, params: dict[str, Any], token: object) -> None:
        self.ident = ident
        self.name: str = params["name"]
        arguments = params.get("arguments")
        self.arguments: dict[str, Any] = arguments if arguments is not None else {}
        self.token = token
        self.cancel = Cancel()
        self.done = threading.Event()  # answered, or no longer to be answered
        self.started = False


class Calls:
    """The calls in flight, by request id, and the ones waiting for the policy."""

    def __init__(self, out: Out, client: dict[str, Any]) -> None:
        self.out = out
        self.client = client  # the `initialize` the front answered names it
        self.keeper: Gatekeeper | None = None
        self.flight: dict[object, Call] = {}
        self.ended = False

    def start(self, keeper: Gatekeeper) -> None:
        """The policy is loaded and checked: run what waited for it, and what comes next."""
        with self.out.lock:
            self.keeper = keeper
            waiting = [call for call in self.flight.values() if not call.started]
        for call in waiting:
            self._launch(call)

    def submit(self, ident: object, params: dict[str, Any], token: object) -> None:
        call = Call(ident, params, token)
        with self.out.lock:
            if self.ended:
                call.cancel.close()
                return
            self.flight[_key(ident)] = call
            ready = self.keeper is not None
        if ready:
            self._launch(call)

    def _launch(self, call: Call) -> None:
        call.started = True
        threading.Thread(target=self._run, args=(call,), name="mcp-call", daemon=True).start()
        if call.token is not None:
            threading.Thread(target=self._beat, args=(call,), name="mcp-beat", daemon=True).start()

    def _run(self, call: Call) -> None:
        keeper = self.keeper
        assert keeper is not None
        try:
            text, failed = keeper.call(call.name, call.arguments, self.client, call.cancel)
            reply: dict[str, Any] = {
                "jsonrpc": "2.0",
                "id": call.ident,
                "result": {"content": [{"text": text, "type": "text"}], "isError": failed},
            }
        except Exception as error:  # the SDK's answer to a handler that raised
            import traceback  # only for what should never happen

            print("handler for 'tools/call' raised", file=sys.stderr)
            traceback.print_exc()
            reply = {
                "jsonrpc": "2.0",
                "id": call.ident,
                "error": {"code": 0, "message": str(error)},
            }
        with self.out.lock:
            if not call.done.is_set():
                call.done.set()
                self.out.send(reply)
            if self.flight.get(_key(call.ident)) is call:
                del self.flight[_key(call.ident)]

    def _beat(self, call: Call) -> None:
        keeper = self.keeper
        every = keeper.progress_every if keeper is not None else PROGRESS_EVERY
        beats = 0
        while not call.done.wait(every):
            beats += 1
            message = f"still working after {beats * every:g} s (an approval, or a command)"
            params = {"progressToken": call.token, "progress": beats, "message": message}
            with self.out.lock:
                if call.done.is_set():
                    return
                self.out.send(
                    {"jsonrpc": "2.0", "method": "notifications/progress", "params": params}
                )

    def cancelled(self, params: object) -> None:
        """`notifications/cancelled`: the client gave up on a call; it is never answered."""
        ident = params.get("requestId") if isinstance(params, dict) else None
        if not plain_id(ident):
            return
        with self.out.lock:
            call = self.flight.get(_key(ident))
            if call is None or call.done.is_set():
                return
            call.done.set()
            if not call.started:  # it waited for the policy: it never runs
                del self.flight[_key(ident)]
        if call.started:
            call.cancel.set(*self._gone())
        else:
            call.cancel.close()

    def watch(self, line: bytes) -> None:
        """A line the SDK reads, once it serves: a call the front runs is still the front's
        to cancel."""
        if b"notifications/cancelled" not in line:
            return
        try:
            message = json.loads(line)
        except (ValueError, RecursionError):
            return
        if isinstance(message, dict) and message.get("method") == "notifications/cancelled":
            self.cancelled(message.get("params"))

    def end(self) -> None:
        """The connection ended: answer what runs with the SDK's `Connection closed`, then
        withdraw or stop it (the gatekeeper's close waits for it)."""
        with self.out.lock:
            self.ended = True
            cut = [call for call in self.flight.values() if not call.done.is_set()]
            for call in cut:
                call.done.set()
                self.out.error(call.ident, CONNECTION_CLOSED, "Connection closed")
        for call in cut:
            if call.started:
                call.cancel.set(*self._gone())
            else:
                call.cancel.close()

    def _gone(self) -> tuple[str, str]:
        keeper = self.keeper
        assert keeper is not None
        return keeper.gone(self.client.get("name"))


def plain_id(value: object) -> bool:
    """A JSON-RPC id the front may answer: a string or an integer (not a bool, a float, null
    or a structure, which the SDK rejects in its own words)."""
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _key(ident: object) -> object:
    """Ids 7 and "7" are one request, as the SDK correlates them."""
    if isinstance(ident, str):
        try:
            return int(ident)
        except ValueError:
            return ident
    return ident
