"""`epistemic trace`: from an artefact back to intent. For each file a session changed, the
calls that changed it (act, reason, approval and signer, hunk), the verify calls after its
last change, and for a line, the call that last wrote it (a blame by declared act). Read from
the journal and its evidence alone; docs/traceability.md.

A change is *verified* when a `verify` call that succeeded ran after it in the same session;
otherwise it is *unverified*. Blame replays each file's versions (versions.py): the first
kept `before` is the file as the session found it; each call's `after` is diffed against the
state so far, so lines it did not touch keep who wrote them.
"""

from __future__ import annotations

import hashlib
import re
from difflib import SequenceMatcher
from typing import TYPE_CHECKING

from ...core import EpistemicError, field, struct
from ...journal import seq_of
from ..sentences import policy_source

if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from ...journal import CallView, Loaded, Record

TICKET = re.compile(r"(?i:ticket)\s*[:=#]\s*(\S+)|\b([A-Z][A-Z0-9_]+-\d+)\b")
BEFORE = 0  # blame: the line was there when the session found the file
OUTSIDE = -1  # blame: changed by something the record cannot name (between calls, not kept)


class TraceError(EpistemicError):
    """A question the record cannot answer: a path not in the session, a line beyond it."""


@struct(frozen=False)
class Change:
    """One call's change to one file."""

    seq: int
    path: str
    kind: str  # created | modified | deleted
    hunk: str | None  # the unified diff of this file in this call, when kept
    before: str | None = None  # sha256 of the content before (None: absent or not kept)
    after: str | None = None
    missing: str | None = None  # why the content is not shown
    verified_by: list[int] = field(default_factory=list)


@struct(frozen=False)
class Trace:
    """One session's changes, by call and by file."""

    loaded: Loaded
    calls: dict[int, dict[str, Any]]  # seq -> the call's facts (act, reason, approval...)
    changes: list[Change]
    verifies: list[dict[str, Any]]
    notes: list[str] = field(default_factory=list)

    @property
    def session_id(self) -> str:
        return str(self.loaded.header.get("session", ""))

    def files(self) -> list[str]:
        return sorted({change.path for change in self.changes})

    def of_file(self, path: str) -> list[Change]:
        return [change for change in self.changes if change.path == path]

    def verifies_after(self, seq: int) -> list[dict[str, Any]]:
        return [v for v in self.verifies if v["seq"] > seq]

    def unverified(self) -> list[Change]:
        return [change for change in self.changes if not change.verified_by]


def build(loaded: Loaded, evidence: bool = True) -> Trace:
    """The trace of one loaded session; without `evidence`, no blob is read (no hunks, no
    check of the versions: what counting needs is in the journal)."""
    outcomes = _first_outcomes(loaded.records)
    approvals = {seq: r for r in loaded.of_kind("approval") if (seq := seq_of(r)) is not None}
    declared = {seq: r for r in loaded.of_kind("call") if (seq := seq_of(r)) is not None}
    store = Blobs(loaded.journal.parent / "evidence") if evidence else None
    header_ticket = loaded.header.get("ticket")
    in_force = policies_in_force(loaded.records)
    trace = Trace(loaded, {}, [], [])
    for view in loaded.views:
        if view.status not in ("ran", "cancelled"):
            continue
        outcome = outcomes.get(view.seq, {})
        facts = call_facts(view, declared.get(view.seq, {}), approvals.get(view.seq))
        facts["ticket"] = facts["ticket"] or (
            header_ticket if isinstance(header_ticket, str) else None
        )
        facts["policy_in_force"] = in_force.get(view.seq)
        trace.calls[view.seq] = facts
        if view.act == "verify":
            trace.verifies.append(facts)
        trace.changes += changes_of(view, outcome, store, trace.notes)
    for change in trace.changes:
        change.verified_by = [v["seq"] for v in trace.verifies_after(change.seq) if v["ok"]]
    return trace


def policies_in_force(records: list[Record]) -> dict[int, str | None]:
    """The policy in force as each call was declared, named as the session header (or a later
    `policy` record) records it: a file's path or `preset:NAME`; None when none is recorded."""
    source: str | None = None
    found: dict[int, str | None] = {}
    for record in records:
        kind = record.get("kind")
        if kind in ("session", "policy"):
            named = policy_source(record.get("policy") if kind == "session" else record)
            source = named or source
        elif kind in ("call", "rejected") and (seq := seq_of(record)) is not None:
            found.setdefault(seq, source)
    return found


