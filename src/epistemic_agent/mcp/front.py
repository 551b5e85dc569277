"""The MCP handshake, answered before the SDK has loaded.

Importing the `mcp` SDK costs about a second here, and some clients give a server about that
long to start before they begin without its tools. So `epistemic mcp` starts loading the SDK
in a thread at once, and meanwhile this front reads the client's first messages itself: it
answers `initialize` and `tools/list` with exactly what the SDK's server would say (the tests
compare the two), and keeps every byte it read. When the SDK is ready, it is handed the same
stream from the start (the front's replies to those requests are already on the wire, so the
SDK's own replies to the same ids are dropped) and serves the rest of the connection.

Only messages that arrive before the SDK is ready are answered here; anything the front does
not recognise simply waits for the SDK. The `initialize` the front answered is handed to the SDK
first, so that the SDK serves the protocol era the client was answered in.
"""

from __future__ import annotations

import json
import os
import select
import signal
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

#: The protocol revisions the SDK (mcp 2.3) negotiates through `initialize`, oldest first;
#: tests/mcp/test_mcp_front.py checks them against `mcp_types.version`.
HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
POLL = 0.02  # seconds between looks at whether the SDK is ready
LINE_CAP = 4 << 20  # a first message longer than this is left to the SDK to refuse


def negotiated(requested: object) -> str:
    """The version the server answers with: the client's, when it is one it speaks."""
    if isinstance(requested, str) and requested in HANDSHAKE_VERSIONS:
        return requested
    return HANDSHAKE_VERSIONS[-1]


class Front:
    """Reads and answers the handshake on `infd` until `ready` is set (or input ends)."""

    def __init__(
        self,
        infd: int,
        wire: int,
        answers: dict[str, Callable[[Any], Any]],
        stop: Stop | None = None,
    ) -> None:
        self.infd, self.wire, self.answers, self.stop = infd, wire, answers, stop
        self.read = b""  # everything read so far: the SDK is given it from the start
        self.answered: set[object] = set()  # request ids whose replies are on the wire
        self.opening: bytes | None = None  # the `initialize` line the front answered
        self.ended = False
        self._consumed = 0

    def until(self, ready: threading.Event) -> None:
        watched = [self.infd] if self.stop is None else [self.infd, self.stop.fileno()]
        while not ready.is_set() and not self.ended:
            chosen, _, _ = select.select(watched, [], [], POLL)
            if self.stop is not None and self.stop.fired():
                self.ended = True
            elif self.infd in chosen:
                self._take(os.read(self.infd, 1 << 16))

    def _take(self, chunk: bytes) -> None:
        if not chunk:
            self.ended = True
            return
        self.read += chunk
        while (end := self.read.find(b"\n", self._consumed)) != -1:
            line = self.read[self._consumed : end]
            self._consumed = end + 1
            self._answer(line)

    def _answer(self, line: bytes) -> None:
        if len(line) > LINE_CAP:
            return
        try:
            message = json.loads(line)
        except (ValueError, RecursionError):
            return
        if not isinstance(message, dict) or not _plain_id(message.get("id")):
            return  # the SDK answers the rest, malformed ids included
        answer = self.answers.get(str(message.get("method")))
        if answer is None or message["id"] in self.answered:
            return
        result = answer(message.get("params"))
        self.answered.add(message["id"])
        if message.get("method") == "initialize" and self.opening is None:
            self.opening = line + b"\n"
        reply = {"jsonrpc": "2.0", "id": message["id"], "result": result}
        _write_all(self.wire, (json.dumps(reply, ensure_ascii=False) + "\n").encode("utf-8"))

    def reader(self, on_end: Callable[[], None] | None = None) -> Replay:
        """The whole input stream, from its first byte, for the SDK; `on_end` is called when
        the client closes its end."""
        return Replay(self._replayed(), self.infd, self.ended, on_end, self.stop)

    def _replayed(self) -> bytes:
        """What the front read, with the `initialize` it answered first. The SDK's first
        request decides the protocol era it serves; a client that probed the newer era first
        (`server/discover`, as Claude Code does) and then fell back to `initialize`, which the
        front answered, is in the handshake era, and the SDK must be too (it then refuses the
        late probe, whose reply the client no longer waits for)."""
        if self.opening is None:
            return self.read
        at = self.read.find(self.opening)
        head = self.read[:at] + self.read[at + len(self.opening) :]
        return self.opening + head

    def writer(self) -> Wire:
        """The wire for the SDK, without its replies to what the front answered."""
        return Wire(self.wire, self.answered)


