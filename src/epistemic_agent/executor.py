"""Running shell commands: bash in the workspace, output to files, timeouts that kill the group."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from .fsutil import make_unique

DEFAULT_TIMEOUT = 120.0
KILL_GRACE = 1.0


@dataclass(frozen=True)
class Execution:
    """What happened when a command ran. Its full output sits in two files until collected."""

    returncode: int | None
    timed_out: bool
    duration: float
    stdout: Path
    stderr: Path
    stopped_background: bool

    def discard(self) -> None:
        for path in (self.stdout, self.stderr):
            path.unlink(missing_ok=True)


def run_shell(command: str, cwd: Path, timeout: float, scratch: Path) -> Execution:
    """Run `bash -c command` in its own process group; output goes to files, not memory."""
    scratch.mkdir(parents=True, exist_ok=True)
    out_path, err_path = _scratch_file(scratch, "out"), _scratch_file(scratch, "err")
    started = time.monotonic()
    with out_path.open("wb") as out, err_path.open("wb") as err:
        process = subprocess.Popen(
            ["bash", "-c", command],
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            start_new_session=True,
        )
        timed_out = False
        try:
            returncode: int | None = process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            _stop_group(process)
            returncode = None
        except BaseException:  # Ctrl-C or the like: never leave the command running
            _stop_group(process)
            raise
    stopped = not timed_out and _kill_leftovers(process.pid)
    return Execution(returncode, timed_out, time.monotonic() - started, out_path, err_path, stopped)


def _scratch_file(scratch: Path, suffix: str) -> Path:
    handle, path = make_unique(scratch, prefix="call-", suffix="." + suffix)
    os.close(handle)
    return path


def _stop_group(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM the whole group, then SIGKILL what is left after a grace period."""
    _signal_group(process.pid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=KILL_GRACE)
    _signal_group(process.pid, signal.SIGKILL)
    process.wait()


def _kill_leftovers(pgid: int) -> bool:
    """Background children the command left behind are stopped: a call's effects end with it."""
    if not _signal_group(pgid, 0):
        return False
    _signal_group(pgid, signal.SIGKILL)
    return True


def _signal_group(pgid: int, signum: int) -> bool:
    try:
        os.killpg(pgid, signum)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def bounded_text(path: Path, limit: int) -> str:
    """The output as text for a caller: whole if short, else head and tail with a note."""
    size = path.stat().st_size
    with path.open("rb") as handle:
        if size <= limit:
            return as_text(handle.read(), size)
        half = limit // 2
        head = handle.read(half)
        handle.seek(size - half)
        tail = handle.read(half)
    if b"\x00" in head or b"\x00" in tail:
        return binary_note(size)
    cut = size - len(head) - len(tail)
    return (
        head.decode("utf-8", "replace") + f"\n[... {cut} bytes cut: the full output is kept "
        "as evidence ...]\n" + tail.decode("utf-8", "replace")
    )


def as_text(data: bytes, size: int) -> str:
    if b"\x00" in data:
        return binary_note(size)
    return data.decode("utf-8", "replace")


def binary_note(size: int) -> str:
    return f"[binary output: {size} bytes, kept as evidence]"
