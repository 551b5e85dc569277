"""The traceability matrix: one row per change-state or revert call, for an auditor, as
Markdown, CSV or HTML (`epistemic trace --matrix -o FILE`; columns in docs/traceability.md).
Agent text is data: escaped for Markdown and HTML, and CSV cells that a spreadsheet would
run as a formula (starting with = + - @, a tab or a carriage return) are quoted with '."""

from __future__ import annotations

import csv
import html
import io
from typing import TYPE_CHECKING

from ..rationale import mdsafe
from .model import Trace
from .view import policy_words, undid

if TYPE_CHECKING:
    from typing import Any

ROW_ACTS = ("change-state", "revert")
COLUMNS = (
    "session",
    "call",
    "act",
    "ticket",
    "reason",
    "files",
    "hunks",
    "policy",
    "approver",
    "verified by",
    "verify outcome",
    "status",
)
FORMATS = (".md", ".csv", ".html")


def rows(traces: list[Trace]) -> list[dict[str, Any]]:
    """The matrix's rows, JSON-ready, in session then call order."""
    found: list[dict[str, Any]] = []
    for trace in traces:
        reverts = undid(trace)
        for seq, call in sorted(trace.calls.items()):
            if call["act"] not in ROW_ACTS:
                continue
            changes = [c for c in trace.changes if c.seq == seq]
            verifying = sorted({v for c in changes for v in c.verified_by})
            after = trace.verifies_after(seq)
            approval = call["approval"] or {}
            found.append(
                {
                    "session": trace.session_id,
                    "call": seq,
                    "act": call["act"],
                    "ticket": call["ticket"],
                    "reason": call["reason"],
                    "files": [c.path for c in changes],
                    "hunks": [c.hunk or f"({c.missing or 'no diff kept'})" for c in changes],
                    "policy": policy_words(call),
                    "approver": approval.get("signer") or approval.get("by"),
                    "approval": approval.get("decision"),
                    "verified_by": verifying,
                    "verify_outcome": _outcome(after, verifying),
                    "status": _status(call, changes, verifying),
                    "undid": reverts.get(seq, []),
                }
            )
    return found


def _outcome(after: list[dict[str, Any]], verifying: list[int]) -> str:
    if verifying:
        return "passed"
    if after:
        return "failed"
    return "none"


def _status(call: dict[str, Any], changes: list[Any], verifying: list[int]) -> str:
    if not call["ok"]:
        return "failed"
    if not changes:
        return "changed nothing"
    return "verified" if verifying else "unverified"


def _cells(row: dict[str, Any]) -> list[str]:
    approver = row["approver"] or ""
    if row["approval"]:
        approver = f"{row['approval']} by {approver or 'nobody'}"
    undid_text = "; ".join(
        f"undid {', '.join(map(str, u['undoes'])) or 'nothing'} in {u['path']}"
        for u in row["undid"]
    )
    return [
        row["session"][:12],
        str(row["call"]),
        row["act"] + (f" ({undid_text})" if undid_text else ""),
        row["ticket"] or "",
        row["reason"],
        "\n".join(row["files"]),
        "\n".join(row["hunks"]),
        row["policy"],
        approver,
        ", ".join(map(str, row["verified_by"])),
        row["verify_outcome"],
        row["status"],
    ]


def to_csv(found: list[dict[str, Any]]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    for row in found:
        writer.writerow([csv_cell(cell) for cell in _cells(row)])
    return out.getvalue()


def csv_cell(text: str) -> str:
    """A cell a spreadsheet shows as text, never evaluates (OWASP's CSV injection advice)."""
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def to_markdown(found: list[dict[str, Any]]) -> str:
    lines = ["# Traceability matrix", ""]
    lines.append("| " + " | ".join(COLUMNS) + " |")
    lines.append("|" + "---|" * len(COLUMNS))
    for row in found:
        cells = _cells(row)
        cells[6] = " ".join(f"{len(h.splitlines())} diff line(s)" for h in row["hunks"])
        cells[5] = ", ".join(row["files"])
        shown = [mdsafe.code(c, cell=True) if i == 5 and c else _md(c) for i, c in enumerate(cells)]
        lines.append("| " + " | ".join(shown) + " |")
    if not found:
        lines.append("")
        lines.append("No change-state or revert call ran in these sessions.")
    return "\n".join(lines) + "\n"


def _md(text: str) -> str:
    return mdsafe.text(" ".join(text.split())) if text else ""


def to_html(found: list[dict[str, Any]], links: dict[str, str] | None = None) -> str:
    """A page; each row's call links to `links[session] + #call-N` when given (the HTML
    report of that session, `epistemic html`), else to an anchor of its own."""
    head = "".join(f"<th>{html.escape(c)}</th>" for c in COLUMNS)
    body = []
    for row in found:
        cells = _cells(row)
        target = (links or {}).get(row["session"], "")
        call = f'<a href="{html.escape(target)}#call-{row["call"]}">{row["call"]}</a>'
        shown = [html.escape(c) for c in cells]
        shown[1] = call
        shown[6] = f"<pre>{html.escape(cells[6])}</pre>"
        tds = "".join(f"<td>{cell}</td>" for cell in shown)
        anchor = f"row-{html.escape(row['session'][:12])}-{row['call']}"
        body.append(f'<tr id="{anchor}" class="{html.escape(row["status"])}">{tds}</tr>')
    style = (
        "body{font-family:sans-serif}table{border-collapse:collapse}td,th{border:1px solid "
        "#999;padding:4px;vertical-align:top}pre{margin:0;font-size:85%}tr.unverified "
        "td:last-child{color:#b00;font-weight:bold}"
    )
    return (
        '<!doctype html><html><head><meta charset="utf-8"><title>Traceability matrix</title>'
        f"<style>{style}</style></head><body><h1>Traceability matrix</h1>"
        f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
        "</body></html>\n"
    )


def render(found: list[dict[str, Any]], suffix: str, links: dict[str, str] | None = None) -> str:
    if suffix == ".csv":
        return to_csv(found)
    if suffix == ".html":
        return to_html(found, links)
    return to_markdown(found)
