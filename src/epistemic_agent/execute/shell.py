"""Running shell commands: bash in the workspace, output to files, timeouts that kill the group."""

from __future__ import annotations

import contextlib
import os
import select
import shutil
import signal
import stat
import subprocess
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from ..core import make_unique, struct
from .reaper import Warden
from .sandbox.confinement import Launch, in_confined_thread

if TYPE_CHECKING:
    from ..core import Cancel
    from .reaper import Reaper
    from .sandbox.tripwire import Attempts

DEFAULT_TIMEOUT = 120.0
KILL_GRACE = 1.0
SLOW_AFTER = 0.5
_REUSE = os.O_WRONLY | os.O_CREAT | os.O_TRUNC


@struct
class Execution:
    """What happened when a command ran. Its full output sits in two files until collected."""

    returncode: int | None
    timed_out: bool
    duration: float
    stdout: Path
    stderr: Path
    stopped_background: bool
    cancelled: bool = False  # stopped because the call was cancelled (see cancel.py)
    #: the renames and removals it attempted on protected paths (None: no tripwire was set)
    attempts: Attempts | None = None
    interrupted: bool = False  # stopped because its caller was interrupted (see Interrupted)

    def discard(self) -> None:
        for path in (self.stdout, self.stderr):
            path.unlink(missing_ok=True)


class Interrupted(KeyboardInterrupt):
    """Ctrl-C (a KeyboardInterrupt) came while a command ran: its process group was stopped,
    and `execution` says what it had done by then, its output in its files as usual. A
    KeyboardInterrupt still, for every caller that only stops; one that records the command
    records this execution first."""

    def __init__(self, execution: Execution) -> None:
        super().__init__()
        self.execution = execution


def run_shell(
    command: str,
    cwd: Path,
    timeout: float,
    scratch: Path,
    launch: Launch | None = None,
    env: dict[str, str] | None = None,
    on_slow: Callable[[], None] | None = None,
    capture: tuple[Path, Path] | None = None,
    reaper: Reaper | None = None,
    cancel: Cancel | None = None,
    stdin: Path | None = None,
    program: str = "bash",
) -> Execution:
    """Run `bash -c command` in its own session; output goes to files, not memory.

    `launch` confines it (confinement.py): a function the spawning thread runs on itself first,
    and/or an argv prefix (bwrap); ConfinementError if it cannot be confined (nothing ran).
    `on_slow` is called once if the command is still running after SLOW_AFTER seconds. With
    a `reaper`, processes that escaped the command's group (setsid, double forks) are caught
    and stopped when it ends. A `cancel` set while it runs stops its process group at once.
    `stdin` names a file the command reads (else /dev/null); `program` runs `-c command`.
    With a tripwire in `launch`, it is listened to from before the spawn until every process
    of the call has been stopped, and `attempts` holds what it saw.
    """
    scratch.mkdir(parents=True, exist_ok=True)
    launch = launch or Launch()
    argv = [*launch.argv_prefix, program, "-c", command]
    started = time.monotonic()
    tripwire = launch.tripwire
    if tripwire is not None:
        tripwire.listen()
    warden = Warden()  # under bwrap it watches bwrap's group: bwrap is the act's PID 1
    try:
        found = _find_program(argv[0])
        if capture is None:
            out_fd, out_path = make_unique(scratch, prefix="call-", suffix=".out", mode=0o644)
            err_fd, err_path = make_unique(scratch, prefix="call-", suffix=".err", mode=0o644)
        else:  # reused between calls while they stay empty: creating files is slow on some disks
            out_path, err_path = capture
            out_fd, err_fd = (os.open(p, _REUSE, 0o644) for p in capture)
        spawn = partial(_popen, found, argv, cwd, out_fd, err_fd, env, stdin)
        try:
            waiter = _spawn_and_wait(
                spawn, launch, warden, (out_fd, err_fd), timeout, reaper, cancel, on_slow
            )
        except KeyboardInterrupt as error:  # the command is stopped: what it printed is kept
            _drop_unless_regular(out_path, err_path)
            so_far = Execution(
                None, False, time.monotonic() - started, out_path, err_path, False,
                interrupted=True,
            )  # fmt: skip
            raise Interrupted(so_far) from error
        finished = waiter.returncode is not None
        stopped = finished and _kill_leftovers(waiter.pid)
        stopped = _ended(warden, reaper) or stopped
        _drop_unless_regular(out_path, err_path)
    finally:  # on every way out: the listener stops, the call's watched calls cannot hang
        attempts = None if tripwire is None else tripwire.finish()
    return Execution(
        waiter.returncode,
        not finished and not waiter.cancelled,
        time.monotonic() - started,
        out_path,
        err_path,
        stopped,
        waiter.cancelled,
        attempts,
    )


def _spawn_and_wait(
    spawn: Callable[[], int],
    launch: Launch,
    warden: Warden | None,
    fds: tuple[int, int],
    timeout: float,
    reaper: Reaper | None,
    cancel: Cancel | None,
    on_slow: Callable[[], None] | None,
) -> _Waiter:
    """Start the command (confined by `launch`, with its warden) and wait for it, stopping
    its group when the timeout runs out or the call is cancelled; the waiter's returncode is
    None then."""
    started = time.monotonic()
    if reaper is not None:
        reaper.start()
    try:
        pid = _start(spawn, launch, warden)
    except BaseException:
        _ended(warden, reaper)
        raise
    finally:
        for fd in fds:
            os.close(fd)
    waiter = _Waiter(pid, cancel)
    try:
        finished = waiter.wait(min(SLOW_AFTER, timeout))
        if not finished and on_slow is not None and not waiter.cancelled:
            on_slow()
        if not waiter.cancelled:
            finished = finished or waiter.wait(timeout - (time.monotonic() - started))
        if not finished:
            _stop_group(waiter)
            waiter.returncode = None  # reaped after the kill: not the command's own ending
    except BaseException:  # Ctrl-C or the like: never leave the command running
        _stop_group(waiter)
        _ended(warden, reaper)
        raise
    return waiter


