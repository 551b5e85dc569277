"""Catching what a command leaves running outside its process group.

A command can escape the group kill that ends every call: `setsid -f daemon`, or a double fork.
While a call runs, this process is made a child subreaper (prctl PR_SET_CHILD_SUBREAPER), so
such orphans are re-parented to us instead of to init; when the call ends, every child of ours
that was not there before it started is killed (with its group) and reaped.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
from typing import TYPE_CHECKING

PR_SET_CHILD_SUBREAPER = 36
ROUNDS = 20  # a killed stray's own children come to us next: a few rounds empty the tree


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
        """Kill and reap the children that appeared during the call; whether there were any."""
        found = False
        for _ in range(ROUNDS):
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
                    os.waitpid(pid, 0)
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
