"""Ending what an act started: when its call ends, and when its session dies.

A command can escape the group kill that ends every call: `setsid -f daemon`, or a double fork.
While a call runs, this process is made a child subreaper (prctl PR_SET_CHILD_SUBREAPER), so
such orphans are re-parented to us instead of to init; when the call ends, every child of ours
that was not there before it started is killed (with its group) and reaped (`Reaper`).

A session can also die with its act running (SIGKILL, the OOM killer), and then nothing of it is
left to clean up. So each act has a `Warden`: a process that reads a pipe whose other end only
the session holds, and that the kernel closes when the session dies, however it dies. Where
there are namespaces, the warden is the first process of the act's own PID namespace, made
before the command, outside the command's Landlock domain: when the pipe ends it exits, and
the kernel kills every process of the namespace, whatever group or session it made for itself.
Without namespaces the warden kills the command's process group instead (what left the group
runs on).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import select
import signal
import time
from typing import TYPE_CHECKING

from ..core import system_program

PR_SET_CHILD_SUBREAPER = 36
WARDEN_SECONDS = 2.0  # a warden waited for alone, before the call's sweep takes over
SWEEP_SECONDS = 10.0  # at most, to kill and reap what a call left (it takes milliseconds)


if TYPE_CHECKING:
    from collections.abc import Callable


def _prctl() -> Callable[[int, int], int] | None:
    """libc's prctl, or None where it cannot be had."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        prctl: Callable[[int, int], int] = libc.prctl
        return prctl
    except (OSError, AttributeError):
        return None


class Reaper:
    """Subreaper while a call runs; `sweep` stops the strays afterwards."""

    def __init__(self) -> None:
        self._prctl = _prctl()
        self._before: set[int] = set()

    def start(self) -> None:
        if self._prctl is not None:
            self._prctl(PR_SET_CHILD_SUBREAPER, 1)
        self._before = children()

    def sweep(self) -> bool:
        """Kill and reap the children that appeared during the call; whether there were any.
        The children are looked for again each round: a killed stray's own children come to
        us next, and the first process of a PID namespace ends only once every other process
        of it is reaped, so no one of them is waited for alone."""
        found = False
        deadline = time.monotonic() + SWEEP_SECONDS
        while time.monotonic() < deadline:
            strays = children() - self._before
            if not strays:
                break
            found = True
            for pid in strays:
                with contextlib.suppress(OSError):
                    os.killpg(pid, 9)  # a stray that made itself a group leader: its group too
                with contextlib.suppress(OSError):
                    os.kill(pid, 9)
            for pid in strays:
                with contextlib.suppress(ChildProcessError, OSError):
                    os.waitpid(pid, os.WNOHANG)
            time.sleep(0.001)
        if self._prctl is not None:
            self._prctl(PR_SET_CHILD_SUBREAPER, 0)
        return found


def children() -> set[int]:
    """The live children of this process (all its threads'), from /proc."""
    found: set[int] = set()
    try:
        tasks = os.listdir("/proc/self/task")
    except OSError:
        return found
    for task in tasks:
        try:
            with open(f"/proc/self/task/{task}/children", "rb") as handle:
                found.update(int(pid) for pid in handle.read().split())
        except (OSError, ValueError):
            continue
    return found


#: The namespace's first process: `cat` reads the session's pipe (it never gets a byte) and ends
#: with it. A small program started without a hook runs on the fast path (vfork and exec, about
#: a third of a millisecond); orphans of the call wait as zombies until the namespace ends.
_INIT = "cat"
#: Without a namespace: the command's group first, then the end of the pipe, then the kill.
_GROUP = 'read -r group; while read -r _; do :; done; [ -n "$group" ] && kill -s KILL -- "-$group"'


