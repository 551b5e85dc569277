"""The checks of `lint` an auditor runs on traceability (ids stable; docs/traceability.md):
changes never verified, verifies that could confirm nothing, reverts of nothing, and
approvals whose call changed paths outside what the approver was shown."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..journal import covers, inside, seq_of
from ..reports import build
from .findings import Finding

if TYPE_CHECKING:
    from ..journal import Loaded
CHECKS: dict[str, str] = {
    "trace/unverified": "a change (change-state or revert) that no passing verify followed",
    "trace/verify-before-change": "a verify that ran before any change it could confirm",
    "trace/revert-of-nothing": "a revert of paths no earlier call of the session changed",
    "trace/approval-exceeded": "an approved call that then changed paths outside the ones "
    "its approval request showed",
}
CHANGES = ("change-state", "revert")


def trace_findings(session: Loaded) -> list[Finding]:
    trace = build(session, evidence=False)
    lines = {
        seq: number
        for number, record in session.numbered()
        if record.get("kind") == "call" and (seq := seq_of(record)) is not None
    }
    found: list[Finding] = []

    def add(check: str, seq: int, message: str) -> None:
        found.append(Finding(check, message, seq, lines.get(seq)))

    changed_before: set[str] = set()
    any_change = False
    for seq, call in sorted(trace.calls.items()):
        mine = [c for c in trace.changes if c.seq == seq]
        if call["act"] == "verify" and not any_change:
            add("trace/verify-before-change", seq, f"call {seq} verified before any change")
        if call["act"] == "revert" and call["ok"]:
            paths = [c.path for c in mine]
            if not any(covers(changed_before, path) for path in paths):
                what = ", ".join(paths) or "nothing"
                add(
                    "trace/revert-of-nothing",
                    seq,
                    f"call {seq} reverted {what}, which no earlier call changed",
                )
        if call["act"] in CHANGES and mine:
            any_change = True
            unverified = [c.path for c in mine if not c.verified_by]
            if unverified:
                add(
                    "trace/unverified",
                    seq,
                    f"call {seq} changed {', '.join(unverified)}; no passing verify ran after it",
                )
        changed_before.update(c.path for c in mine)
    found += _exceeded(session)
    return found


def _exceeded(session: Loaded) -> list[Finding]:
    """Approved calls that changed what their request did not show."""
    workspace = str(session.header.get("workspace") or session.workspace)
    declared = {seq_of(r): (n, r) for n, r in session.numbered() if r.get("kind") == "call"}
    found = []
    for view in session.views:
        approval = view.approval or {}
        if approval.get("decision") != "approved" or view.observed is None:
            continue
        line, record = declared.get(view.seq, (None, {}))
        shown = set(_requested(record, workspace))
        observed = [
            str(p)
            for key in ("created", "modified", "deleted")
            for p in (view.observed.get(key) or [])
        ]
        outside = [p for p in observed if not covers(shown, p)]
        if outside:
            listed = ", ".join(outside[:5]) + (" ..." if len(outside) > 5 else "")
            request = ", ".join(sorted(shown)) or "no path"
            found.append(
                Finding(
                    "trace/approval-exceeded",
                    f"call {view.seq} was approved on a request showing {request}, then "
                    f"changed {listed}",
                    view.seq,
                    line,
                )
            )
    return found


def _requested(record: dict[str, object], workspace: str) -> list[str]:
    """The paths the approval request showed (guard.written_paths, from the record)."""
    effect = record.get("effect")
    if isinstance(effect, dict):
        paths = effect.get("paths")
        found = [inside(str(p), workspace) for p in paths] if isinstance(paths, list) else []
        return [p for p in found if p]
    path = record.get("path")
    return [str(path)] if isinstance(path, str) and record.get("tool") != "read_file" else []
