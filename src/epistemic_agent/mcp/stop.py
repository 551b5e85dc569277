"""The signals that end the server: SIGINT, SIGTERM and SIGHUP."""

from __future__ import annotations

import os
import signal


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
