"""The connection as the SDK reads and writes it, once it takes over from the front
(front.py): minimal text files for `anyio.wrap_file`."""

from __future__ import annotations

import json
import os
import select
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

    from .stop import Stop
    from .wire import Out


class Replay:
    """Lines of text: first `head`, then the rest of the input (a minimal text file for
    `anyio.wrap_file`). After a `stop` signal the input ends at once: what the client sent
    and the server has not read yet is not served. `watch` sees each line the SDK is given."""

    def __init__(
        self,
        head: bytes,
        fd: int,
        ended: bool,
        on_end: Callable[[], None] | None = None,
        stop: Stop | None = None,
        watch: Callable[[bytes], None] | None = None,
    ) -> None:
        self._buffer, self._fd, self._ended, self._on_end = head, fd, ended, on_end
        self._stop, self._watch = stop, watch
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
        if self._watch is not None:
            self._watch(line)
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
    """What the SDK writes, to the client, less its replies to what the front answered (a
    minimal text file for `anyio.wrap_file`)."""

    def __init__(self, out: Out, answered: set[object]) -> None:
        self._out, self._answered, self._pending = out, answered, ""

    def write(self, text: str) -> int:
        self._pending += text
        while "\n" in self._pending:
            line, _, self._pending = self._pending.partition("\n")
            if not self._already_answered(line):
                self._out.line((line + "\n").encode("utf-8"))
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
