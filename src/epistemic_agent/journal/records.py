"""The journal's record kinds: how they are built, and how a call's records merge into one view."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from ..core import field, is_mutating, now, struct
from ..gate import Call, Rejected
from .log import Record

if TYPE_CHECKING:
    from typing import Any

GIVEN_STRING_CAP = 4096


def call_record(seq: int, call: Call, inputs: dict[str, Any] | None) -> Record:
    """The write-ahead declaration of an accepted call, appended before it runs."""
    record: Record = {
        "kind": "call",
        "seq": seq,
        "t": now(),
        "tool": call.tool,
        "act": call.act,
        "mutating": call.mutating,
        "reason": call.reason,
        "command": call.describe(),
        "pid": os.getpid(),
    }
    if call.path is not None:
        record["path"] = call.path
    extra = {k: v for k, v in call.args.items() if k in ("start_line", "end_line")}
    if extra:
        record["lines"] = extra
    if inputs:
        record["inputs"] = inputs
    return record


def outcome_record(
    seq: int, ok: bool, outcome: str, duration: float, evidence: dict[str, Any], **extra: Any
) -> Record:
    record: Record = {
        "kind": "outcome",
        "seq": seq,
        "t": now(),
        "ok": ok,
        "outcome": outcome,
        "duration": round(duration, 6),
    }
    record.update(extra)
    record["evidence"] = evidence
    return record


def rejected_record(seq: int, rejected: Rejected) -> Record:
    record: Record = {
        "kind": "rejected",
        "seq": seq,
        "t": now(),
        "tool": rejected.tool,
        "act": rejected.act,
        "rule": rejected.rule,
        "message": rejected.message,
        "given": cap_given(rejected.given),
        "pid": os.getpid(),
    }
    return record


def cap_given(value: Any, depth: int = 0) -> Any:
    """What the caller sent, kept for the auditor but bounded: long strings are cut."""
    if isinstance(value, str):
        if len(value) <= GIVEN_STRING_CAP:
            return value
        return value[:GIVEN_STRING_CAP] + f"[... {len(value) - GIVEN_STRING_CAP} chars cut]"
    if depth > 8:
        return repr(value)[:200]
    if isinstance(value, dict):
        return {str(k): cap_given(v, depth + 1) for k, v in list(value.items())[:64]}
    if isinstance(value, list | tuple):
        return [cap_given(v, depth + 1) for v in list(value)[:64]]
    if value is None or isinstance(value, bool | int | float):
        return value
    return repr(value)[:GIVEN_STRING_CAP]


@struct(frozen=False)
class CallView:
    """One call as readers show it: its declaration (or rejection) merged with its outcome."""

    seq: int
    tool: str
    act: str | None
    mutating: bool | None
    status: str  # ran | rejected | denied | cancelled | unknown
    reason: str
    command: str
    rule: str | None = None
    message: str | None = None
    returncode: int | None = None
    ok: bool | None = None
    outcome: str = ""
    t: str = ""
    flags: list[dict[str, str]] = field(default_factory=list)
    enforcement: str | None = None
    observed: dict[str, Any] | None = None
    approval: dict[str, Any] | None = None  # decision, by, channel, rule, comment, t
    asked: bool = False  # the policy asked a human about it
    interrupted: bool = False  # its outcome says it was stopped before it finished
    output: dict[str, dict[str, Any]] | None = None  # its stdout and stderr evidence refs

    @property
    def fate(self) -> str:
        """What the call came to, in one word (journal/view.py says what each means)."""
        if self.status in ("rejected", "denied", "cancelled", "unknown"):
            return self.status
        if self.interrupted:
            return "aborted"
        return "ran" if self.ok else "failed"

    @property
    def label(self) -> str:
        """ok / FAILED / REJECTED / DENIED / CANCELLED / ABORTED, or for a call without an
        outcome yet `waiting for approval` or `running: no outcome yet`, as the report prints
        it."""
        if self.status == "rejected":
            return "REJECTED"
        if self.status == "denied":
            return "DENIED"
        if self.status == "cancelled":
            return "CANCELLED"
        if self.interrupted and self.status == "ran":
            return "ABORTED"
        if self.status == "unknown":
            if self.asked and self.approval is None:
                return "waiting for approval"
            return "running: no outcome yet"
        return "ok" if self.ok else "FAILED"

    def to_json(self) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "tool": self.tool,
            "act": self.act,
            "mutating": self.mutating,
            "status": self.status,
            "rule": self.rule,
            "reason": self.reason,
            "command": self.command,
            "returncode": self.returncode,
            "ok": self.ok,
            "outcome": self.outcome,
            "message": self.message,
            "t": self.t,
            "flags": self.flags,
            "enforcement": self.enforcement,
            "observed": self.observed,
            "approval": self.approval,
            "asked": self.asked,
            "interrupted": self.interrupted,
            "fate": self.fate,
            "output": self.output,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> CallView:
        """The inverse of `to_json` (for checkpoints)."""
        return cls(**{name: data[name] for name in _VIEW_FIELDS if name in data})

    def apply_approval(self, record: Record) -> None:
        self.approval = {
            key: record.get(key)
            for key in ("decision", "by", "channel", "rule", "comment", "t", "timed_out")
            if key in record
        }

    def apply_outcome(self, record: Record) -> None:
        self.status = "denied" if record.get("denied") is True else "ran"
        if record.get("cancelled") is True:
            self.status = "cancelled"
        self.ok = bool(record.get("ok"))
        code = record.get("returncode")
        self.returncode = code if isinstance(code, int) else None
        self.outcome = str(record.get("outcome", ""))
        flags = record.get("flags")
        self.flags = [f for f in flags if isinstance(f, dict)] if isinstance(flags, list) else []
        enforcement = record.get("enforcement")
        self.enforcement = enforcement if isinstance(enforcement, str) else None
        observed = record.get("observed")
        self.observed = observed if isinstance(observed, dict) else None
        self.interrupted = record.get("interrupted") is True
        evidence = record.get("evidence")
        refs = evidence if isinstance(evidence, dict) else {}
        output = {k: refs[k] for k in ("stdout", "stderr") if isinstance(refs.get(k), dict)}
        self.output = output or None


_VIEW_FIELDS = (
    "output",
    "interrupted",
    "approval",
    "asked",
    "flags",
    "enforcement",
    "observed",
    "seq",
    "tool",
    "act",
    "mutating",
    "status",
    "reason",
    "command",
    "rule",
    "message",
    "returncode",
    "ok",
    "outcome",
    "t",
)


def view_of(record: Record) -> CallView | None:
    """The view a `call` or `rejected` record starts; None for other kinds or bad records."""
    kind, seq = record.get("kind"), record.get("seq")
    if kind not in ("call", "rejected") or not isinstance(seq, int):
        return None
    act = record.get("act") if isinstance(record.get("act"), str) else None
    given = record.get("given")
    reason = record.get("reason")
    command = record.get("command")
    if kind == "rejected" and isinstance(given, dict):
        reason = given.get("reason")
        command = given.get("command")
        if command is None and isinstance(given.get("path"), str):
            command = f"{record.get('tool')} {given['path']}"
    mutating = record.get("mutating")
    return CallView(
        seq=seq,
        tool=str(record.get("tool", "?")),
        act=act,
        mutating=mutating if isinstance(mutating, bool) else (is_mutating(act) if act else None),
        status="rejected" if kind == "rejected" else "unknown",
        reason=reason if isinstance(reason, str) else "",
        command=command if isinstance(command, str) else "",
        rule=_text(record.get("rule")) if kind == "rejected" else None,
        message=_text(record.get("message")) if kind == "rejected" else None,
        t=str(record.get("t", "")),
        asked=isinstance(policy := record.get("policy"), dict) and policy.get("decision") == "ask",
    )


def _text(value: Any) -> str | None:
    """A field readers print: text as is, anything else (from a foreign writer) as JSON-ish."""
    return value if isinstance(value, str) or value is None else repr(value)


def seq_of(record: Record) -> int | None:
    seq = record.get("seq")
    return seq if isinstance(seq, int) and not isinstance(seq, bool) else None


def merge_calls(records: list[Record]) -> list[CallView]:
    """All calls in seq order, each merged with its outcome when there is one."""
    views: dict[int, CallView] = {}
    for record in records:
        view = view_of(record)
        if view is not None:
            views[view.seq] = view
        elif record.get("kind") == "outcome" and seq_of(record) in views:
            views[record["seq"]].apply_outcome(record)
        elif record.get("kind") == "approval" and seq_of(record) in views:
            views[record["seq"]].apply_approval(record)
    return [views[seq] for seq in sorted(views)]
