"""The agent loop: model -> gate -> executor -> journal -> report, until a stop."""

from __future__ import annotations

import json
import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any

from ..core import ProviderError, anthropic_tools, field, struct
from ..gate import Rejected
from ..providers import (
    AssistantMessage,
    Message,
    Provider,
    ToolCall,
    ToolResult,
    ToolResults,
    Turn,
    UserMessage,
)
from ..session import CallResult, Session
from .compaction import Compactor
from .modelcall import AgentConfig, Events, ModelCalls, QuietEvents
from .prompt import system_prompt

__all__ = ["EXIT_CODES", "Agent", "AgentConfig", "Events", "QuietEvents", "Stop"]

#: How a run ended, and the exit status `epistemic run` gives it.
EXIT_CODES = {
    "finished": 0,
    "max-steps": 3,
    "rejections": 4,
    "provider-error": 5,
    "interrupted": 130,
}


@struct
class Stop:
    """Why the loop ended. `steps` counts model calls."""

    reason: str
    message: str
    steps: int
    final: str = ""

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.reason]


@struct(frozen=False)
class Agent:
    """One conversation with one model over one session. `run` may be called again (REPL)."""

    session: Session
    provider: Provider
    config: AgentConfig = field(default_factory=AgentConfig)
    events: Events = field(default_factory=QuietEvents)
    messages: list[Message] = field(default_factory=list)
    _stop_requested: bool = False
    _interrupt_recorded: bool = False

    def __post_init__(self) -> None:
        self.system = system_prompt(self.session.settings.min_reason)
        options = self.provider.options
        info = options.info if options is not None else None
        window = self.config.context_window or (info.context_window if info else None)
        limit = options.output_limit if options is not None else 0
        self.compactor = Compactor(
            window, limit, fixed_prompt_chars(self.session.settings.min_reason)
        )
        self.compactor.check()  # a window too small for the fixed prompt: refuse at once
        if self.provider.cache_key is None:
            self.provider.cache_key = self.session.session_id
        self.calls = ModelCalls(
            self.session, self.provider, self.config, self.events, self.system, self.compactor, info
        )

    def run(self, text: str) -> Stop:
        """Give the model a user message and loop until it finishes or a limit stops it."""
        self._stop_requested = self._interrupt_recorded = False
        self.messages.append(UserMessage(text))
        self.session.event("user", text=text)
        with self._interrupts():
            try:
                stop = self._loop()
            except KeyboardInterrupt:
                self._stop_requested = True
                self._should_stop()
                stop = Stop("interrupted", "aborted by a second Ctrl-C", 0)
        leftover = self.provider.leftover
        if leftover:
            note = f"the script still had {leftover} unplayed turn(s)"
            stop = Stop(stop.reason, f"{stop.message}; {note}", stop.steps, stop.final)
        self.session.event("stop", reason=stop.reason, message=stop.message, steps=stop.steps)
        return stop

    def _loop(self) -> Stop:
        rejections = 0
        for step in range(1, self.config.max_steps + 1):
            if self._should_stop():
                return Stop("interrupted", "stopped by Ctrl-C", step - 1)
            try:
                turn = self.calls.complete(step, self.messages)
            except ProviderError as error:
                return Stop("provider-error", str(error), step)
            if turn.text:
                self.session.event("text", step=step, text=turn.text)
            if not turn.calls:
                self.session.event("final", step=step, text=turn.text)
                self.messages.append(AssistantMessage(turn.text, (), turn.reasoning))
                return Stop("finished", _finish_message(turn), step, turn.text)
            rejections = self._play(step, turn, rejections)
            if rejections >= self.config.max_rejections:
                return Stop("rejections", f"{rejections} consecutive calls were rejected", step)
        return Stop(
            "max-steps", f"--max-steps {self.config.max_steps} reached", self.config.max_steps
        )

    def _play(self, step: int, turn: Turn, rejections: int) -> int:
        """Run a turn's calls in order, each with its own result; return the rejection streak."""
        calls = tuple(_with_id(call, step, n) for n, call in enumerate(turn.calls, start=1))
        results: list[ToolResult] = []
        for original, call in zip(turn.calls, calls, strict=True):
            if self._should_stop():
                results.append(ToolResult(str(call.id), "not run: the session was stopped", True))
                continue
            result = self._dispatch(original, call)
            command, _ = self.session.scrubber.scrub(_command_of(call))  # shown as it is recorded
            self.events.call_finished(step, result, command)
            refused = result.status in ("rejected", "denied")
            failed = refused or not result.ok
            stored = tuple((name, ref["sha256"]) for name, ref in result.evidence.items())
            text = result.for_model()
            results.append(ToolResult(str(call.id), text, failed, result.seq, result.act, stored))
            rejections = rejections + 1 if refused else 0
        self.messages.append(AssistantMessage(turn.text, calls, turn.reasoning))
        self.messages.append(ToolResults(tuple(results)))
        return rejections

    def _dispatch(self, original: ToolCall, call: ToolCall) -> CallResult:
        tool = call.name if call.name is not None else "(none)"
        if not original.id:
            return self.session.reject(
                Rejected(
                    "call-id-missing",
                    "the tool call has no id, so it was not run; re-issue it.",
                    tool,
                    given={"tool": call.name, "arguments": call.arguments},
                )
            )
        arguments = call.arguments
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments) if arguments.strip() else {}
            except (ValueError, RecursionError) as error:
                return self.session.reject(
                    Rejected(
                        "args-not-object",
                        f"the arguments are not valid JSON ({error}); send one JSON object.",
                        tool,
                        given=call.arguments,
                    )
                )
        return self.session.call(tool, arguments, on_declared=self.events.call_started)

    def _should_stop(self) -> bool:
        """Whether Ctrl-C asked to stop; the first time, journal the interruption."""
        if self._stop_requested and not self._interrupt_recorded:
            self._interrupt_recorded = True
            self.session.event("interrupt", message="Ctrl-C: stopping after the current call")
        return self._stop_requested

    @contextmanager
    def _interrupts(self) -> Iterator[None]:
        """First Ctrl-C: stop after the current call. Second: abort the running command."""
        if threading.current_thread() is not threading.main_thread():
            yield
            return

        def handle(signum: int, frame: FrameType | None) -> None:
            # Only set a flag here: the journal is written at the loop's next safe point.
            if self._stop_requested:
                raise KeyboardInterrupt
            self._stop_requested = True
            if not self.events.interrupt_requested():  # a front end that shows it itself
                os.write(2, b"\nstopping after the current call; Ctrl-C again aborts it\n")

        previous = signal.signal(signal.SIGINT, handle)
        try:
            yield
        finally:
            signal.signal(signal.SIGINT, previous)


def fixed_prompt_chars(min_reason: int) -> int:
    """The characters every request carries: the system prompt and the tool schemas."""
    return len(system_prompt(min_reason)) + len(json.dumps(anthropic_tools()))


def _finish_message(turn: Turn) -> str:
    if turn.stop_reason in ("length", "max_tokens", "max_output_tokens"):
        return "the model answered without tool calls, but its answer was cut at the token limit"
    return "the model answered without tool calls"


def _with_id(call: ToolCall, step: int, number: int) -> ToolCall:
    """Every call answered to the model needs an id; a missing one gets a stand-in."""
    if call.id:
        return call
    return ToolCall(f"missing-id-{step}-{number}", call.name, call.arguments)


def _command_of(call: ToolCall) -> str:
    args: Any = call.arguments
    if isinstance(args, str):
        raw = args
        try:
            args = json.loads(raw)
        except (ValueError, RecursionError):
            return raw
    if isinstance(args, dict):
        for key in ("command", "path"):
            if isinstance(args.get(key), str):
                return str(args[key])
    return ""
