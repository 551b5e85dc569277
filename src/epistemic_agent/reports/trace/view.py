"""What `epistemic trace` prints: each file's history as JSON-ready data and as text, a
line's blame, and what each revert undid (keys documented in docs/traceability.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...core import visible
from .model import BEFORE, OUTSIDE, Change, Trace, TraceError, blame

if TYPE_CHECKING:
    from typing import Any


def undid(trace: Trace) -> dict[int, list[dict[str, Any]]]:
    """For each revert, per path: the earlier calls it undid, and whether it restored the
    file exactly as it was before the first of them (from the kept versions)."""
    result: dict[int, list[dict[str, Any]]] = {}
    history: dict[str, list[Change]] = {}
    for change in trace.changes:
        earlier = history.setdefault(change.path, [])
        if trace.calls[change.seq]["act"] == "revert":
            undone: list[int] = []
            restored = False
            for previous in reversed(earlier):
                if trace.calls[previous.seq]["act"] == "revert":
                    break
                undone.insert(0, previous.seq)
                if change.after is not None and previous.before == change.after:
                    restored = True
                    break
                if change.after is None and change.kind == "deleted" and previous.kind == "created":
                    restored = True
                    break
            result.setdefault(change.seq, []).append(
                {"path": change.path, "undoes": undone, "restored": restored}
            )
        earlier.append(change)
    return result


def file_json(trace: Trace, path: str) -> dict[str, Any]:
    """One file: its changes in order, then the verify calls after the last."""
    changes = trace.of_file(path)
    if not changes:
        raise TraceError(no_such_path(trace, path))
    reverts = undid(trace)
    last = changes[-1].seq
    return {
        "path": path,
        "changes": [change_json(trace, change, reverts) for change in changes],
        "verified_after_last_change": trace.verifies_after(last),
        "unverified": [c.seq for c in changes if not c.verified_by],
    }


def change_json(
    trace: Trace, change: Change, reverts: dict[int, list[dict[str, Any]]]
) -> dict[str, Any]:
    call = trace.calls[change.seq]
    found = {
        **{k: call[k] for k in ("seq", "act", "tool", "reason", "command", "ok", "t")},
        "policy": call["policy"],
        "policy_in_force": call.get("policy_in_force"),
        "approval": call["approval"],
        "ticket": call["ticket"],
        "path": change.path,
        "kind": change.kind,
        "hunk": change.hunk,
        "missing": change.missing,
        "verified_by": change.verified_by,
        "unverified": not change.verified_by,
    }
    if call["act"] == "revert":
        found["undid"] = next(
            (u for u in reverts.get(change.seq, []) if u["path"] == change.path), None
        )
    return found


def no_such_path(trace: Trace, path: str) -> str:
    files = trace.files()
    shown = ", ".join(files[:10]) + (" ..." if len(files) > 10 else "")
    session = trace.session_id[:12]
    return f"{path}: no call of session {session} changed it (it changed: {shown or 'nothing'})"


def line_json(trace: Trace, path: str, line: int) -> dict[str, Any]:
    """The call that last wrote a line, as the record ends with the file."""
    if not trace.of_file(path):
        raise TraceError(no_such_path(trace, path))
    found = blame(trace, path)
    if not found.lines and found.notes:  # the replay lost the file on the way
        raise TraceError(f"{path}: cannot show line {line}: {found.notes[-1]}")
    if line < 1 or line > len(found.lines):
        raise TraceError(
            f"{path}: line {line} is beyond the file as the record ends with it "
            f"({len(found.lines)} line(s))"
        )
    text, seq = found.lines[line - 1]
    result: dict[str, Any] = {
        "path": path,
        "line": line,
        "text": text.rstrip("\n"),
        "seq": seq if seq > 0 else None,
        "origin": "call" if seq > 0 else ("before-session" if seq == BEFORE else "unknown"),
        "notes": found.notes,
    }
    if seq > 0:
        change = next(c for c in trace.of_file(path) if c.seq == seq)
        result["call"] = change_json(trace, change, undid(trace))
    return result


def session_json(trace: Trace, path: str | None = None) -> dict[str, Any]:
    files = [path] if path is not None else trace.files()
    return {
        "session": trace.session_id,
        "journal": str(trace.loaded.journal),
        "files": [file_json(trace, name) for name in files],
        "notes": trace.notes,
    }


# -- text -------------------------------------------------------------------------------------


def render_session(data: dict[str, Any]) -> list[str]:
    lines = [f"session {data['session']}  ({visible(data['journal'])})"]
    for note in data["notes"]:
        lines.append(f"  cannot show: {visible(note)}")
    if not data["files"]:
        lines.append("  no call changed any file")
    for item in data["files"]:
        lines += render_file(item)
    return lines


def render_file(item: dict[str, Any]) -> list[str]:
    lines = ["", f"{visible(item['path'])}"]
    for change in item["changes"]:
        mark = "" if change["verified_by"] else "  **unverified**"
        lines.append(
            f"  call {change['seq']} {change['act']} ({change['kind']}){mark}: "
            f"{visible(_cut(change['reason'], 120))}"
        )
        lines.append(f"    command: {visible(_cut(change['command'], 120))}")
        lines.append(f"    {_decision(change)}")
        if change.get("undid"):
            lines.append(f"    undid: {_undid(change['undid'])}")
        if change["missing"] and change["hunk"]:  # a file tool's diff, without versions
            lines.append(f"    cannot blame lines through it: {visible(change['missing'])}")
        elif change["missing"]:
            lines.append(f"    cannot show the diff: {visible(change['missing'])}")
        for hunk_line in (change["hunk"] or "").splitlines()[2:]:
            lines.append(f"    | {visible(hunk_line)}")
    verifies = item["verified_after_last_change"]
    if not verifies:
        lines.append("  verified after the last change: by no verify call")
    for verify in verifies:
        state = "passed" if verify["ok"] else "FAILED"
        lines.append(
            f"  verified after the last change: call {verify['seq']} {state}: "
            f"{visible(_cut(verify['command'], 80))} ({visible(_cut(verify['outcome'], 60))})"
        )
    return lines


def render_line(data: dict[str, Any]) -> list[str]:
    head = f"{visible(data['path'])}:{data['line']}: {visible(data['text'])}"
    lines = [head]
    if data["seq"] is None:
        lines.append(
            "  written before the session (no call changed it)"
            if data["origin"] == "before-session"
            else "  written by something the record cannot name (see the notes)"
        )
    else:
        call = data["call"]
        mark = "" if call["verified_by"] else "  **unverified**"
        lines.append(f"  last written by call {call['seq']} {call['act']}{mark}")
        lines.append(f"    reason: {visible(call['reason'])}")
        lines.append(f"    command: {visible(_cut(call['command'], 120))}")
        lines.append(f"    {_decision(call)}")
        verified = ", ".join(map(str, call["verified_by"])) or "none"
        lines.append(f"    passing verify calls after it: {verified}")
    for note in data["notes"]:
        lines.append(f"  note: {visible(note)}")
    return lines


def policy_words(call: dict[str, Any]) -> str:
    """The policy in force named as the session header records it (`preset:approve-none`, a
    file's path), and its decision on the call: `preset:approve-none: no rules, allowed by
    default`, `/ws/epistemic.toml: ask (rule mutating)`; `none recorded` without a policy."""
    policy, source = call["policy"], call.get("policy_in_force")
    if policy:
        decided = f"{policy['decision']} (rule {policy['rule'] or 'default'})"
        return f"{source}: {decided}" if source else decided
    if source:
        return f"{source}: no rules, allowed by default"
    return "none recorded"


def _decision(change: dict[str, Any]) -> str:
    approval = change["approval"]
    text = f"policy: {visible(policy_words(change))}"
    if approval:
        who = approval.get("signer") or approval.get("by") or "nobody"
        signed = ", signed" if approval.get("signer") else ""
        text += f"; {approval.get('decision')} by {visible(str(who))}{signed}"
        if approval.get("comment"):
            text += f": {visible(_cut(str(approval['comment']), 80))}"
    if change.get("ticket"):
        text += f"; ticket {visible(str(change['ticket']))}"
    return text


def _undid(found: dict[str, Any]) -> str:
    seqs = ", ".join(map(str, found["undoes"])) or "nothing an earlier call changed"
    exact = " (restored exactly)" if found["restored"] else ""
    return f"call(s) {seqs}{exact}"


def _cut(text: object, width: int) -> str:
    flat = " ".join(str(text if text is not None else "").split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


__all__ = ["OUTSIDE", "file_json", "line_json", "session_json", "undid"]
