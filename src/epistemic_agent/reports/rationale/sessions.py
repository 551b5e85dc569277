"""RATIONALE.md's list of the workspace's other sessions: each one's id, start, task, calls and
status, with its journal and the command that renders its own report."""

from __future__ import annotations

from pathlib import Path

from ...journal import Entry
from .mdsafe import code, text

SHOWN = 20  # the newest sessions listed; the rest are counted


def others(entries: list[Entry], current: Path) -> str:
    """`## Other sessions in this workspace`, oldest first; "" when there are none."""
    rest = [entry for entry in entries if entry.layout.folder != current]
    if not rest:
        return ""
    lines = ["## Other sessions in this workspace", ""]
    hidden = len(rest) - SHOWN
    if hidden > 0:
        lines += [f"_{hidden} older session(s) not listed: `epistemic sessions` lists all._", ""]
    for entry in rest[-SHOWN:]:
        lines.append(_line(entry))
    lines += [
        "",
        "_`epistemic report --session ID` renders a session's own report; "
        "`epistemic sessions` lists them all._",
        "",
    ]
    return "\n".join(lines) + "\n"


def _line(entry: Entry) -> str:
    facts = entry.to_json()
    task = facts["task"] or facts["client"] or facts["mode"] or "no task (exec/tool calls)"
    journal = entry.layout.relative(entry.layout.journal)
    return (
        f"- {code(entry.id[:12])} started {text(entry.started or '?')}: {text(task)} · "
        f"{entry.calls} call(s) · {text(entry.status)} · [journal]({journal})"
    )
