"""The session's one listening thread for the tripwires of every call (tripwire.py).

The session's thread makes sure it runs before each spawn (`Hub.start`); a call's filter is
handed over by the confining thread once installed (`Hub.serve`); the hub
polls every filter's listener and every call's stop pipe at once, answers each watched call as
it comes, and ends a call's watch when its stop pipe is written (`Tripwire.finish`) or when no
process is left that could make a watched call: it answers what came before, closes the
listener's fd (from then on a watched call fails with ENOSYS instead of waiting) and sets the
call's `_done`. Calls that run side by side (an MCP client may ask for that) are watched side
by side. A thread of its own for each call cost a start and a join on every call.

If the thread ever failed, every listener it held is closed (no act waits on it) and the next
call starts a new thread.
"""

from __future__ import annotations

import contextlib
import os
import select
import threading
from typing import Protocol

_IN = select.POLLIN


class Tripwire(Protocol):
    """What the hub needs of a call's tripwire (tripwire.py)."""

    _listener: int | None
    _stop: tuple[int, int] | None

    def _begin(self) -> bool: ...
    def _serve_one(self) -> bool: ...
    def _drain(self) -> None: ...
    def _close(self) -> None: ...
    def _note(self, why: str) -> None: ...


class Hub:
    """The listening thread, started by the first call that needs it (see the module)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._arrived: list[Tripwire] = []
        self._wake: tuple[int, int] | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Make sure the thread runs. From the session's thread, before a spawn: a thread
        started by a confining thread would share its confinement (and one that has unshared
        a PID namespace cannot start threads at all)."""
        with self._lock:
            if self._wake is None:
                self._wake = os.pipe2(os.O_CLOEXEC)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._run, args=(self._wake[0],), name="epistemic-tripwire", daemon=True
                )
                self._thread.start()

    def serve(self, tripwire: Tripwire) -> None:
        """Listen for `tripwire`, whose filter is installed and whose stop pipe is made (from
        the confining thread: a list and a write, nothing more)."""
        with self._lock:
            assert self._wake is not None, "Hub.start comes first"
            self._arrived.append(tripwire)
            os.write(self._wake[1], b"x")

    def _run(self, wake: int) -> None:
        poller = select.poll()
        poller.register(wake, _IN)
        watched: dict[int, Tripwire] = {}  # listener and stop fds -> their call
        try:
            while True:
                for fd, got in poller.poll():
                    if fd == wake:
                        os.read(wake, 4096)
                        self._take(poller, watched)
                    elif fd in watched:
                        self._event(poller, watched, watched[fd], fd, got)
        except Exception as error:  # no act may wait on a listener no one reads any more
            for tripwire in set(watched.values()):
                tripwire._note(f"the listener failed: {error}")
                with contextlib.suppress(OSError):
                    tripwire._close()

    def _take(self, poller: select.poll, watched: dict[int, Tripwire]) -> None:
        with self._lock:
            arrived, self._arrived = self._arrived, []
        for tripwire in arrived:
            if not tripwire._begin():
                continue
            assert tripwire._listener is not None and tripwire._stop is not None
            for fd in (tripwire._listener, tripwire._stop[0]):
                poller.register(fd, _IN)
                watched[fd] = tripwire

    def _event(
        self,
        poller: select.poll,
        watched: dict[int, Tripwire],
        tripwire: Tripwire,
        fd: int,
        got: int,
    ) -> None:
        """A watched call to answer, or the end of the call's watch (stopped, or no process
        left that could make a call)."""
        if fd == tripwire._listener and got & _IN:
            if tripwire._serve_one():
                return
        else:
            tripwire._drain()
        assert tripwire._listener is not None and tripwire._stop is not None
        for one in (tripwire._listener, tripwire._stop[0]):
            watched.pop(one, None)
            with contextlib.suppress(KeyError, ValueError):
                poller.unregister(one)


HUB = Hub()
