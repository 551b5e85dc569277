"""The live view's rows, as `rich.text.Text` (record text is never read as markup).

    ● 12 verify          python3 -m pytest -q
         the fix must make the failing test pass without breaking the others
         ✗ 1.42 s · exit 1 · AssertionError: expected 7, got 5
    ⊘ 13 rejected        cat notes.txt
         reason-missing: every call needs a reason ...

A row starts with a mark, the journal's seq and the act (or `rejected`), in fixed columns, so
a refused call keeps the columns of the others; its second line says why. Every line is cut to
the terminal's width, never wrapped.
"""

from __future__ import annotations

import textwrap
from typing import TYPE_CHECKING

from rich.text import Text

from ...core import informative_line as outcome_line
from ...journal import dollars
from ..events import printable

if TYPE_CHECKING:
    from typing import Any

    from ...journal import Record
    from ...session import CallResult
    from ..loop import Stop
    from .totals import AnswerTotals

SEQ_WIDTH = 3
REASON_LINES = 3  # a longer reason ends in …: the record has it whole
ACT_WIDTH = 15  # test-hypothesis
INDENT = " " * (2 + SEQ_WIDTH + 1)  # under the act: the mark, the seq and a space


def visible_line(text: str) -> str:
    """Text as one terminal line: whitespace runs (line breaks too) made one space, control
    characters shown as escapes."""
    return printable(" ".join(text.split()))


def wrapped(text: str, width: int, most: int = REASON_LINES) -> list[str]:
    """Text in lines of at most `width`, at most `most` of them (the last cut with …)."""
    lines = textwrap.wrap(text, max(width, 20), break_on_hyphens=False)
    if len(lines) > most:
        lines = [*lines[: most - 1], " ".join(lines[most - 1 :])]
    return lines


def _head(mark: str, seq: int, label: str, command: str, style: str) -> Text:
    head = Text(f"{mark} {seq:>{SEQ_WIDTH}} ", style=style)
    head.append(f"{label:<{ACT_WIDTH}} ", style=f"bold {style}".strip())
    head.append(visible_line(command))
    return head


def start_lines(record: Record, width: int) -> list[Text]:
    """A call as it starts: seq, act and command as journaled; then its reason."""
    command = str(record.get("command") or "")
    act = record.get("act")
    lines = [_head("●", int(record["seq"]), str(act or "-"), command, "cyan")]
    reason = str(record.get("reason") or "")
    for part in wrapped(visible_line(reason), width - len(INDENT)):
        lines.append(Text(INDENT + part, style="dim"))
    policy = record.get("policy")
    if isinstance(policy, dict) and policy.get("decision") == "ask":
        lines.append(Text(f"{INDENT}waiting for approval", style="yellow"))
    return _cut(lines, width)


def finish_line(result: CallResult, width: int) -> Text:
    """How a declared call ended: ✓ or ✗, its duration, and for a failure the line of its
    output that says why (core/outcome_line.py: the runner's summary and the exception or
    assertion, the same line the outcome record keeps, here uncut)."""
    took = f"{result.duration:.2f} s"
    if result.status == "ran" and result.ok:
        line = Text(f"{INDENT}✓ {took}", style="green")
    elif result.status in ("denied", "cancelled"):
        line = Text(f"{INDENT}✗ {result.status}", style="red")
        line.append(f" · {visible_line(result.message or result.outcome)}")
    else:
        line = Text(f"{INDENT}✗ {took}", style="red")
        if result.timed_out:
            line.append(" · timed out")
        elif result.returncode is not None:
            line.append(f" · exit {result.returncode}")
        why = outcome_line(result.stdout, result.stderr, failed=True) or result.outcome
        if why:
            line.append(f" · {visible_line(why)}")
    for flag in result.flags:
        line.append(f" ⚠ {visible_line(flag)}", style="yellow")
    return _cut([line], width)[0]


def aborted_line(seq: int, width: int) -> Text:
    """The row that ends a call an interruption stopped (it has no result of its own)."""
    line = Text(f"{INDENT}✗ aborted", style="red")
    line.append(f" · #{seq} was interrupted before it finished")
    return _cut([line], width)[0]


def rejection_lines(result: CallResult, command: str, width: int) -> list[Text]:
    """A call refused before it was declared (by the gate or a policy rule): its own style,
    the same columns; the rule and its message on the second line."""
    shown = command if result.tool in ("bash", "(none)") else f"{result.tool} {command}"
    lines = [_head("⊘", result.seq, "rejected", shown.strip(), "red")]
    why = f"{result.rule}: {result.message}" if result.rule else str(result.message or "")
    lines.append(Text(INDENT + visible_line(why), style="red"))
    return _cut(lines, width)


def answer_line(stop: Stop, answer: AnswerTotals, elapsed: float, width: int) -> Text:
    """The REPL's one line after an answer."""
    finished = stop.reason == "finished"
    parts = ["finished" if finished else f"stopped: {stop.reason} ({stop.message})"]
    calls = answer.seqs
    if calls:
        span = f"#{calls[0]}" if len(calls) == 1 else f"#{calls[0]}–#{calls[-1]}"
        parts.append(f"{len(calls)} call{'s' if len(calls) != 1 else ''} {span}")
    else:
        parts.append("no calls")
    if answer.refused:
        parts.append(f"{answer.refused} refused")
    if answer.failed:
        parts.append(f"{answer.failed} failed")
    if answer.aborted:
        parts.append(f"{answer.aborted} aborted")
    if answer.tokens is not None:
        parts.append(f"{answer.tokens:,} tokens")
    if answer.cost is not None:
        parts.append(dollars(answer.cost))
    parts.append(f"{elapsed:.1f} s")
    mark, style = ("✓ ", "green") if finished else ("■ ", "yellow")
    line = Text(mark + " · ".join(parts), style=style)
    return _cut([line], width)[0]


def _cut(lines: list[Text], width: int) -> list[Text]:
    for line in lines:
        line.truncate(max(width, 20), overflow="ellipsis")
    return lines


def review_line(review: dict[str, Any]) -> Text:
    """The supervisor's flag, block or failure under its call's row (an ok says nothing)."""
    said = review.get("verdict") or f"failed ({review.get('failure')})"
    note = visible_line(str(review.get("note") or ""))
    return Text(f"   supervisor {said}: ", style="bold magenta") + Text(note)
