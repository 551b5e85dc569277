"""`epistemic mcp` over stdio, from the first byte to the session's `closed` record.

The front (front.py) answers the handshake at once, while the policy loads and is checked in
a thread (`prepare`: the CLI's checks, as they were before any answer). As soon as the policy
is in force and the client has introduced itself (`initialize`), the session opens, in a
thread of its own, so the first call finds it open; a call that comes earlier waits for it,
and none runs before the policy is loaded and checked. A policy that cannot be used ends the
server with its error, as before, whatever the front has answered by then.

The SDK is loaded only for what the front does not serve (front.py), and then serves the rest
of the connection. Either way, the end of input or a signal ends the session: calls still
running are answered `Connection closed` and withdrawn or stopped, then the session closes.
"""

from __future__ import annotations

import contextlib
import os
import select
import sys
import threading
from typing import TYPE_CHECKING

from .front import Front
from .stop import Stop
from .wire import Out, divert_stdout

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from .server import Gatekeeper

#: Seconds a thread waits for the interpreter's lock while the policy loads (the default is
#: 5 ms): the front, woken by the client, answers without waiting on the policy's parser.
HANDOFF = 0.0005


def serve(prepare: Callable[[], Gatekeeper]) -> None:
    """Serve stdin and stdout until the client closes the connection or ends the server with
    a signal; the session is closed before this returns. Raises what `prepare` raised."""
    wire = divert_stdout()
    stop = Stop()
    stop.install()
    serving = Serving(prepare, 0, Out(wire), stop)
    try:
        serving.run()
    finally:
        stop.ignore()
    with contextlib.suppress(OSError):  # a client that ended us may have closed stderr
        print(serving.farewell(), file=sys.stderr, flush=True)  # one write: we may end soon


class Background:
    """`work` in a thread of its own; its end wakes the serving loop (`wake`)."""

    def __init__(self, work: Callable[[], Any], wake: int, name: str) -> None:
        self.value: Any = None
        self.error: BaseException | None = None
        self.done = threading.Event()
        self._wake = wake
        threading.Thread(target=self._run, args=(work,), name=name, daemon=True).start()

    def _run(self, work: Callable[[], Any]) -> None:
        try:
            self.value = work()
        except BaseException as error:  # raised again by the serving loop, in the main thread
            self.error = error
        finally:
            self.done.set()
            with contextlib.suppress(OSError):
                os.write(self._wake, b"x")


class Serving:
    """One connection: `infd` in, `out` out; `stop` None takes no signals (tests)."""

    def __init__(
        self, prepare: Callable[[], Gatekeeper], infd: int, out: Out, stop: Stop | None = None
    ) -> None:
        self._wake, self._poke = os.pipe2(os.O_CLOEXEC | os.O_NONBLOCK)
        self.front = Front(infd, out)
        self.stop = stop
        self.keeper: Gatekeeper | None = None
        self._policy = Background(prepare, self._poke, "mcp-policy")
        self._sdk: Background | None = None
        self._began = False  # the calls may run and the session is opening
        self._interval = sys.getswitchinterval()
        sys.setswitchinterval(min(HANDOFF, self._interval))  # until the policy is loaded

    def run(self) -> None:
        try:
            if self._serve_front():
                self._serve_sdk()
            self._cut()
            if self.keeper is None:  # the connection ended while the policy loaded
                self._policy.done.wait()
                self._note_policy()
        except BaseException:
            if self.keeper is not None:  # the SDK could not load: close what opened
                self._close()
            raise
        finally:
            self._release()
        self._close()

    def _serve_front(self) -> bool:
        """Serve from the front until the connection ends, or the SDK is to take over (True)."""
        front = self.front
        while True:
            self._note_ready()
            if front.needs_sdk or (front.opening is None and front.held):
                if self._sdk is None:
                    self._sdk = Background(_load_sdk, self._poke, "mcp-sdk")
                elif self._sdk.done.is_set() and self.keeper is not None:
                    if self._sdk.error is not None:
                        raise self._sdk.error
                    return True
            if front.ended or self._stopped():
                return False
            watched = [self._wake] if front.needs_sdk else [self._wake, front.infd]
            if self.stop is not None:
                watched.append(self.stop.fileno())
            readable, _, _ = select.select(watched, [], [])
            if self._wake in readable:
                with contextlib.suppress(BlockingIOError):
                    os.read(self._wake, 512)
            if front.infd in readable:
                front.take()

    def _note_ready(self) -> None:
        """The policy is in force: calls may run, and the session opens once the client has
        introduced itself."""
        if self.keeper is None and self._policy.done.is_set():
            self._note_policy()
        calls = self.front.calls
        if self.keeper is None or calls is None or self._began:
            return
        self._began = True
        calls.start(self.keeper)
        threading.Thread(target=self.keeper.begin, args=(calls.client,), daemon=True).start()

    def _note_policy(self) -> None:
        """The gatekeeper `prepare` made, or what it raised (in the main thread, as before)."""
        sys.setswitchinterval(self._interval)
        if self._policy.error is not None:
            raise self._policy.error
        self.keeper = self._policy.value
        self.keeper.stop = self.stop

    def _stopped(self) -> bool:
        return self.stop is not None and self.stop.fired()

    def _serve_sdk(self) -> None:
        from .server import run_sdk

        keeper = self.keeper
        assert keeper is not None
        run_sdk(keeper, self.front.reader(keeper.disconnected.set, self.stop), self.front.writer())

    def _cut(self) -> None:
        """The connection ended: the calls the front took are cut off (calls.py)."""
        if self.keeper is not None and self.front.ended:
            self.keeper.disconnected.set()
        if self.front.calls is not None:
            self.front.calls.end()

    def _close(self) -> None:
        """What runs is cut off, then the session closes."""
        assert self.keeper is not None
        self._cut()
        self.keeper.close()

    def _release(self) -> None:
        """The wake-up pipe, once nothing can write to it any more."""
        sys.setswitchinterval(self._interval)
        if self._policy.done.is_set() and (self._sdk is None or self._sdk.done.is_set()):
            for fd in (self._wake, self._poke):
                os.close(fd)

    def farewell(self) -> str:
        """The last lines for the client's log: how the connection ended, and the journal's
        head (an anchor outside the workspace) when a session was open."""
        ended = "connection closed"
        if self.stop is not None and self.stop.fired():
            ended = f"ended by {self.stop.name}"
        session = self.keeper.session if self.keeper is not None else None
        if session is None:
            return f"epistemic mcp: {ended}"
        position = session.journal.position
        return (
            f"epistemic mcp: {ended}; the session is journaled\n"
            f"epistemic mcp: journal head {position.head} (line {position.lines})"
        )


def _load_sdk() -> Any:
    from .server import sdk

    return sdk()
