"""A program under a pseudo-terminal, as a person at a terminal would run it: keys go in, the
raw output is kept, and a terminal emulator (pyte) shows what the screen holds."""

from __future__ import annotations

import fcntl
import os
import pty
import select
import signal
import struct
import subprocess
import termios
import threading
import time
from collections.abc import Callable, Sequence

import pyte

UP, DOWN, LEFT, RIGHT = "\x1b[A", "\x1b[B", "\x1b[D", "\x1b[C"
CTRL_A, CTRL_C, CTRL_D, CTRL_E = "\x01", "\x03", "\x04", "\x05"
ENTER = "\r"


class Terminal:
    """`argv` under a pty of `columns` x `rows`; the output is read by a thread."""

    def __init__(
        self,
        argv: Sequence[str],
        env: dict[str, str],
        cwd: str | None = None,
        columns: int = 100,
        rows: int = 40,
    ) -> None:
        self.columns, self.rows = columns, rows
        master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
        self.process = subprocess.Popen(
            list(argv),
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env={**env, "TERM": "xterm-256color", "COLUMNS": str(columns), "LINES": str(rows)},
            cwd=cwd,
            start_new_session=True,
            preexec_fn=lambda: fcntl.ioctl(0, termios.TIOCSCTTY, 0),
        )
        os.close(slave)
        self.master = master
        self.raw = b""
        self._lock = threading.Lock()
        self.screen = pyte.HistoryScreen(columns, rows, history=5000)
        self.stream = pyte.ByteStream(self.screen)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while True:
            try:
                ready, _, _ = select.select([self.master], [], [], 0.1)
                if not ready:
                    if self.process.poll() is not None:
                        ready, _, _ = select.select([self.master], [], [], 0)
                        if not ready:
                            return
                    continue
                data = os.read(self.master, 65536)
            except OSError:
                return
            if not data:
                return
            with self._lock:
                self.raw += data
                self.stream.feed(data)

    def send(self, keys: str) -> None:
        os.write(self.master, keys.encode())

    def text(self) -> str:
        """Everything printed so far, escape sequences included, as text."""
        with self._lock:
            return self.raw.decode("utf-8", "replace")

    def display(self) -> list[str]:
        """The screen's lines now (and those scrolled off above it), trailing blanks cut."""
        with self._lock:
            above = [
                "".join(line[x].data for x in range(self.columns))
                for line in self.screen.history.top
            ]
            return [line.rstrip() for line in above + list(self.screen.display)]

    def last_line(self) -> str:
        """The last line on the screen that is not blank."""
        return next((line for line in reversed(self.display()) if line.strip()), "")

    def wait_for(
        self, found: Callable[[], bool] | str, timeout: float = 20, what: str = ""
    ) -> None:
        check: Callable[[], bool] = (
            (lambda: found in self.text()) if isinstance(found, str) else found
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if check():
                return
            time.sleep(0.05)
        shown = "\n".join(self.display()[-30:])
        raise AssertionError(f"timed out waiting for {what or found!r}; the screen:\n{shown}")

    def wait_screen(self, needle: str, timeout: float = 20) -> None:
        self.wait_for(lambda: any(needle in line for line in self.display()), timeout, needle)

    def close(self, timeout: float = 20) -> int:
        try:
            code = self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            code = self.process.wait()
        self._reader.join(timeout=5)
        os.close(self.master)
        return code


def read_until(fd: int, marker: bytes, seen: bytearray, timeout: float = 30) -> None:
    """Read from the terminal `fd` into `seen` until `marker` is there; fail after `timeout`
    seconds, or if the terminal closes first."""
    deadline = time.monotonic() + timeout
    while marker not in seen:
        ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            raise AssertionError(f"no {marker!r} in {bytes(seen)!r}")
        try:
            seen += os.read(fd, 4096)
        except OSError:
            raise AssertionError(
                f"the terminal closed before {marker!r}: {bytes(seen)!r}"
            ) from None


def answer_prompt(
    argv: Sequence[str],
    cwd: str,
    answer: bytes,
    comment: bytes,
    env: dict[str, str] | None = None,
    then: Callable[[Callable[[bytes], None]], None] | None = None,
) -> tuple[int, bytes]:
    """Run `argv` at a bare terminal (a pty, no emulator): type `answer` at its "[y/n]" prompt
    and `comment` at the "comment" one; then `then(wait_for)`, if given, where `wait_for(text)`
    reads on until the terminal shows `text`; return its exit status and all it printed."""
    master, slave = pty.openpty()
    process = subprocess.Popen(
        list(argv),
        cwd=cwd,
        stdin=slave,
        stdout=slave,
        stderr=slave,
        start_new_session=True,
        env=env,
    )
    os.close(slave)
    seen = bytearray()
    try:
        read_until(master, b"[y/n]", seen)
        os.write(master, answer)
        read_until(master, b"comment", seen)
        os.write(master, comment)
        if then is not None:
            then(lambda text: read_until(master, text, seen))
        process.wait(timeout=60)
        while select.select([master], [], [], 0.2)[0]:
            try:
                seen += os.read(master, 4096)
            except OSError:
                break
    finally:
        os.close(master)
        if process.poll() is None:
            process.kill()
    return process.returncode, bytes(seen)