def _plain_id(value: object) -> bool:
    """A JSON-RPC id the front may answer: a string or an integer (not a bool, a float,
    null or a structure, which the SDK rejects in its own words)."""
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


class Replay:
    """Lines of text: first those the front read, then the rest of the input (a minimal
    text file for `anyio.wrap_file`). After a `stop` signal the input ends at once: what the
    client sent and the server has not read yet is not served."""

    def __init__(
        self,
        head: bytes,
        fd: int,
        ended: bool,
        on_end: Callable[[], None] | None = None,
        stop: Stop | None = None,
    ) -> None:
        self._buffer, self._fd, self._ended, self._on_end = head, fd, ended, on_end
        self._stop = stop
        if ended and on_end is not None:
            on_end()

    def readline(self, size: int | None = -1) -> str:
        while b"\n" not in self._buffer and not self._ended and not self._stopped():
            if self._stop is not None:  # wait for input or a signal, whichever comes first
                select.select([self._fd, self._stop.fileno()], [], [])
                if self._stopped():
                    break
            chunk = os.read(self._fd, 1 << 16)
            self._ended = not chunk
            self._buffer += chunk
            if self._ended and self._on_end is not None:
                self._on_end()  # before the SDK hears of it: the client went away
        if self._stopped():
            return ""
        line, sep, rest = self._buffer.partition(b"\n")
        self._buffer = rest
        return (line + sep).decode("utf-8", "replace")

    def _stopped(self) -> bool:
        if self._stop is None or not self._stop.fired():
            return False
        if not self._ended and self._on_end is not None:
            self._on_end()
        self._ended = True
        return True

    def __iter__(self) -> Replay:
        return self

    def __next__(self) -> str:
        line = self.readline()
        if not line:
            raise StopIteration
        return line


class Wire:
    """What the SDK writes, to the client, less the replies the front already sent (a
    minimal text file for `anyio.wrap_file`)."""

    def __init__(self, fd: int, answered: set[object]) -> None:
        self._fd, self._answered, self._pending = fd, answered, ""

    def write(self, text: str) -> int:
        self._pending += text
        while "\n" in self._pending:
            line, _, self._pending = self._pending.partition("\n")
            if not self._already_answered(line):
                _write_all(self._fd, (line + "\n").encode("utf-8"))
        return len(text)

    def flush(self) -> None:
        return None

    def _already_answered(self, line: str) -> bool:
        if not self._answered:
            return False
        try:
            message = json.loads(line)
        except ValueError:
            return False
        if not isinstance(message, dict) or "method" in message or "id" not in message:
            return False
        if message["id"] in self._answered:
            self._answered.discard(message["id"])
            return True
        return False


class Stop:
    """SIGINT, SIGTERM and SIGHUP end the server's input at once. A client ends its server
    with them (Claude Code sends SIGINT, then SIGTERM; Codex SIGTERM), and the kernel may
    deliver a signal to any thread, while the main thread sleeps in the event loop: so the
    interpreter's own handler writes the signal's number to a pipe (`signal.set_wakeup_fd`)
    that every read of the input also waits on. The Python handler only notes the signal, so
    a second one while the session closes interrupts nothing."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

    def __init__(self) -> None:
        self._read, self._write = os.pipe2(os.O_CLOEXEC | os.O_NONBLOCK)
        self.signal: int | None = None

    def install(self) -> None:
        """Take the signals (from the main thread)."""
        for number in self.SIGNALS:
            signal.signal(number, self._note)
        signal.set_wakeup_fd(self._write, warn_on_full_buffer=False)

    def ignore(self) -> None:
        """The session is closed: later signals only end what is ending anyway (a default
        handler, restored as the interpreter shuts down, would make the exit status a kill)."""
        for number in self.SIGNALS:
            signal.signal(number, signal.SIG_IGN)

    def _note(self, number: int, frame: object) -> None:
        if self.signal is None:
            self.signal = number

    def fileno(self) -> int:
        return self._read

    def fired(self) -> bool:
        """Whether one of the signals came (from any thread)."""
        if self.signal is None:
            try:
                written = os.read(self._read, 64)
            except BlockingIOError:
                written = b""
            came = [number for number in written if number in self.SIGNALS]
            if came:
                self.signal = came[0]
        return self.signal is not None

    @property
    def name(self) -> str:
        return signal.Signals(self.signal).name if self.signal is not None else ""


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def divert_stdout() -> int:
    """Keep the real stdout for protocol messages (returned), and point fd 1 at stderr, so a
    stray print can never corrupt the wire."""
    wire = os.dup(1)
    os.set_inheritable(wire, False)
    os.dup2(2, 1)
    return wire
