"""What one answer took, tallied for its summary line."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ...providers import Turn
    from ...session import CallResult


class AnswerTotals:
    """What one answer (one user message) took: its calls by seq, rejections, tokens, cost."""

    def __init__(self) -> None:
        self.seqs: list[int] = []
        self.refused = 0
        self.failed = 0
        self.aborted = 0
        self.tokens: int | None = None
        self.cost: float | None = None

    def add_call(self, result: CallResult) -> None:
        self.seqs.append(result.seq)
        if result.status in ("rejected", "denied"):
            self.refused += 1
        elif not result.ok:
            self.failed += 1

    def add_aborted(self, seq: int) -> None:
        """A call that started and never finished: an interruption (a second Ctrl-C) stopped
        it, and its outcome says so (interrupted)."""
        self.seqs.append(seq)
        self.aborted += 1

    def add_model(self, turn: Turn) -> None:
        usage = turn.usage
        total = usage.input_tokens if usage.input_tokens is not None else usage.prompt_tokens
        if total is not None or usage.completion_tokens is not None:
            self.tokens = (self.tokens or 0) + (total or 0) + (usage.completion_tokens or 0)
        if usage.cost is not None:
            self.cost = (self.cost or 0.0) + usage.cost
