"""What a session's model calls cost, summed from its `model` records: tokens and dollars for
the session and per act type, and the output tokens spent on declared reasons.

A model request is attributed to the acts its tool calls declared (`acts` in the record),
split evenly among them; a request without calls (the final answer) to `(answer)`. Records
written before costs were recorded count their tokens (`prompt_tokens` for input) and are
unpriced."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core import act_order, field, struct

if TYPE_CHECKING:
    from typing import Any

    from ..journal.log import Record

ANSWER = "(answer)"  # a turn without tool calls
INVALID = "(no act)"  # a call that declared no known act
BUCKET = ("calls", "input_tokens", "output_tokens", "reason_tokens", "cost")


@struct(frozen=False)
class Spend:
    model_calls: int = 0
    reported: int = 0  # requests whose provider reported token counts
    priced: int = 0  # requests with a cost
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    cache_creation_input_tokens: int = 0
    reasoning_tokens: int = 0
    reason_tokens: int = 0
    reason_output: int = 0  # output tokens of the requests that estimated reason tokens
    cost: float = 0.0
    thinking: int = 0
    compactions: int = 0
    by_act: dict[str, dict[str, float]] = field(default_factory=dict)

    def fold(self, record: Record) -> None:
        kind = record.get("kind")
        if kind == "compaction":
            self.compactions += 1
        elif kind == "thinking":
            self.thinking += 1
        elif kind == "model":
            self._fold_model(record)

    def _fold_model(self, record: Record) -> None:
        self.model_calls += 1
        inputs = _count(record.get("input_tokens"))
        if inputs is None:
            inputs = _count(record.get("prompt_tokens"))
        output = _count(record.get("completion_tokens"))
        if inputs is not None or output is not None:
            self.reported += 1
        self.input_tokens += inputs or 0
        self.output_tokens += output or 0
        self.cached_tokens += _count(record.get("cached_tokens")) or 0
        self.cache_creation_input_tokens += _count(record.get("cache_creation_input_tokens")) or 0
        self.reasoning_tokens += _count(record.get("reasoning_tokens")) or 0
        reasons = _count(record.get("reason_tokens"))
        if reasons is not None and output is not None:
            self.reason_tokens += reasons
            self.reason_output += output
        value = record.get("cost")
        priced = isinstance(value, int | float) and not isinstance(value, bool)
        cost = float(value) if isinstance(value, int | float) and priced else 0.0
        if priced:
            self.priced += 1
            self.cost += cost
        acts = record.get("acts")
        listed = acts if isinstance(acts, list) else []
        names = [a if isinstance(a, str) else INVALID for a in listed]
        share = 1 / len(names) if names else 1.0
        for name in names or [ANSWER]:
            bucket = self.by_act.setdefault(name, dict.fromkeys(BUCKET, 0.0))
            bucket["calls"] += 1 if names else 0
            bucket["input_tokens"] += share * (inputs or 0)
            bucket["output_tokens"] += share * (output or 0)
            bucket["reason_tokens"] += share * (reasons or 0)
            bucket["cost"] += share * cost

    def state(self) -> dict[str, Any]:
        """Everything, for a checkpoint (`from_state` is the inverse)."""
        return {name: getattr(self, name) for name in _STATE}

    @classmethod
    def from_state(cls, data: dict[str, Any]) -> Spend:
        return cls(**{name: data[name] for name in _STATE if name in data})

    def to_json(self) -> dict[str, Any]:
        """The summary readers show (keys documented in docs/stats.md, `spend`)."""
        acts = sorted(self.by_act, key=lambda a: (a in (ANSWER, INVALID), act_order(a), a))
        return {
            "model_calls": self.model_calls,
            "tokens_reported": self.reported,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cached_tokens": self.cached_tokens,
            "cache_creation_input_tokens": self.cache_creation_input_tokens,
            "reasoning_tokens": self.reasoning_tokens,
            "cost": round(self.cost, 6) if self.priced else None,
            "unpriced": self.model_calls - self.priced,
            "reason_tokens": self.reason_tokens,
            "reason_output_tokens": self.reason_output,
            "reason_share": round(self.reason_tokens / self.reason_output, 4)
            if self.reason_output
            else None,
            "thinking_records": self.thinking,
            "compactions": self.compactions,
            "by_act": {act: self._bucket(act) for act in acts},
        }

    def _bucket(self, act: str) -> dict[str, Any]:
        found = self.by_act[act]
        return {
            "calls": int(found["calls"]),
            "input_tokens": round(found["input_tokens"], 1),
            "output_tokens": round(found["output_tokens"], 1),
            "reason_tokens": round(found["reason_tokens"], 1),
            "cost": round(found["cost"], 6) if self.priced else None,
        }


_STATE = tuple(
    name
    for name in Spend.__annotations__  # the fields, in order
    if not name.startswith("_")
)


def spend_of(records: list[Record]) -> Spend:
    spend = Spend()
    for record in records:
        spend.fold(record)
    return spend


def dollars(cost: float | None) -> str:
    """$0.0123 for small sums, $12.34 for large ones; `-` when unknown."""
    if cost is None:
        return "-"
    return f"${cost:.4f}" if cost < 10 else f"${cost:,.2f}"


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
