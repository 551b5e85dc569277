"""`epistemic show SEQ`: one call in full, like `git show`: its declaration (reason, command,
act; for a rejected call, what it gave), the static check, the policy's decision and who
approved it, its outcome, what it changed and how it was confined, in sentences
(reports/sentences.py); its flags, its whole stdout and stderr from the evidence, and the diff
of every file it changed. `--output` prints only its output.

Everything comes from the journal and the blobs its records name; a blob is shown only when
it matches its hash, and what cannot be shown is said (`problems`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core import UsageError
from ..journal import Record, read_blob
from . import sentences
from .rationale.words import before_calls

if TYPE_CHECKING:
    from typing import Any

    from ..journal import Loaded

#: Evidence shown as text, in this order (others are listed by name and hash).
SHOWN = ("stdout", "stderr", "content", "diff")
OUTPUT = ("stdout", "stderr", "content")  # what `--output` prints (content: what read_file read)
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
    confined = sentences.confinement(
        declared[0].get("tool"),
        declared[0].get("act"),
        view.mutating if view is not None else declared[0].get("mutating"),
        outcome,
        _confinement_at(loaded.records, declared[0]),
        rejected=declared[0].get("kind") == "rejected",
    )
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
        "declaration": declaration(declared[0]),
        "confinement": confined.to_json(),
        "said": said(declared[0], outcome, sentences.policy_in_force(loaded.records, declared[0]))
        | {"confinement": confined.sentence},
    }


def declaration(record: Record) -> dict[str, Any]:
    """What the call declared: its reason, command and act as the record keeps them; for a
    rejected call, as it gave them (`given`: the gate refused them, so they were never
    accepted as a declaration)."""
    if record.get("kind") != "rejected":
        return {
            "rejected": False,
            "reason": record.get("reason"),
            "command": record.get("command"),
            "act": record.get("act"),
        }
    given = record.get("given")
    given = given if isinstance(given, dict) else {}
    command = given.get("command")
    if command is None and isinstance(given.get("path"), str):
        command = f"{record.get('tool')} {given['path']}"
    act = given.get("type", record.get("act"))
    return {"rejected": True, "reason": given.get("reason"), "command": command, "act": act}


def said(declared: Record, outcome: Record | None, policy: str | None) -> dict[str, str | None]:
    """The call's static check, the policy's decision and what it changed, in sentences."""
    effect, seen = declared.get("effect"), (outcome or {}).get("observed")
    decision = declared.get("policy")
    return {
        "static_check": sentences.static_check(effect) if isinstance(effect, dict) else None,
        "policy": sentences.policy_decision(decision, policy)
        if declared.get("kind") == "call" or isinstance(decision, dict)
        else None,
        "observed": sentences.observed(seen) if isinstance(seen, dict) else None,
    }


def _confinement_at(records: list[Record], declared: Record) -> object:
    """The session's confinement when the call was declared: the header's, or a later
    `confinement` record's (a process that continued the session under another)."""
    found: object = None
    for record in records:
        if record is declared:
            break
        if record.get("kind") == "session":
            found = record.get("confinement")
        elif record.get("kind") == "confinement":
            found = record
    return found


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
    given = shown.get("declaration") or declaration(declared)
    rejected = " (as given; the gate rejected this declaration)" if given["rejected"] else ""
    if given["rejected"] and given.get("act") is not None:
        out += [_plain(f"Act given: {given['act']}"), ""]
    reason = given.get("reason")
    if isinstance(reason, str) and reason.strip():
        out += [f"Why{rejected}:", *_block(reason), ""]
    else:
        out += [f"Why{rejected}: (no reason given)", ""]
    if given.get("command") is not None:
        out += [f"Command{rejected}:", *_block(str(given["command"])), ""]
    out += _reviews(shown["others"])
    out += _facts(declared, shown["approvals"], outcome, shown.get("said") or {})
    out += output_lines(shown)
    if not outcome and declared.get("kind") == "call":
        out.append("No outcome was recorded (still running, or the session was killed).")
    return out


def output_lines(shown: dict[str, Any], names: tuple[str, ...] | None = None) -> list[str]:
    """The evidence as text, each piece under a rule naming it and its size (`names`: only
    those, in that order; else every piece, SHOWN first)."""
    out: list[str] = []
    order = names or (*SHOWN, *sorted(set(shown["evidence"]) - set(SHOWN)))
    for name in order:
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
    return out


def output_only(shown: dict[str, Any]) -> list[str]:
    """`show --output`: the call's stdout and stderr (a read_file's content), whole as the
    evidence keeps them."""
    out = output_lines(shown, OUTPUT)
    if out:
        return out
    if shown["declared"].get("kind") == "rejected":
        return [_plain(f"call {shown['seq']} was rejected: it never ran, so it has no output")]
    if shown["outcome"] is None:
        return [_plain(f"call {shown['seq']} has no outcome, so no output was recorded")]
    return [_plain(f"call {shown['seq']} printed nothing (its outcome names no stdout or stderr)")]


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


def _facts(
    declared: Record, approvals: list[Record], outcome: Record, said: dict[str, Any]
) -> list[str]:
    out: list[str] = []
    if said.get("static_check"):
        out.append(_plain(f"Static check: {said['static_check']}"))
    if said.get("policy"):
        out.append(_plain(f"Policy: {said['policy']}"))
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
        out.append(_plain(f"Outcome: {outcome.get('outcome')} ({_how_it_ended(outcome)})"))
        if said.get("observed"):
            out.append(_plain(f"Observed: {said['observed']}"))
        if said.get("confinement"):
            out.append(_plain(f"Confinement: {said['confinement']}"))
        for flag in outcome.get("flags") or []:
            if isinstance(flag, dict):
                out.append(_plain(f"Flag {flag.get('flag')}: {flag.get('message')}"))
    return [*out, ""] if out else out


def _how_it_ended(outcome: Record) -> str:
    """`ok, exit status 0, 0.27 s` from the outcome's fields."""
    parts = ["ok" if outcome.get("ok") is True else "not ok"]
    code = outcome.get("returncode")
    if type(code) is int:
        parts.append(f"exit status {code}")
    elif outcome.get("timed_out") is True:
        parts.append("timed out")
    took = outcome.get("duration")
    if isinstance(took, int | float) and not isinstance(took, bool):
        parts.append(f"{took:.2f} s")
    return ", ".join(parts)


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
