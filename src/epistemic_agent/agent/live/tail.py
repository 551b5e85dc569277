"""The live view's running line: elapsed time and a tail of the running command's output.

The command writes its output to capture files (`Session.capture_files`); the session
process, which is not confined, reads their ends while it runs. A command that is not
confined could swap a capture file for a link to a file it may not read (a key hidden from
it): so a file is read only when it is a regular file, not a symlink (O_NOFOLLOW), with one
link, owned by this user; and what is shown is redacted as the record is.
"""

from __future__ import annotations

import os
import stat
import threading
import time
from typing import TYPE_CHECKING

from rich.console import Group
from rich.live import Live
from rich.text import Text

from .rows import INDENT, visible_line

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path
    from typing import Any

    from rich.console import Console, RenderableType

TAIL_BYTES = 4096  # read from the end of each file, per refresh
TAIL_LINES = 3  # lines of output under the running line
SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
REFRESH = 4  # redraws per second


def read_tail(path: Path, limit: int = TAIL_BYTES) -> str:
    """The end of a capture file as text ("" when it is missing, empty or not to be read)."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(path, flags)
    except OSError:
        return ""
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_nlink != 1 or info.st_uid != os.geteuid():
            return ""
        start = max(0, info.st_size - limit)
        data = os.pread(fd, limit, start)
    except OSError:
        return ""
    finally:
        os.close(fd)
    text = data.decode("utf-8", "replace")
    if start:  # the first line is cut: drop it (a secret cut in two is not matched whole)
        text = text.partition("\n")[2]
    return text


def last_lines(text: str, count: int) -> list[str]:
    """The last `count` non-blank lines, each as it would end up on the screen after
    carriage returns (a progress bar shows its last state)."""
    lines = [line.rsplit("\r", 1)[-1].rstrip() for line in text.splitlines()]
    return [line for line in lines if line.strip()][-count:]


class Tail:
    """The last lines of a running command's stdout and stderr, redacted."""

    def __init__(self, files: tuple[Path, Path], redact: Callable[[str], str]) -> None:
        self.files, self.redact = files, redact

    def lines(self, count: int = TAIL_LINES) -> list[tuple[str, str]]:
        """(stream, line) pairs, stdout's then stderr's, at most `count` in all."""
        out = last_lines(self.redact(read_tail(self.files[0])), count)
        err = last_lines(self.redact(read_tail(self.files[1])), count)
        keep_err = min(len(err), max(1, count - len(out)))
        shown = out[-(count - keep_err) :] if count > keep_err else []
        return [("stdout", line) for line in shown] + [("stderr", line) for line in err[-keep_err:]]


class Activity:
    """One transient line, redrawn in place while something runs (a terminal only)."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self._live: Any = None
        self._label = ""
        self._tail: Tail | None = None
        self._started = 0.0
        self._stopping = threading.Event()
        self._what = "call"

    @property
    def active(self) -> bool:
        return self._live is not None

    def start(self, label: str, tail: Tail | None = None, what: str = "call") -> None:
        """Show `label` and its elapsed time (and `tail`) until `stop`; `what` the first
        Ctrl-C lets finish."""
        self.stop()
        self._what = what
        if not self.console.is_terminal or self.console.is_dumb_terminal:
            return  # no cursor tricks off a terminal: the lines around it say it all

        self._label, self._tail, self._started = label, tail, time.monotonic()
        self._stopping.clear()
        self._live = Live(
            console=self.console,
            get_renderable=self.render,
            transient=True,
            refresh_per_second=REFRESH,
            redirect_stdout=False,
            redirect_stderr=False,
        )
        self._live.start()

    def stop(self) -> None:
        live, self._live = self._live, None
        if live is not None:
            live.stop()

    def interrupted(self) -> bool:
        """The first Ctrl-C (from a signal handler): shown on the line, if there is one."""
        if self._live is None:
            return False
        self._stopping.set()
        return True

    def render(self) -> RenderableType:
        try:
            return self._render()
        except Exception:  # a tail that cannot be read shows no tail
            return Text(self._label)

    def _render(self) -> RenderableType:
        elapsed = time.monotonic() - self._started
        frame = SPINNER[int(elapsed * REFRESH * 2) % len(SPINNER)]
        line = Text(f"{INDENT}{frame} {self._label} {elapsed:.1f} s", style="cyan")
        if self._stopping.is_set():
            line.append(f" · stopping after this {self._what}; Ctrl-C again aborts it", "yellow")
        else:
            line.append(f" · Ctrl-C stops after this {self._what}", style="dim")
        rows: list[Text] = [line]
        for stream, text in self._tail.lines() if self._tail is not None else []:
            style = "red dim" if stream == "stderr" else "dim"
            rows.append(Text(f"{INDENT}  │ {visible_line(text)}", style=style))
        for row in rows:
            row.no_wrap, row.overflow = True, "ellipsis"
        return Group(*rows)