def call_facts(view: CallView, declared: Record, approval: Record | None) -> dict[str, Any]:
    """What trace shows of a call: act, reason, command, outcome, policy and approval."""
    policy = declared.get("policy") if isinstance(declared.get("policy"), dict) else None
    shown = None
    if approval is not None:
        shown = {
            key: approval.get(key)
            for key in ("decision", "by", "signer", "signed", "channel", "comment", "key")
            if approval.get(key) is not None
        }
    comment = str(approval.get("comment") or "") if approval is not None else ""
    found = TICKET.search(comment)
    recorded = declared.get("ticket")
    return {
        "seq": view.seq,
        "tool": view.tool,
        "act": view.act,
        "reason": view.reason,
        "command": view.command,
        "status": view.status,
        "ok": view.ok,
        "outcome": view.outcome,
        "t": view.t,
        "policy": {"decision": policy.get("decision"), "rule": policy.get("rule")}
        if policy
        else None,
        "approval": shown,
        "ticket": recorded
        if isinstance(recorded, str) and recorded
        else ((found.group(1) or found.group(2)) if found else None),
    }


def changes_of(
    view: CallView, outcome: Record, store: Blobs | None, notes: list[str]
) -> list[Change]:
    """The files one call changed, each with its hunk and versions where kept."""
    observed = outcome.get("observed") if isinstance(outcome.get("observed"), dict) else {}
    kinds: dict[str, str] = {}
    for kind in ("created", "modified", "deleted"):
        paths = observed.get(kind) if isinstance(observed, dict) else None
        for path in paths if isinstance(paths, list) else []:
            kinds.setdefault(str(path), kind)
    versions = outcome.get("versions")
    entries = [e for e in versions if isinstance(e, dict)] if isinstance(versions, list) else []
    by_path = {str(e.get("path")): e for e in entries}
    hunks = split_diff(store.text(_ref(outcome, "diff")) or "") if store is not None else {}
    found: list[Change] = []
    kept = isinstance(versions, list)  # the session had a baseline for this call
    cut = outcome.get("versions_cut")
    for path, kind in kinds.items():
        entry = by_path.get(path)
        unseen = entry is None and path not in hunks
        if unseen and ((kept and not cut) or not _maybe_file(path, kinds)):
            continue  # a folder, or a path that is no file: nothing to show
        change = Change(view.seq, path, kind, hunks.get(path))
        if entry is None and cut:
            change.missing = f"not kept: the call changed more paths than are diffed ({cut} more)"
        elif entry is None:
            change.missing = "no versions were kept for this call (recorded without a baseline)"
        elif "skipped" in entry:
            change.missing = f"its content was not kept: {entry['skipped']}"
        else:
            change.before, change.after = _side(entry.get("before")), _side(entry.get("after"))
            if store is not None:
                _check_sides(change, entry, store, notes)
        found.append(change)
    return found


def _check_sides(change: Change, entry: dict[str, Any], store: Blobs, notes: list[str]) -> None:
    """What of a change's kept versions and hunk the evidence cannot show."""
    for side in ("before", "after"):
        problem = store.problem(entry.get(side))
        if problem is not None:
            change.missing = problem
            notes.append(f"call {change.seq}, {change.path}: {problem}")
    if change.hunk is None and change.missing is None and change.before != change.after:
        change.missing = "its diff is missing from the evidence"


def _maybe_file(path: str, kinds: dict[str, str]) -> bool:
    """A path another listed path is beneath is a folder."""
    prefix = path + "/"
    return not any(other.startswith(prefix) for other in kinds)


def _ref(outcome: Record, name: str) -> object:
    evidence = outcome.get("evidence")
    return evidence.get(name) if isinstance(evidence, dict) else None


EMPTY_SHA = hashlib.sha256(b"").hexdigest()


def _side(value: object) -> str | None:
    if value == "empty":
        return EMPTY_SHA
    if isinstance(value, dict) and isinstance(value.get("sha256"), str):
        return str(value["sha256"])
    return None


