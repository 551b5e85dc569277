"""The HTML page's **Beliefs** section: the ledger of beliefs (beliefs.py), refuted beliefs
that were acted on first, and the supervisor's notes. Every journal text goes through `esc`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...core import esc
from ...journal import Ledger, final
from ..rationale.beliefs import summary_line, supervisor_line, verdict_words

if TYPE_CHECKING:
    from typing import Any

    from ...journal import Record


def ledger_of(records: list[Record]) -> Ledger:
    ledger = Ledger()
    for record in records:
        ledger.fold(record)
    return ledger


def section(records: list[Record]) -> str:
    ledger = ledger_of(records)
    if not ledger.beliefs and not ledger.reviews:
        return ""
    parts = [f"<p>{esc(summary_line(ledger))}</p>"]
    if ledger.reviews:
        parts.append(f"<p>{esc(supervisor_line(ledger))}</p>")
    items = "".join(_belief(belief, ledger) for belief in ledger.ordered())
    if items:
        parts.append(f'<ol class="beliefs">{items}</ol>')
    if ledger.notes:
        notes = "".join(
            f'<li><a href="#call-{int(n["seq"])}">Call {int(n["seq"])}</a> '
            f"<code>{esc(n['verdict'])}</code>: {esc(n['note'])}</li>"
            for n in ledger.notes
        )
        parts.append(f"<h3>Supervisor notes</h3><ul>{notes}</ul>")
    return "\n".join(parts)


def _belief(belief: dict[str, Any], ledger: Ledger) -> str:
    seq = int(belief["seq"])
    verdict = final(belief)["verdict"]
    rows = [
        f'<p><a href="#call-{seq}">Call {seq}</a> · <b>{esc(verdict_words(belief))}</b></p>',
        f"<blockquote>{esc(belief['statement'])}</blockquote>",
        f"<p>Tested by <code>{esc(belief['command'])}</code>: "
        f"{esc(belief['outcome'] if belief['outcome'] is not None else '(no outcome yet)')}</p>",
    ]
    for given in belief["verdicts"]:
        why = f": {esc(given['why'])}" if given.get("why") else ""
        rows.append(
            f"<p><b>{esc(given['verdict'])}</b> by {esc(given['by'])} at call "
            f"{esc(given['at'])}{why}</p>"
        )
    if belief["acted_on"]:
        acts = ", ".join(
            f'<a href="#call-{int(a["seq"])}">call {int(a["seq"])}</a> <code>{esc(a["act"])}'
            f"</code> ({esc(', '.join(a['paths']))})"
            for a in belief["acted_on"]
        )
        rows.append(f"<p>Acted on by {acts}</p>")
    note = ledger.note_on(seq)
    if note is not None:
        rows.append(
            f"<p>Supervisor <code>{esc(note['verdict'])}</code> before it ran: "
            f"{esc(note['note'])}</p>"
        )
    return f'<li class="belief {esc(verdict)}">{"".join(rows)}</li>'
