"""The work of a call does not depend on how long the session is.

The agent loop runs a scripted model through thousands of turns, each one `bash` call, over a
real session: the gate, the policy, the journal (appends, fsyncs, the fold, page turns), the
report and its head anchor, the compaction's estimate before every model call. Only the
command is not spawned (its cost does not depend on the session; it is measured in bench/).
Two windows of ten calls, at the same point of a report page early and late in the session,
are counted: the Python functions they run and the bytes they serialise. Both are the same at
length 150 as at length 5,250; any step that read or re-serialised the history (as the
compaction's estimate once did) would make the late window the larger.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from unittest import mock

import pytest

from epistemic_agent.agent.loop import Agent, AgentConfig
from epistemic_agent.execute.shell import Execution
from epistemic_agent.journal import writer as journal_writer
from epistemic_agent.providers.base import ToolCall, Turn
from epistemic_agent.session import shell_step
from epistemic_agent.session.session import Session, Settings

pytestmark = [
    pytest.mark.system,  # a session thousands of calls long
    pytest.mark.timeout(600),
    pytest.mark.usefixtures("clean_env"),
]

EARLY, LATE, WINDOW = 150, 5250, 10  # half-way into a page, and the same acts in turn
ACTS = ("collect-info", "change-state", "verify")


def _no_spawn(command: str, cwd: Path, timeout: float, scratch: Path, **options: Any) -> Execution:
    """`run_shell`'s contract without a process: the capture files emptied, rc 0."""
    capture = options["capture"]
    scratch.mkdir(parents=True, exist_ok=True)
    for path in capture:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644))
    return Execution(0, False, 0.0, capture[0], capture[1], False)


class Counter:
    """Python function calls and serialised bytes, while `on`."""

    def __init__(self) -> None:
        self.on = False
        self.functions = 0
        self.serialised = 0

    def profile(self, frame: Any, event: str, arg: Any) -> None:
        if event == "call":
            self.functions += 1

    def counting(self, serialise: Callable[..., Any]) -> Callable[..., Any]:
        def counted(*args: Any, **kwargs: Any) -> Any:
            out = serialise(*args, **kwargs)
            if self.on:
                self.serialised += len(out)
            return out

        return counted

    @contextmanager
    def window(self) -> Iterator[None]:
        self.functions = self.serialised = 0
        self.on = True
        sys.setprofile(self.profile)
        try:
            yield
        finally:
            sys.setprofile(None)
            self.on = False


class Scripted:
    """An endless scripted model: one `bash` call a turn (acts in turn), the counter's
    windows opened and closed at the given turns, and the end after `turns`."""

    name, model = "scripted", "endless"
    streams, options, cache_key, leftover = False, None, None, 0

    def __init__(self, turns: int, counter: Counter) -> None:
        self.turns, self.counter = turns, counter
        self.step = 0
        self.counts: dict[int, tuple[int, int]] = {}
        self._window: Any = None

    def complete(self, system: str, messages: Any) -> Turn:
        self.step += 1
        for start in (EARLY, LATE):
            if self.step == start:
                self._window = self.counter.window()
                self._window.__enter__()
            elif self.step == start + WINDOW:
                self._window.__exit__(None, None, None)
                self.counts[start] = (self.counter.functions, self.counter.serialised)
        if self.step > self.turns:
            return Turn("done", (), stop_reason="end_turn")
        act = ACTS[self.step % len(ACTS)]
        args = {"command": "true", "type": act, "reason": f"probe the shell, turn {self.step}"}
        return Turn("", (ToolCall(f"c{self.step}", "bash", args),), stop_reason="tool_use")


def test_a_call_late_in_a_long_session_does_the_same_work_as_an_early_one(
    tmp_path: Path,
) -> None:
    counter = Counter()
    model = Scripted(LATE + WINDOW + 5, counter)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    counted_dumps = counter.counting(json.dumps)
    counted_encode = counter.counting(journal_writer.encode)
    with (
        mock.patch.object(shell_step, "run_shell", _no_spawn),
        mock.patch("json.dumps", counted_dumps),
        mock.patch.object(journal_writer, "encode", counted_encode),
        Session(workspace, Settings(observe=False, enforce=False)) as session,
    ):
        agent = Agent(session, model, AgentConfig(max_steps=LATE + WINDOW + 10))  # type: ignore[arg-type]
        stop = agent.run("probe the shell many times")
    assert stop.reason == "finished", stop
    early, late = model.counts[EARLY], model.counts[LATE]
    assert early[0] > 1000 and early[1] > 1000  # the windows saw the calls' work
    assert late[0] == early[0], f"functions run per window: {early[0]} early, {late[0]} late"
    # a seq or a line number of four digits instead of three: a few bytes per record more
    assert abs(late[1] - early[1]) <= 10 * WINDOW * 4, (early[1], late[1])
    assert len(agent.messages) > 2 * LATE  # the history the late window did not re-read