def _start(spawn: Callable[[], int], launch: Launch, warden: Warden | None) -> int:
    """Start the command with its warden (reaper.py): in its own PID namespace where the
    confinement makes one, else watching its process group."""
    if warden is None:
        return spawn() if launch.confine is None else in_confined_thread(launch.confine, spawn)
    if not launch.pid_namespace:
        warden.watch_group()  # from here: outside the command's confinement
    if launch.confine is None:
        pid = spawn()
    elif launch.pid_namespace:
        pid = in_confined_thread(partial(launch.confine, init=warden.init), spawn)
    else:
        pid = in_confined_thread(launch.confine, spawn)
    warden.started(pid)
    return pid


def _ended(warden: Warden | None, reaper: Reaper | None) -> bool:
    """Stop what the call left running (its namespace, the strays that escaped its group);
    whether there was any."""
    left = warden.end() if warden is not None else False
    if reaper is not None:
        left = reaper.sweep() or left
    return left


def _find_program(name: str) -> str:
    """Resolve the program in the parent: the child should only make system calls. Only
    absolute PATH entries count: a relative one would resolve inside the workspace."""
    if "/" in name:
        return name
    for folder in os.get_exec_path():
        candidate = os.path.join(folder, name)
        if os.path.isabs(folder) and os.access(candidate, os.X_OK):
            return candidate
    raise FileNotFoundError(f"{name} is not on PATH")


def _popen(
    program: str,
    argv: list[str],
    cwd: Path,
    out_fd: int,
    err_fd: int,
    env: dict[str, str] | None,
    stdin: Path | None = None,
) -> int:
    """Start the command in a session of its own (its process group is what a timeout kills),
    stdin from /dev/null (or `stdin`), every other descriptor closed. We wait for and reap it
    ourselves."""
    source = subprocess.DEVNULL if stdin is None else os.open(stdin, os.O_RDONLY | os.O_CLOEXEC)
    try:
        process = subprocess.Popen(
            argv,
            executable=program,
            cwd=cwd,
            env=env,
            stdin=source,
            stdout=out_fd,
            stderr=err_fd,
            start_new_session=True,
        )
    finally:
        if stdin is not None:
            os.close(source)
    process.returncode = 0  # reaped by _Waiter, not by Popen
    return process.pid


class _Waiter:
    """Waits for one child without polling sleeps (a pidfd), and reaps it."""

    def __init__(self, pid: int, cancel: Cancel | None = None) -> None:
        self.pid = pid
        self.returncode: int | None = None
        self.cancel = cancel
        self.cancelled = False
        self._poll: select.poll | None = None
        with contextlib.suppress(AttributeError, OSError):
            self._fd = os.pidfd_open(pid)
            self._poll = select.poll()
            self._poll.register(self._fd, select.POLLIN)
            if cancel is not None:
                self._poll.register(cancel.fileno(), select.POLLIN)

    def wait(self, seconds: float | None) -> bool:
        """True once the child has exited (and is reaped); False if `seconds` ran out, or the
        call was cancelled (then `cancelled` is set)."""
        if self.returncode is not None:
            return True
        deadline = None if seconds is None else time.monotonic() + max(seconds, 0.0)
        while True:
            done, status = os.waitpid(self.pid, os.WNOHANG)
            if done:
                self.returncode = os.waitstatus_to_exitcode(status)
                if self._poll is not None:
                    os.close(self._fd)
                return True
            if self.cancel is not None and self.cancel.is_set() and not self.cancelled:
                self.cancelled = True
                return False
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                return False
            self._sleep(left)

    def forget_cancel(self) -> None:
        """Stop watching the cancel (once set, it stays readable: polls would not sleep)."""
        if self.cancel is not None and self._poll is not None:
            self._poll.unregister(self.cancel.fileno())
        self.cancel = None

    def _sleep(self, left: float | None) -> None:
        if self._poll is not None:
            self._poll.poll(None if left is None else max(int(left * 1000), 1))
        else:
            time.sleep(0.005 if left is None else min(left, 0.005))


def _stop_group(waiter: _Waiter) -> None:
    """SIGTERM the whole group, then SIGKILL what is left after a grace period; reap."""
    waiter.forget_cancel()
    _signal_group(waiter.pid, signal.SIGTERM)
    if not waiter.wait(KILL_GRACE):
        _signal_group(waiter.pid, signal.SIGKILL)
        waiter.wait(None)
    else:
        _signal_group(waiter.pid, signal.SIGKILL)


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


def _drop_unless_regular(*paths: Path) -> None:
    """Where acts can reach the record (`landlock`, `none`), a command can swap its capture
    file for a FIFO, a socket or a symlink, which reading would wait on or follow: such a
    file is removed once the command is over, and its output counts as lost."""
    for path in paths:
        try:
            if stat.S_ISREG(os.lstat(path).st_mode):
                continue
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink()
        except FileNotFoundError:
            continue


def bounded_text(path: Path, limit: int) -> str:
    """The output as text for a caller: whole if short, else head and tail with a note."""
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return "[output lost: the command deleted or replaced the file it was captured in]"
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