class Warden:
    """The process that ends an act when its session dies (see the module's docstring)."""

    def __init__(self) -> None:
        self._read, self._write = os.pipe()  # not inheritable: no act holds the session's end
        self.pid: int | None = None
        self.pid_namespace = False

    def init(self) -> None:
        """Start the act's PID namespace with its first process. Run by the confining thread
        once it has unshared the namespace and before it drops its capabilities (the process
        is outside the act's Landlock domain); returns once it runs. OSError."""
        self.pid = _spawn([system_program(_INIT) or f"/bin/{_INIT}"], self._read)
        self.pid_namespace = True

    def watch_group(self) -> None:
        """Without a namespace: a warden for the command's group, started before it."""
        shell = system_program("sh") or "/bin/sh"  # a POSIX shell: smaller than bash
        self.pid = _spawn([shell, "-c", _GROUP], self._read)

    def started(self, pgid: int) -> None:
        """The command runs: a group warden learns its group (one that died already cannot
        be told, and the call goes on without it)."""
        if self.pid is not None and not self.pid_namespace:
            with contextlib.suppress(OSError):
                os.write(self._write, f"{pgid}\n".encode())

    def end(self) -> bool:
        """The call is over: stop the warden (and, with a namespace, every process still in
        it); whether any was left besides the command's own group."""
        left = False
        if self.pid is not None:
            left = self.pid_namespace and bool(_live_children(self.pid))
            namespace = _pid_namespace(self.pid) if self.pid_namespace else None
            with contextlib.suppress(OSError):
                os.kill(self.pid, signal.SIGKILL)
            _reap(self.pid, namespace)
            self.pid = None
        for fd in (self._read, self._write):
            with contextlib.suppress(OSError):
                os.close(fd)
        self._read = self._write = -1
        return left


def _spawn(argv: list[str], stdin: int) -> int:
    """Start `argv` reading `stdin`, in a session of its own, its output to /dev/null and
    nothing else inherited (posix_spawn: no Python between fork and exec)."""
    actions = [
        (os.POSIX_SPAWN_DUP2, stdin, 0),
        (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
        (os.POSIX_SPAWN_DUP2, 1, 2),
    ]
    return os.posix_spawn(argv[0], argv, {}, file_actions=actions, setsid=True)


def _reap(pid: int, namespace: str | None) -> None:
    """Wait for the warden. The first process of a PID namespace exits only once every other
    process of it has been reaped, and a command whose start was cut short (a signal while it
    was spawned) is this process's child, not the warden's: reap those of the namespace too,
    and stop waiting after a while (the call's sweep reaps what is left: `Reaper.sweep`). The
    wait is on the warden's pidfd: it ends as the process does, not at the next poll."""
    deadline = time.monotonic() + WARDEN_SECONDS
    try:
        handle = os.pidfd_open(pid)
    except OSError:
        handle = -1
    try:
        if handle >= 0:  # the usual case: it ends within microseconds of its kill
            select.select([handle], [], [], 0.005)
        while True:
            try:
                done, _ = os.waitpid(pid, os.WNOHANG if namespace else 0)
            except (ChildProcessError, OSError):
                return
            if done or time.monotonic() > deadline:
                return
            for child in _children(os.getpid()):
                if child != pid and _pid_namespace(child) == namespace:
                    with contextlib.suppress(ChildProcessError, OSError):
                        os.waitpid(child, os.WNOHANG)
            if handle >= 0:
                select.select([handle], [], [], 0.005)
            else:
                time.sleep(0.001)
    finally:
        if handle >= 0:
            os.close(handle)


def _pid_namespace(pid: int) -> str | None:
    try:
        return os.readlink(f"/proc/{pid}/ns/pid")
    except OSError:
        return None


def _children(pid: int) -> list[int]:
    """Every child of this process's threads (a child belongs to the thread that made it)."""
    found: list[int] = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for task in tasks:
        path = f"/proc/{pid}/task/{task}/children"
        with contextlib.suppress(OSError, ValueError), open(path, "rb") as handle:
            found += [int(child) for child in handle.read().split()]
    return found


def _live_children(pid: int) -> list[int]:
    """The children of `pid` that have not exited (zombies are not left processes)."""
    try:
        with open(f"/proc/{pid}/task/{pid}/children", "rb") as handle:
            found = [int(child) for child in handle.read().split()]
    except (OSError, ValueError):
        return []
    live = []
    for child in found:
        try:
            with open(f"/proc/{child}/stat", "rb") as handle:
                state = handle.read().rpartition(b")")[2].split()[0]
        except (OSError, IndexError):
            continue
        if state not in (b"Z", b"X"):
            live.append(child)
    return live
