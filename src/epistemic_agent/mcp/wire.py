"""The server's side of stdout: whole JSON-RPC lines, one writer at a time, encoded as the
SDK encodes them (compact, UTF-8), so that a reply reads the same whoever wrote it."""

from __future__ import annotations

import json
import os
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

CONNECTION_CLOSED = -32000  # the SDK's code for a request the end of the connection cut off
INVALID_REQUEST = -32600


class Out:
    """Lines to the client on `fd`. The front, the calls it runs and the SDK all write here,
    from their own threads: each line is written whole. Once the client has gone (its end of
    the pipe is closed), writes are dropped."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.lock = threading.RLock()  # callers hold it to keep a check and a write together
        self.gone = False

    def line(self, data: bytes) -> None:
        with self.lock:
            if self.gone:
                return
            view = memoryview(data)
            try:
                while view:
                    view = view[os.write(self.fd, view) :]
            except OSError:  # EPIPE: the client went away; its end of input follows
                self.gone = True

    def send(self, message: dict[str, Any]) -> None:
        self.line(encode(message))

    def result(self, ident: object, result: dict[str, Any]) -> None:
        self.send({"jsonrpc": "2.0", "id": ident, "result": result})

    def error(self, ident: object, code: int, message: str) -> None:
        self.send({"jsonrpc": "2.0", "id": ident, "error": {"code": code, "message": message}})


def encode(message: dict[str, Any]) -> bytes:
    """One line of JSON as the SDK writes it. Text the SDK could not encode (a lone surrogate)
    is escaped rather than lost."""
    try:
        text = json.dumps(message, ensure_ascii=False, separators=(",", ":"))
        return (text + "\n").encode("utf-8")
    except UnicodeEncodeError:
        return (json.dumps(message, separators=(",", ":")) + "\n").encode("ascii")


def divert_stdout() -> int:
    """Keep the real stdout for protocol messages (returned), and point fd 1 at stderr, so a
    stray print can never corrupt the wire."""
    wire = os.dup(1)
    os.set_inheritable(wire, False)
    os.dup2(2, 1)
    return wire
