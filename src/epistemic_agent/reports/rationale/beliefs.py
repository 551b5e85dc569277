"""RATIONALE.md's **Beliefs** section (each test-hypothesis, its test, its verdict and what was
done about it, refuted beliefs that were acted on first) and the supervisor's notes."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...journal import Ledger, final
from .mdsafe import block, code, text

if TYPE_CHECKING:
    from typing import Any

SHOWN = 50  # beliefs listed in full; the rest are counted


def summary_line(ledger: Ledger) -> str:
    counts = ledger.counts()
    return (
        f"{counts['tested']} belief(s) tested: {counts['confirmed']} confirmed, "
        f"{counts['refuted']} refuted, {counts['unsettled']} unsettled."
    )


def supervisor_line(ledger: Ledger) -> str:
    reviews = ledger.reviews
    total = sum(reviews.values())
    tokens = ledger.spend["input_tokens"] + ledger.spend["completion_tokens"]
    cost = f", ${ledger.cost:.4f}" if ledger.cost else ""
    return (
        f"The supervisor (a second opinion, not proof) reviewed {total} call(s): "
        f"{reviews['flag']} flagged, {reviews['block']} blocked, {reviews['failed']} failed "
        f"to review ({tokens} tokens of its own{cost})."
    )


def verdict_words(belief: dict[str, Any]) -> str:
    """`refuted (agent, at call 10)` or `unsettled (no one said)`."""
    given = final(belief)
    if given["by"] is None:
        return "unsettled (no one said)"
    return f"{given['verdict']} ({given['by']}, at call {given['at']})"


def section(ledger: Ledger, kept: dict[int, tuple[int, list[str]]] | None = None) -> str:
    """The section; `kept` (the caller's, across calls) holds each shown belief's lines with
    the ledger's revision of it, so only a belief that changed is rendered again."""
    if not ledger.beliefs and not ledger.reviews:
        return ""
    lines = ["## Beliefs", "", summary_line(ledger)]
    if ledger.reviews:
        lines += ["", supervisor_line(ledger)]
    lines.append("")
    shown = ledger.ordered(SHOWN)
    lines += _beliefs(shown, ledger, {} if kept is None else kept)
    if len(ledger.beliefs) > SHOWN:
        lines += [f"_{len(ledger.beliefs) - SHOWN} more belief(s) are in the journal._", ""]
    if ledger.notes:
        lines += ["### Supervisor notes", ""]
        for note in ledger.notes[-SHOWN:]:
            lines.append(
                f"- **Call {text(note['seq'])}** {code(note['verdict'])}: {text(note['note'])}"
            )
        lines.append("")
    return "\n".join(lines) + "\n"


def _beliefs(
    shown: list[dict[str, Any]], ledger: Ledger, kept: dict[int, tuple[int, list[str]]]
) -> list[str]:
    """The shown beliefs' lines, from `kept` where their revision has not moved; `kept` is
    left holding the shown ones only."""
    lines: list[str] = []
    fresh: dict[int, tuple[int, list[str]]] = {}
    for belief in shown:
        seq, revision = int(belief["seq"]), ledger.revision(int(belief["seq"]))
        known = kept.get(seq)
        fresh[seq] = (
            known if known and known[0] == revision else (revision, _belief(belief, ledger))
        )
        lines += fresh[seq][1]
    kept.clear()
    kept.update(fresh)
    return lines


def _belief(belief: dict[str, Any], ledger: Ledger) -> list[str]:
    verdict = final(belief)["verdict"]
    mark = "✗" if verdict == "refuted" else "✓" if verdict == "confirmed" else "?"
    title = f"### {mark} Belief of call {belief['seq']} · {text(verdict_words(belief))}"
    if belief["acted_on"]:
        title += f" · acted on by {len(belief['acted_on'])} call(s)"
    statement = str(belief["statement"])
    lines = [title, ""]
    lines += [block(statement) if "\n" in statement else f"> {text(statement, True)}", ""]
    outcome = belief["outcome"] if belief["outcome"] is not None else "(no outcome yet)"
    lines.append(f"- **Tested by** {code(_short(belief['command']))}: {text(_short(outcome))}")
    for given in belief["verdicts"]:
        why = f": {text(given['why'])}" if given.get("why") else ""
        who = f"by {text(given['by'])} at call {text(given['at'])}"
        lines.append(f"- **{text(given['verdict'])}** {who}{why}")
    if belief["acted_on"]:
        acts = [
            f"call {text(a['seq'])} {code(a['act'])} ({', '.join(code(p) for p in a['paths'])})"
            for a in belief["acted_on"]
        ]
        lines.append(f"- **Acted on by** {', '.join(acts)}")
    note = ledger.note_on(belief["seq"])
    if note is not None:
        lines.append(
            f"- **Supervisor** {code(note['verdict'])} before it ran: {text(note['note'])}"
        )
    return [*lines, ""]


def _short(value: object, limit: int = 160) -> str:
    flat = " ".join(str(value).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