def split_diff(text: str) -> dict[str, str]:
    """A multi-file unified diff (`--- a/P` / `+++ b/P` headers) as {path: its part}."""
    parts: dict[str, list[str]] = {}
    current: list[str] | None = None
    lines = text.splitlines(keepends=True)
    for index, line in enumerate(lines):
        following = lines[index + 1] if index + 1 < len(lines) else ""
        if line.startswith("--- a/") and following.startswith("+++ b/"):
            path = following[6:].rstrip("\n")
            current = parts.setdefault(path, [])
        if current is not None:
            current.append(line)
    return {path: "".join(part) for path, part in parts.items()}


class Blobs:
    """Reading evidence blobs by digest, checked against it."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def read(self, digest: str) -> bytes | None:
        try:
            data = (self.root / digest[:2] / digest).read_bytes()
        except OSError:
            return None
        return data if hashlib.sha256(data).hexdigest() == digest else None

    def text(self, ref: object) -> str | None:
        if not isinstance(ref, dict) or not isinstance(ref.get("sha256"), str):
            return None
        data = self.read(str(ref["sha256"]))
        return data.decode("utf-8", "surrogateescape") if data is not None else None

    def lines(self, digest: str | None) -> list[str] | None:
        if digest is None:
            return []
        if digest == EMPTY_SHA:
            return []
        data = self.read(digest)
        if data is None:
            return None
        return data.decode("utf-8", "surrogateescape").splitlines(keepends=True)

    def problem(self, ref: object) -> str | None:
        """Why a ref's blob cannot be shown (missing, altered, cut), or None."""
        if not isinstance(ref, dict) or not isinstance(ref.get("sha256"), str):
            return None
        digest = str(ref["sha256"])
        if ref.get("kept") != ref.get("bytes"):
            return f"evidence {digest[:12]} was cut at {ref.get('kept')} bytes"
        if self.read(digest) is None:
            return f"evidence {digest[:12]} is missing or altered"
        return None


def _first_outcomes(records: list[Record]) -> dict[int, Record]:
    found: dict[int, Record] = {}
    for record in records:
        if record.get("kind") == "outcome" and (seq := seq_of(record)) is not None:
            found.setdefault(seq, record)
    return found


# -- blame ------------------------------------------------------------------------------------


@struct(frozen=False)
class Blame:
    """A file's lines as the record ends with them, each with the call that wrote it."""

    path: str
    lines: list[tuple[str, int]]  # text, seq (BEFORE: there already; OUTSIDE: unknown)
    notes: list[str]


def blame(trace: Trace, path: str) -> Blame:
    """Replay the file's kept versions in order."""
    store = Blobs(trace.loaded.journal.parent / "evidence")
    state: list[tuple[str, int]] | None = None
    digest: str | None = None
    notes: list[str] = []
    for change in trace.of_file(path):
        if change.missing is not None:
            notes.append(f"call {change.seq}: {change.missing}; its lines are shown as unknown")
            state, digest = None, None
            continue
        before = store.lines(change.before)
        after = store.lines(change.after)
        if before is None or after is None:
            notes.append(f"call {change.seq}: its versions are missing from the evidence")
            state, digest = None, None
            continue
        if state is None:
            origin = BEFORE if not notes else OUTSIDE
            state = [(line, origin) for line in before]
        elif digest != change.before:
            notes.append(
                f"before call {change.seq} the file was changed by something no call recorded "
                "(a human, or another process, between calls)"
            )
            state = _advance(state, before, OUTSIDE)
        state = _advance(state, after, change.seq)
        digest = change.after
    return Blame(path, state or [], notes)


def _advance(state: list[tuple[str, int]], new: list[str], seq: int) -> list[tuple[str, int]]:
    """The new lines, each keeping its writer where the old state had it unchanged."""
    old = [line for line, _ in state]
    result: list[tuple[str, int]] = []
    matcher = SequenceMatcher(None, old, new, autojunk=False)
    for op, a0, a1, b0, b1 in matcher.get_opcodes():
        if op == "equal":
            result += state[a0:a1]
        else:
            result += [(line, seq) for line in new[b0:b1]]
    return result
