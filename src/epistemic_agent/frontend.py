"""What `epistemic run`, `repl` and `demo` print: live lines and a summary, or JSON lines."""

from __future__ import annotations

import json
import sys
from typing import Any, TextIO

from .agent import Stop
from .providers.base import Turn
from .session import CallResult, Session


class LiveEvents:
    """One line per call and a spinner during model calls (rich, on a terminal)."""

    def __init__(self, stream: TextIO | None = None) -> None:
        from rich.console import Console

        self.console = Console(file=stream or sys.stdout, highlight=False)
        self._status: Any = None

    def model_started(self, step: int) -> None:
        if self.console.is_terminal:
            self._status = self.console.status(f"step {step}: waiting for the model…")
            self._status.start()

    def model_finished(self, step: int, turn: Turn, latency: float) -> None:
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
            f"model calls: {model.get('calls', 0)}, tokens: {_tokens(model)}",
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
        )

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
            report=str(session.layout.report),
            journal=str(session.layout.journal),
            journal_head={
                "lines": session.journal.position.lines,
                "head": session.journal.position.head,
            },
        )


def _tokens(model: Any) -> str:
    if "prompt_tokens" not in model and "completion_tokens" not in model:
        return "not reported"
    return (
        f"{model.get('prompt_tokens', 0)} prompt + {model.get('completion_tokens', 0)} completion"
    )
