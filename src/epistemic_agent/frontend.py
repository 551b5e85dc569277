"""What `epistemic run`, `repl` and `demo` print: live lines and a summary, or JSON lines."""

from __future__ import annotations

import json
import sys
from typing import Any, TextIO

from .agent import Stop
from .providers.base import Turn
from .session import CallResult, Session
from .spend import Spend, dollars
from .tokens_text import tokens_line


class LiveEvents:
    """One line per call and a spinner during model calls (rich, on a terminal)."""

    def __init__(self, stream: TextIO | None = None) -> None:
        from rich.console import Console

        self.console = Console(file=stream or sys.stdout, highlight=False)
        self._status: Any = None
        self._streaming: str | None = None  # the kind of text being streamed, if any

    def model_started(self, step: int) -> None:
        if self.console.is_terminal:
            self._status = self.console.status(f"step {step}: waiting for the model…")
            self._status.start()

    def model_delta(self, step: int, kind: str, text: str) -> None:
        """The model's text (and thinking, dimmer) as it arrives."""
        from rich.text import Text

        self._stop_status()
        if self._streaming is not None and self._streaming != kind:
            self.console.print()
        self._streaming = kind
        style = "dim italic" if kind == "thinking" else "dim"
        self.console.print(Text(printable(text), style=style), end="", soft_wrap=True)

    def model_finished(self, step: int, turn: Turn, latency: float) -> None:
        self._stop_status()
        if self._streaming is not None:
            self.console.print()
            self._streaming = None
        elif turn.text and turn.calls:  # not streamed; a final answer comes in the summary
            self.console.print(printable(turn.text), style="dim", markup=False, soft_wrap=True)
        line = usage_line(turn)
        if line:
            self.console.print(line, style="dim", markup=False, soft_wrap=True)

    def _stop_status(self) -> None:
        if self._status is not None:
            self._status.stop()
            self._status = None

    def call_finished(self, step: int, result: CallResult, command: str) -> None:
        status = "ran" if result.status == "ran" else f"{result.status} {result.rule}"
        if result.status == "ran" and not result.ok:
            status = "ran, failed"
        act = result.act or "-"
        head = f"{step:>3}  {act:<15} {status:<12} {result.duration:6.2f}s  "
        width = max(self.console.width - len(head), 10)
        flat = " ".join(command.split())
        if result.tool != "bash":
            flat = f"{result.tool} {flat}".strip()
        if len(flat) > width:
            flat = flat[: width - 1] + "…"
        colour = "green" if result.ok else ("red" if result.status != "ran" else "yellow")
        from rich.text import Text  # plain text: a command's brackets are not markup

        self.console.print(Text(head, style=colour) + Text(flat), soft_wrap=True)

    def notice(self, text: str) -> None:
        self.model_finished(0, Turn(""), 0.0)
        self.console.print(text, style="bold", markup=False, soft_wrap=True)

    def summary(self, session: Session, stop: Stop) -> None:
        totals = session.report.totals
        acts = ", ".join(f"{act} {n}" for act, n in totals.counts.items() if n) or "none"
        model = totals.model
        lines = [
            "",
            f"stopped: {stop.reason} ({stop.message})",
            f"calls by act (the whole session so far): {acts}",
            f"rejections: {sum(totals.rejected.values())}, reverts: {len(totals.dead_ends)}",
            f"model calls: {model.get('calls', 0)}, tokens: {tokens_line(totals.spend.to_json())}",
            *spend_lines(totals.spend),
            f"report: {session.layout.report}",
            f"journal head: {session.journal.position.head} (line "
            f"{session.journal.position.lines}; check with epistemic verify --expect-head)",
        ]
        if stop.final:
            lines[1:1] = ["", stop.final.strip(), ""]
        for line in lines:  # never wrapped: paths must stay copyable
            self.console.print(line, markup=False, highlight=False, soft_wrap=True)


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

    def call_finished(self, step: int, result: CallResult, command: str) -> None:
        self.emit("call", step=step, command=command, **result.to_json())

    def notice(self, text: str) -> None:
        self.emit("notice", text=text)

    def summary(self, session: Session, stop: Stop) -> None:
        totals = session.report.totals
        self.emit(
            "stop",
            reason=stop.reason,
            message=stop.message,
            exit_code=stop.exit_code,
            steps=stop.steps,
            final=stop.final,
            counts=dict(totals.counts),
            rejections=sum(totals.rejected.values()),
            reverts=len(totals.dead_ends),
            tokens=dict(totals.model),
            spend=totals.spend.to_json(),
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
