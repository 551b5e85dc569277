"""`epistemic show SEQ`: one call in full, like `git show`: its declaration (reason, command,
act, static checks), the policy's decision and who approved it, its outcome and flags, its
whole stdout and stderr from the evidence, and the diff of every file it changed.

Everything comes from the journal and the blobs its records name; a blob is shown only when
it matches its hash, and what cannot be shown is said (`problems`)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from ..core.errors import UsageError
from ..journal.blobs import read_blob
from ..journal.log import Record
from .rationale.words import before_calls

if TYPE_CHECKING:
    from typing import Any

    from ..journal.sessions import Loaded

#: Evidence shown as text, in this order (others are listed by name and hash).
SHOWN = ("stdout", "stderr", "content", "diff")
_OWN = frozenset({"call", "rejected", "outcome", "approval"})  # shown in their own fields


def gather(loaded: Loaded, seq: int) -> dict[str, Any]:
    """The call as `show --json` prints it: its records as journaled, and its evidence."""
    records = [r for r in loaded.records if r.get("seq") == seq and type(r.get("seq")) is int]
    declared = [r for r in records if r.get("kind") in ("call", "rejected")]
    if not declared:
        last = max((v.seq for v in loaded.views), default=0)
        raise UsageError(
            f"no call {seq} in {loaded.journal} (its calls are 1-{last})"
            if last
            else f"no call {seq} in {loaded.journal}: it records no calls"
        )
    evidence_dir = loaded.journal.parent / "evidence"
    outcome = next((r for r in records if r.get("kind") == "outcome"), None)
    shown: dict[str, Any] = {}
    problems: list[str] = []
    refs = (outcome or {}).get("evidence")
    for name, ref in refs.items() if isinstance(refs, dict) else []:
        blob = read_blob(evidence_dir, ref)
        if blob.data is None:
            problems.append(f"{name}: {blob.problem}")
            shown[name] = {"ref": ref, "text": None, "problem": blob.problem}
        else:
            shown[name] = {"ref": ref, "text": blob.text, "truncated": blob.truncated}
    view = next((v for v in loaded.views if v.seq == seq), None)
    integrity = loaded.integrity.to_json() if loaded.integrity is not None else None
    return {
        "seq": seq,
        "session": loaded.header.get("session"),
        "journal": str(loaded.journal),
        "integrity": integrity,
        "view": view.to_json() if view is not None else None,
        "declared": declared[0],
        "approvals": [r for r in records if r.get("kind") == "approval"],
        "outcome": outcome,
        "others": [r for r in records if r.get("kind") not in _OWN],
        "preceded_by": preceding_text(loaded.records, seq),
        "evidence": shown,
        "problems": problems,
    }


def preceding_text(records: list[Record], seq: int) -> list[str]:
    """The model's words (`text` records) since the call before this one, in order; words
    that ended a turn (a final answer, then a new user message) belong to no call."""

    return before_calls(records).get(seq, [])


def lines(shown: dict[str, Any]) -> list[str]:
    """The call for a terminal; every piece of recorded text escaped and indented."""
    declared, outcome = shown["declared"], shown["outcome"] or {}
    view = shown["view"] or {}
    status = view.get("status")
    label = ("ok" if view.get("ok") else "FAILED") if status == "ran" else str(status).upper()
    head = f"call {shown['seq']} · {declared.get('act') or '(no act)'} · {label}"
    out = [_plain(head), _plain(f"session {shown['session']} · {shown['journal']}")]
    integrity = shown.get("integrity") or {}
    if integrity.get("status") not in (None, "intact"):
        out.insert(
            0,
            _plain(
                f"WARNING: the journal does not verify ({integrity.get('status')}): "
                f"{integrity.get('problem')}"
            ),
        )
    out += [_plain(f"declared {declared.get('t')} · tool {declared.get('tool')}"), ""]
    for words in shown["preceded_by"]:
        out += ["The model said:", *_block(words), ""]
    out += ["Why:", *_block(str(declared.get("reason", ""))), ""]
    if declared.get("command"):
        out += ["Command:", *_block(str(declared["command"])), ""]
    out += _reviews(shown["others"])
    out += _facts(declared, shown["approvals"], outcome)
    for name in (*SHOWN, *sorted(set(shown["evidence"]) - set(SHOWN))):
        item = shown["evidence"].get(name)
        if item is None:
            continue
        ref = item["ref"] if isinstance(item["ref"], dict) else {}
        size = f"{ref.get('bytes')} bytes" + (", first part kept" if item.get("truncated") else "")
        out.append(_plain(f"── {name} ({size}) ──"))
        out += (
            _block(item["text"])
            if item["text"] is not None
            else [_plain(f"    (cannot be shown: {item['problem']})")]
        )
        out.append("")
    if not outcome and declared.get("kind") == "call":
        out.append("No outcome was recorded (still running, or the session was killed).")
    return out


def _reviews(others: list[Record]) -> list[str]:
    """The supervisor's second opinion on the call, as journaled before it ran."""
    out = []
    for record in (r for r in others if r.get("kind") == "review"):
        model = f"{record.get('provider')}:{record.get('model')}"
        if record.get("verdict") is not None:
            said = f"{record.get('verdict')}: {record.get('note') or ''}".rstrip(": ")
        else:
            said = f"failed to review ({record.get('failure')}): {record.get('error') or ''}"
        out.append(_plain(f"Supervisor ({model}) {said}"))
    return [*out, ""] if out else out


def _facts(declared: Record, approvals: list[Record], outcome: Record) -> list[str]:
    out: list[str] = []
    effect = declared.get("effect")
    if isinstance(effect, dict):
        out.append(_plain(f"Static check: {_compact(effect)}"))
    policy = declared.get("policy")
    if isinstance(policy, dict):
        out.append(_plain(f"Policy: {_compact(policy)}"))
    if declared.get("kind") == "rejected":
        out.append(_plain(f"Rejected ({declared.get('rule')}): {declared.get('message')}"))
    for record in approvals:
        who = record.get("by") or ("timeout" if record.get("timed_out") else "nobody")
        comment = f": {record.get('comment')}" if record.get("comment") else ""
        out.append(
            _plain(
                f"{str(record.get('decision', '?')).capitalize()} by {who} via "
                f"{record.get('channel')} at {record.get('answered') or record.get('t')} "
                f"(rule {record.get('rule') or 'default'}){comment}"
            )
        )
    if outcome:
        rest = {k: outcome.get(k) for k in ("ok", "returncode", "duration", "enforcement")}
        out.append(_plain(f"Outcome: {outcome.get('outcome')} ({_compact(rest)})"))
        if isinstance(outcome.get("observed"), dict):
            out.append(_plain(f"Observed: {_compact(outcome['observed'])}"))
        for flag in outcome.get("flags") or []:
            if isinstance(flag, dict):
                out.append(_plain(f"Flag {flag.get('flag')}: {flag.get('message')}"))
    return [*out, ""] if out else out


def _compact(value: dict[str, Any]) -> str:

    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))


def _plain(text: str) -> str:
    """One line: control characters (line breaks too) shown as escapes."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def _block(text: str) -> list[str]:
    """Several lines, each indented (no line of it can pass for one of ours), tabs kept and
    every other control character shown as an escape."""
    return [
        "    " + "".join(c if c.isprintable() or c == "\t" else repr(c)[1:-1] for c in line)
        for line in text.split("\n")
    ]
