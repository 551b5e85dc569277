"""Keeping a long session inside the model's context window.

Before each request the loop estimates its size (characters times a tokens-per-character
ratio learnt from the provider's own counts). Near the window it shrinks the oldest tool
outputs first, each to one line naming the call and the SHA-256 of its full output in the
evidence store; then the thinking of older turns. Declarations (every tool call with its act
and reason) and the model's prose are never touched. It shrinks well below the trigger, so
that it happens rarely: each compaction changes the request prefix and costs a cache miss.
"""

from __future__ import annotations

import json
import math
from typing import TYPE_CHECKING

from ..core import EpistemicError, field, struct
from ..providers import AssistantMessage, Message, ToolResult, ToolResults, UserMessage

if TYPE_CHECKING:
    from typing import Any

TOKENS_PER_CHAR = 1 / 3  # conservative until the provider reports a count (English: ~1/4)
TRIGGER = 0.9  # compact when the estimate passes this share of the room for input
TARGET = 0.6  # ... down to this share
MARK = "[output compacted"


class ContextTooSmall(EpistemicError, ValueError):
    """The context window cannot hold even the fixed prompt and one answer."""


@struct
class Compaction:
    """What one compaction did (journaled as a `compaction` record)."""

    trigger: str  # near-limit | provider-limit
    before: int  # estimated input tokens
    after: int
    calls: tuple[int, ...]  # the seqs whose outputs were shrunk
    results: int  # tool results shrunk (some have no seq: rejected calls)
    chars_removed: int
    reasoning_dropped: int  # thinking blocks / reasoning items of older turns dropped


@struct(frozen=False)
class Compactor:
    context_window: int | None
    output_limit: int
    fixed_chars: int  # the system prompt and the tool schemas
    ratio: float = TOKENS_PER_CHAR
    done: list[Compaction] = field(default_factory=list)
    measured: Measure = field(default_factory=lambda: Measure(), compare=False)

    @property
    def room(self) -> int | None:
        """Input tokens a request may hold: the window minus the answer's limit."""
        return None if self.context_window is None else self.context_window - self.output_limit

    def check(self) -> None:
        """Refuse a window too small for the fixed prompt plus one answer."""
        fixed = math.ceil(self.fixed_chars * self.ratio)
        if self.room is not None and fixed >= self.room:
            raise ContextTooSmall(
                f"the context window ({self.context_window} tokens) cannot hold the fixed "
                f"prompt (about {fixed} tokens: the system prompt and the tool schemas) plus "
                f"the output limit ({self.output_limit} tokens); give a larger "
                "--context-window or a smaller --max-output-tokens"
            )

    def estimate(self, messages: list[Message]) -> int:
        return math.ceil((self.fixed_chars + self.measured.chars(messages)) * self.ratio)

    def learn(self, messages: list[Message], input_tokens: int | None) -> None:
        """Calibrate the ratio with the provider's count of the request just sent."""
        chars = self.fixed_chars + self.measured.chars(messages)
        if input_tokens and chars:
            self.ratio = min(max(input_tokens / chars, 0.05), 2.0)

    def due(self, messages: list[Message]) -> bool:
        room = self.room
        return room is not None and self.estimate(messages) > TRIGGER * room

    def shrink(self, messages: list[Message], trigger: str) -> Compaction | None:
        """Shrink `messages` in place down to the target; None when nothing could shrink."""
        before = self.estimate(messages)
        room = self.room
        goal = int(TARGET * room) if room is not None and trigger == "near-limit" else before // 2
        seqs: list[int] = []
        results = removed = 0
        for index, position in candidates(messages):
            if self.estimate(messages) <= goal:
                break
            message = messages[index]
            assert isinstance(message, ToolResults)
            old = message.results[position]
            new = ToolResult(
                old.call_id, summary(old), old.is_error, old.seq, old.act, old.evidence
            )
            items = list(message.results)
            items[position] = new
            messages[index] = ToolResults(tuple(items))
            self.measured.changed(messages, index)
            results += 1
            removed += len(old.text) - len(new.text)
            if old.seq is not None:
                seqs.append(old.seq)
        dropped = 0
        if self.estimate(messages) > goal:
            dropped = drop_reasoning(messages)
            if dropped:
                self.measured.forget()
        if not results and not dropped:
            return None
        done = Compaction(
            trigger, before, self.estimate(messages), tuple(seqs), results, removed, dropped
        )
        self.done.append(done)
        return done


