"""Cancelling a call from another thread: an MCP client's `notifications/cancelled`, a client
that went away. Waits that honour it (an approval, a running command) poll its descriptor
beside their own, so a cancel is seen at once, not at the next tick."""

from __future__ import annotations

import os
import threading


class Cancel:
    """Set once, from any thread, with who cancelled and why; `fileno()` becomes readable."""

    def __init__(self) -> None:
        self._read, self._write = os.pipe2(os.O_CLOEXEC | os.O_NONBLOCK)
        self._lock = threading.Lock()
        self.by: str | None = None
        self.why = ""

    def set(self, by: str | None, why: str) -> None:
        with self._lock:
            if self.by is not None or self.why:
                return
            self.by, self.why = by, why
            if self._write >= 0:
                os.write(self._write, b"x")

    def is_set(self) -> bool:
        return bool(self.why)

    def fileno(self) -> int:
        return self._read

    def close(self) -> None:
        with self._lock:
            for fd in (self._read, self._write):
                if fd >= 0:
                    os.close(fd)
            self._read = self._write = -1

    def describe(self) -> str:
        """`cancelled by NAME: why` for the record and the model."""
        who = f" by {self.by}" if self.by else ""
        return f"cancelled{who}: {self.why}" if self.why else f"cancelled{who}"
