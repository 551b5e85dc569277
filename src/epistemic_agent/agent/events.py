"""What `epistemic run`, `repl` and `demo` print as JSON lines (`--json`), and the text helpers
the live view (agent/live/view.py) shares."""

from __future__ import annotations

import json
import sys
from typing import Any, TextIO

from ..journal import Record, Spend, dollars
from ..providers import Turn
from ..reports import summary_line, supervisor_line
from ..session import CallResult, Session
from .loop import Stop


class JsonEvents:
    """One JSON object per line on stdout, for other programs."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stdout

    def emit(self, event: str, **fields: Any) -> None:
        self.stream.write(json.dumps({"event": event, **fields}, ensure_ascii=False) + "\n")
        self.stream.flush()

    def model_started(self, step: int) -> None:
        self.emit("model-start", step=step)

    def model_finished(self, step: int, turn: Turn, latency: float) -> None:
        self.emit(
            "model",
            step=step,
            latency=round(latency, 6),
            text=turn.text,
            calls=len(turn.calls),
            prompt_tokens=turn.usage.prompt_tokens,
            completion_tokens=turn.usage.completion_tokens,
            input_tokens=turn.usage.input_tokens,
            cached_tokens=turn.usage.cached_tokens,
            cache_creation_input_tokens=turn.usage.cache_creation_input_tokens,
            reasoning_tokens=turn.usage.reasoning_tokens,
            cost=turn.usage.cost,
        )

    def model_delta(self, step: int, kind: str, text: str) -> None:
        pass  # the whole text comes with the `model` event

    def call_started(self, record: Record) -> None:
        """The call as journaled, before it runs (or waits for approval)."""
        policy = record.get("policy")
        asked = isinstance(policy, dict) and policy.get("decision") == "ask"
        fields = {key: record.get(key) for key in ("seq", "tool", "act", "command", "reason")}
        self.emit("call-start", **fields, asked=asked)

    def call_finished(self, step: int, result: CallResult, command: str) -> None:
        self.emit("call", step=step, command=command, **result.to_json())

    def notice(self, text: str) -> None:
        self.emit("notice", text=text)

    def interrupt_requested(self) -> bool:
        return False  # the loop says it on stderr; the journal's `interrupt` record follows

    def summary(self, session: Session, stop: Stop) -> None:
        state = session.state
        tally = state.tally
        self.emit(
            "stop",
            reason=stop.reason,
            message=stop.message,
            exit_code=stop.exit_code,
            steps=stop.steps,
            final=stop.final,
            counts=dict(tally.declared),  # calls past the gate, by act (denied ones too)
            rejections=tally.fates["rejected"],
            reverts=tally.declared["revert"] - tally.denied["revert"],  # no human denied
            calls=tally.counted,  # fate -> calls (journal/view.py)
            ran=dict(tally.ran),  # act -> calls that ran
            reverts_ran=len(tally.reverts),
            tokens=dict(state.model),
            spend=state.spend.to_json(),
            report=str(session.layout.report),
            journal=str(session.layout.journal),
            journal_head={
                "lines": session.journal.position.lines,
                "head": session.journal.position.head,
            },
        )


def printable(text: str) -> str:
    """Model text for a terminal: line breaks kept, control characters shown as escapes."""
    return "".join(c if c in "\n\t" or c.isprintable() else repr(c)[1:-1] for c in text)


def usage_line(turn: Turn) -> str:
    """One model call's tokens and cost, when the provider reported them."""
    usage = turn.usage
    total = usage.input_tokens if usage.input_tokens is not None else usage.prompt_tokens
    if total is None and usage.completion_tokens is None:
        return ""
    cache = f"{usage.cached_tokens or 0:,} cached"
    if usage.cache_creation_input_tokens:
        cache += f", {usage.cache_creation_input_tokens:,} written to the cache"
    cost = f" · {dollars(usage.cost)}" if usage.cost is not None else ""
    return f"     tokens: {total or 0:,} in ({cache}) + {usage.completion_tokens or 0:,} out{cost}"


def spend_lines(spend: Spend) -> list[str]:
    """The session's cost, per act type, and what the reasons took (when tokens were seen)."""
    if not spend.reported:
        return []
    data = spend.to_json()
    unpriced = f" ({data['unpriced']} call(s) without a price)" if data["unpriced"] else ""
    acts = " · ".join(
        f"{printable(act)} {bucket['input_tokens'] + bucket['output_tokens']:,.0f} tokens"
        f" {dollars(bucket['cost'])}"
        for act, bucket in data["by_act"].items()
    )
    lines = [
        f"cost: {dollars(data['cost'])}{unpriced}; {data['cached_tokens']:,} input tokens read "
        f"from the cache, {data['cache_creation_input_tokens']:,} written",
        f"by act: {acts}",
    ]
    if data["reason_share"] is not None:
        lines.append(
            f"reasons: about {data['reason_tokens']:,} output tokens "
            f"({data['reason_share']:.1%} of the output)"
        )
    return lines


def supervisor_lines(ledger: Any) -> list[str]:
    """Beliefs tested, and the supervisor's reviews with its own tokens (not the agent's)."""
    if not ledger.beliefs and not ledger.reviews:
        return []

    return [summary_line(ledger), *([supervisor_line(ledger)] if ledger.reviews else [])]