def candidates(messages: list[Message]) -> list[tuple[int, int]]:
    """(message index, result index) of every tool output that would get shorter, oldest
    first."""
    found = []
    for index, message in enumerate(messages):
        if isinstance(message, ToolResults):
            for position, result in enumerate(message.results):
                if not result.text.startswith(MARK) and len(summary(result)) < len(result.text):
                    found.append((index, position))
    return found


def summary(result: ToolResult) -> str:
    """The one line that replaces a tool output: what it was, and where the whole is."""
    who = f"call {result.seq}" if result.seq is not None else "a call"
    if result.act:
        who += f" ({result.act})"
    stored = ", ".join(f"{name} sha256:{digest}" for name, digest in result.evidence)
    where = f"the full output is in the evidence store: {stored}" if stored else "not stored"
    return f"{MARK} to fit the context window: {len(result.text)} characters from {who}; {where}]"


def drop_reasoning(messages: list[Message]) -> int:
    """Drop the thinking of every assistant turn but the newest; how many items went."""
    turns = [i for i, m in enumerate(messages) if isinstance(m, AssistantMessage)]
    dropped = 0
    for index in turns[:-1]:
        message = messages[index]
        assert isinstance(message, AssistantMessage)
        if message.reasoning:
            dropped += len(message.reasoning)
            messages[index] = AssistantMessage(message.text, message.calls)
    return dropped


@struct(frozen=False)
class Measure:
    """The transcript's size, kept as it grows: each message is measured once, when it is
    first seen, so that the estimate before every model call costs the same at any length.

    The transcript only grows at its end, except where this module shrinks it (`changed`,
    `forget`); a list that is not the one measured (shorter, or another last message) is
    measured again from the start."""

    count: int = 0  # messages measured, from the first
    total: int = 0  # their characters
    sizes: list[int] = field(default_factory=list)
    last: Message | None = None  # the newest measured, to notice a different list

    def chars(self, messages: list[Message]) -> int:
        if self.count > len(messages) or (self.count and messages[self.count - 1] is not self.last):
            self.forget()
        for index in range(self.count, len(messages)):
            measured = message_size(messages[index])
            self.sizes.append(measured)
            self.total += measured
        self.count = len(messages)
        self.last = messages[-1] if messages else None
        return self.total

    def changed(self, messages: list[Message], index: int) -> None:
        """Message `index` was replaced in `messages`: measure it again."""
        if index >= self.count:
            return
        measured = message_size(messages[index])
        self.total += measured - self.sizes[index]
        self.sizes[index] = measured
        if index == self.count - 1:
            self.last = messages[index]

    def forget(self) -> None:
        self.count = self.total = 0
        self.sizes = []
        self.last = None


def message_size(message: Message) -> int:
    """Characters of one message as it will be sent (close enough for an estimate)."""
    if isinstance(message, UserMessage):
        return len(message.text)
    if isinstance(message, AssistantMessage):
        total = len(message.text) + sum(_arguments(c.arguments) for c in message.calls)
        return total + sum(len(json.dumps(r.native)) for r in message.reasoning)
    return sum(len(r.text) + 40 for r in message.results)


def _arguments(arguments: Any) -> int:
    if isinstance(arguments, str):
        return len(arguments) + 40
    return len(json.dumps(arguments, ensure_ascii=False, default=str)) + 40
