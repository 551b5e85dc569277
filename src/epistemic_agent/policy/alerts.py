"""Alerts: hooks a policy file sets on events (a revert, a rejection, a mismatch, a denial).

A hook is either a command, run by /bin/sh with the event as one JSON object on stdin, or a
line on stderr. Hooks run after the event is journaled; what each one came to is journaled too
(an `alert` record), so an auditor can see who was told. A session runs each hook's command
confined like an observation act (`Alerts.runner`): it can read, and reach the network, but
write nothing but the session's scratch folder, signal nothing outside its own processes, and
nothing it starts outlives it. So a hook cannot be turned against the record, even when what
it runs lives in the workspace, where an agent can change it.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from typing import TYPE_CHECKING

from ..core import struct

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TextIO

    #: (command, event JSON, environment, timeout) -> what the hook came to
    Runner = Callable[[str, bytes, dict[str, str], float], dict[str, Any]]

#: The events, in the order the docs list them, with what each means.
EVENTS: dict[str, str] = {
    "first-revert": "the session's first revert act ran",
    "revert": "a revert act ran",
    "rejection": "the gate rejected a call (malformed, contradictory or inconsistent)",
    "flag": "a call's outcome carries a declared-versus-done flag",
    "denial": "a call was denied: by a policy rule, by a human, or by an approval timeout",
    "supervisor-flag": "the supervisor flagged or blocked a call before it ran, or failed",
}
DEFAULT_TIMEOUT = 10.0
MAX_TIMEOUT = 300.0


@struct
class Hook:
    """One alert: on which events, and what to do (a command, or a line on stderr)."""

    id: str
    on: tuple[str, ...]
    command: str | None = None
    stderr: bool = False
    timeout: float = DEFAULT_TIMEOUT


class Alerts:
    """Fires the hooks that listen to an event; returns what each came to."""

    def __init__(
        self,
        hooks: tuple[Hook, ...],
        workspace: str,
        err: TextIO | None = None,
        runner: Runner | None = None,
    ):
        self.hooks = hooks
        self.workspace = workspace
        self.err = err
        #: Runs one hook's command: (command, event JSON, environment, timeout) -> what it
        #: came to. A session gives a confined one; the default runs it as it is (tests).
        self.runner: Runner = runner if runner is not None else _run

    def listening(self, event: str) -> list[Hook]:
        return [hook for hook in self.hooks if event in hook.on]

    def fire(self, event: str, payload: dict[str, Any]) -> list[dict[str, Any]]:
        """Run every hook on `event`; never raises (a failing hook is reported, not fatal)."""
        results = []
        body = {"event": event, **payload}
        for hook in self.listening(event):
            if hook.command is not None:
                results.append({"hook": hook.id, "via": "command", **self._run(hook, body)})
            if hook.stderr:
                self._line(event, body)
                results.append({"hook": hook.id, "via": "stderr", "ok": True})
        return results

    def _line(self, event: str, body: dict[str, Any]) -> None:
        stream = self.err if self.err is not None else sys.stderr
        what = f"call {body.get('seq', '?')} ({body.get('act') or body.get('tool', '?')})"
        detail = body.get("message") or body.get("reason") or ""
        detail = " ".join(str(detail).split())[:300]
        with contextlib.suppress(OSError, ValueError):  # a closed stderr must not break a session
            print(f"epistemic: alert: {event}: {what}: {detail}", file=stream, flush=True)

    def _run(self, hook: Hook, body: dict[str, Any]) -> dict[str, Any]:
        assert hook.command is not None
        data = json.dumps(body, ensure_ascii=False).encode("utf-8", "surrogateescape") + b"\n"
        env = {**os.environ, "EPISTEMIC_EVENT": str(body["event"])}
        return self.runner(hook.command, data, env, hook.timeout)


def _run(command: str, data: bytes, env: dict[str, str], timeout: float) -> dict[str, Any]:
    """A hook's command, unconfined, in the current folder (for callers without a session)."""
    started = time.monotonic()
    try:
        process = subprocess.Popen(
            ["/bin/sh", "-c", command],
            env=env,
            stdin=subprocess.PIPE,
            stdout=sys.stderr.fileno() if _usable(sys.stderr) else subprocess.DEVNULL,
            stderr=sys.stderr.fileno() if _usable(sys.stderr) else subprocess.DEVNULL,
            start_new_session=True,
        )
    except OSError as error:
        return {"ok": False, "error": f"cannot start: {error.strerror or error}"}
    try:
        process.communicate(data, timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(process.pid)
        process.wait()
        return {"ok": False, "error": f"timed out after {timeout:g} s", "returncode": None}
    except OSError:  # the hook did not read its stdin: that is its business
        process.wait()
    took = round(time.monotonic() - started, 3)
    return {"ok": process.returncode == 0, "returncode": process.returncode, "duration": took}


def _usable(stream: Any) -> bool:
    try:
        stream.flush()
        return isinstance(stream.fileno(), int)
    except (AttributeError, OSError, ValueError):
        return False


def _kill_group(pid: int) -> None:
    with contextlib.suppress(OSError):
        os.killpg(pid, signal.SIGKILL)
