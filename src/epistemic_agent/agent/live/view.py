"""The live view of `run`, `repl` and `demo`: each call as it starts (seq, act, command, reason),
a running line with its elapsed time and a tail of its output while it runs, its outcome as
it ends; the model's text as it arrives; tokens and cost per model call.

Every number is the journal's seq. Record text is data: it is printed as `rich.text.Text`
(never markup) with control characters shown as escapes. On a terminal the running line is
redrawn in place (rich `Live`, transient); elsewhere (a pipe, a file) nothing is redrawn and
every line is printed once. `NO_COLOR` or `--no-color` turns colour off.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from rich.console import Console
from rich.text import Text

from ...core import tokens_line
from ..events import printable, spend_lines, supervisor_lines, usage_line
from .rows import (
    aborted_line,
    answer_line,
    finish_line,
    rejection_lines,
    review_line,
    start_lines,
)
from .tail import Activity, Tail
from .totals import AnswerTotals

if TYPE_CHECKING:
    from typing import TextIO

    from ...journal import Record
    from ...providers import Turn
    from ...session import CallResult, Session
    from ..loop import Stop


class LiveEvents:
    """What a person watching the terminal sees (see the module's docstring)."""

    def __init__(self, stream: TextIO | None = None, color: bool | None = None) -> None:
        no_color = None if color is None else not color  # None: rich reads NO_COLOR
        self.console = Console(file=stream or sys.stdout, highlight=False, no_color=no_color)
        self.activity = Activity(self.console)
        self.tail: Tail | None = None
        self._streaming: str | None = None  # the kind of text being streamed, if any
        self._streamed_final = False
        self._declared: set[int] = set()  # calls whose start lines were printed
        self.answer = AnswerTotals()
        plain = not self.console.is_terminal and self.console.color_system is None
        self._plain_width = self.console.width if plain else None  # off a terminal: fixed

    def follow(self, session: Session) -> None:
        """Tail the session's running commands (their capture files), redacted as the
        record is."""
        self.tail = Tail(session.capture_files, lambda text: session.scrubber.text(text))

    # -- the model ------------------------------------------------------------------------

    def model_started(self, step: int) -> None:
        self._end_stream()
        self.activity.start("waiting for the model", what="answer")

    def model_delta(self, step: int, kind: str, text: str) -> None:
        """The model's text (and its thinking, dimmer) as it arrives."""
        self.activity.stop()
        if self._streaming is not None and self._streaming != kind:
            self.console.print()
        self._streaming = kind
        style = "dim italic" if kind == "thinking" else ""
        self.console.print(Text(printable(text), style=style), end="", soft_wrap=True)

    def model_finished(self, step: int, turn: Turn, latency: float) -> None:
        self.activity.stop()
        streamed = self._streaming is not None
        self._end_stream()
        self._streamed_final = streamed and not turn.calls
        if not streamed and turn.text and turn.calls:  # a final answer is printed at the end
            self.console.print(Text(printable(turn.text.strip())))
        self.answer.add_model(turn)
        line = usage_line(turn)
        if line:
            self.console.print(Text(line.strip(), style="dim"), no_wrap=True, overflow="ellipsis")

    def _end_stream(self) -> None:
        if self._streaming is not None:
            self.console.print()
            self._streaming = None

    # -- calls ----------------------------------------------------------------------------

    def call_started(self, record: Record) -> None:
        """The call as journaled: its start lines now, then the running line."""
        try:
            self.activity.stop()
            seq = int(record["seq"])
            self._declared.add(seq)
            for line in start_lines(record, self._width):
                self._row(line)
            policy = record.get("policy")
            if isinstance(policy, dict) and policy.get("decision") == "ask":
                return  # the approver has the terminal: nothing redrawn under its question
            tail = self.tail if record.get("tool") == "bash" else None
            self.activity.start("running", tail)
        except Exception:  # a view must never break the call it shows
            self.activity.stop()

    def call_finished(self, step: int, result: CallResult, command: str) -> None:
        self.activity.stop()
        self.answer.add_call(result)
        if result.seq in self._declared:
            self._declared.discard(result.seq)
            lines = [finish_line(result, self._width)]
        else:  # refused before it was declared: its own row style, same columns
            lines = rejection_lines(result, command, self._width)
        for line in lines:
            self._row(line)
        review = result.review
        if review is not None and review.get("verdict") != "ok":
            self.console.print(review_line(review), no_wrap=True, overflow="ellipsis")

    @property
    def _width(self) -> int:
        return self._plain_width or self.console.width

    def _row(self, line: Text) -> None:
        """One row, never wrapped: cut at the width with an ellipsis. Off a terminal, where
        rich adds nothing to the characters (no colour, no cursor), the row is cut as rich
        cuts it and written directly: the same text, without rich's layout on every call."""
        if self._plain_width is None or "\n" in line.plain or "\t" in line.plain:
            self.console.print(line, no_wrap=True, overflow="ellipsis")
            return
        cut = line.copy()
        cut.truncate(self._plain_width, overflow="ellipsis")
        self.console.file.write(cut.plain + "\n")
        self.console.file.flush()

    def _end_unfinished(self) -> None:
        """Calls whose start was shown and whose end never came: an interruption (a second
        Ctrl-C) stopped them, and the session recorded them as interrupted. Each gets its
        closing row, and the answer counts it."""
        for seq in sorted(self._declared):
            self.answer.add_aborted(seq)
            self.console.print(aborted_line(seq, self.console.width), no_wrap=True)
        self._declared.clear()

    def interrupt_requested(self) -> bool:
        """Called from the SIGINT handler: only flags; the running line says it."""
        return self.activity.interrupted()

    def notice(self, text: str) -> None:
        self.activity.stop()
        self._end_stream()
        self.console.print(Text(printable(text), style="bold"), soft_wrap=True)

    # -- the end --------------------------------------------------------------------------

    def summary(self, session: Session, stop: Stop) -> None:
        """`run` and `demo`: the answer, then what the session came to, with copyable paths."""
        self.activity.stop()
        self._end_stream()
        self._end_unfinished()
        state = session.state
        tally = state.tally
        acts = ", ".join(f"{act} {n}" for act, n in tally.ran.items() if n) or "none"
        model = state.model
        lines = [
            "",
            f"stopped: {stop.reason} ({stop.message})",
            f"the whole session so far: {tally.sentence()}",
            f"acts that ran: {acts}; reverts that ran: {len(tally.reverts)}",
            f"model calls: {model.get('calls', 0)}, tokens: {tokens_line(state.spend.to_json())}",
            *spend_lines(state.spend),
            *supervisor_lines(state.beliefs),
            f"report: {session.layout.report}",
            f"journal head: {session.journal.position.head} (line "
            f"{session.journal.position.lines}; check with epistemic verify --expect-head)",
        ]
        if stop.final and not self._streamed_final:  # wrapped to the terminal, as prose is
            self.console.print()
            self.console.print(Text(printable(stop.final.strip())))
        for line in lines:  # never wrapped: paths must stay copyable
            self.console.print(line, markup=False, highlight=False, soft_wrap=True)

    def answered(self, stop: Stop, elapsed: float) -> None:
        """The REPL: the answer, then one line for what it took."""
        self.activity.stop()
        self._end_stream()
        self._end_unfinished()
        if stop.final.strip() and not self._streamed_final:
            self.console.print(Text(printable(stop.final.strip())))
        self.console.print(
            answer_line(stop, self.answer, elapsed, self.console.width),
            no_wrap=True,
            overflow="ellipsis",
        )
        self.answer = AnswerTotals()
        self._streamed_final = False
