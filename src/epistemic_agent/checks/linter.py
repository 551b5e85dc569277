"""The records of one journal folded in order, as the live session folded them: each call
re-checked against the gate and the history rules as it comes, each outcome's flags recomputed
from what was observed, and the record's own structure (seq numbers, outcomes) checked."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core import ACTS_BY_NAME, FILE_TOOL_ACTS, is_mutating
from ..effects import Effect
from ..effects import classify_command as classify
from ..execute import Changes, bounded_text
from ..gate import MIN_REASON, Call, GateConfig, Rejected
from ..gate import check_call as check
from ..journal import History, covers, inside, listed, newer_version, seq_of
from . import consistency
from .findings import Finding

if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from ..journal import Record

UNRECOMPUTABLE = frozenset(
    {"record-tampered", "commit-without-trailers", "protected-path-attempted"}
)  # only the live session can see it
_HEX = "0123456789abcdef"
OUTPUT_LIMIT = 16_000  # Settings.output_limit's default: the stderr the live check saw


class Linter:
    """Folds the records in order, like the live session did, checking each call as it comes."""

    def __init__(self, workspace: str, temp: str, evidence: Path) -> None:
        self.history = History(workspace)
        self.temp = temp
        self.evidence = evidence
        self.findings: list[Finding] = []
        self.notes: list[str] = []
        self.no_stderr: list[object] = []  # calls whose stderr evidence is missing
        self.calls: dict[int, Record] = {}
        self.seen: dict[int, Record] = {}  # calls and rejections: they share the seq
        self.outcomes: dict[int, Record] = {}
        self.last = 0

    def add(self, check: str, message: str, record: Record) -> None:
        line = record.get("n")
        self.findings.append(
            Finding(check, message, seq_of(record), line if isinstance(line, int) else None)
        )

    def run(self, records: list[Record]) -> None:
        ahead = _first_outcomes(records)
        for record in records:
            kind = record.get("kind")
            if kind in ("call", "rejected", "outcome") and seq_of(record) is None:
                self.add("record-malformed", f"a {kind} record without an integer seq", record)
            elif kind in ("call", "rejected"):
                self.sequence(record)
                if kind == "call":
                    self.calls[record["seq"]] = record
                    if self.understood(record):
                        self.check_call(record, ahead.get(record["seq"]))
            elif kind == "outcome":
                self.outcome(record)
            elif kind == "approval":
                self.approval(record)
            self.history.fold(record)
        if len(self.no_stderr) == 1:
            self.notes.append(
                f"call {self.no_stderr[0]}: its stderr evidence is missing; blocked-write "
                "was not rechecked"
            )
        elif self.no_stderr:
            self.notes.append(
                f"{len(self.no_stderr)} calls' stderr evidence is missing (calls "
                f"{listed(self.no_stderr)}); blocked-write was not rechecked for them"
            )
        for seq, call in self.calls.items():
            if seq not in self.outcomes:
                what = call.get("command") or call.get("tool")
                self.add(
                    "outcome-missing",
                    f"call {seq} ({what}) has no outcome: it was still "
                    "running when the journal was read, or its process was killed",
                    call,
                )

    def approval(self, record: Record) -> None:
        """Every approval that runs a call without a signature is listed (an auditor reads
        it as a claim, not as proof of who approved)."""
        if record.get("decision") == "approved" and record.get("signed") is not True:
            who = record.get("by") or "nobody named"
            channel = record.get("channel", "?")
            self.add(
                "approval-unsigned",
                f"call {seq_of(record)} was approved by {who} ({channel}) without a signature",
                record,
            )

    def understood(self, record: Record) -> bool:
        """Not of a newer version: no `v`, or an older one, is checked as the current one."""
        return newer_version(record) is None

    def sequence(self, record: Record) -> None:
        seq = record["seq"]
        if seq in self.seen:
            line = self.seen[seq].get("n")
            self.add("seq-duplicate", f"seq {seq} was already used on line {line}", record)
        elif seq <= self.last:
            self.add("seq-order", f"seq {seq} comes after seq {self.last}", record)
        elif seq > self.last + 1:
            missing = seq - self.last - 1
            self.add("seq-gap", f"seq {seq} follows seq {self.last}: {missing} missing", record)
        self.last = max(self.last, seq)
        self.seen.setdefault(seq, record)

    def outcome(self, record: Record) -> None:
        seq = record["seq"]
        call = self.calls.get(seq)
        if call is None:
            self.add("outcome-orphan", f"an outcome for seq {seq}, which no call declared", record)
        elif seq in self.outcomes:
            line = self.outcomes[seq].get("n")
            self.add(
                "outcome-duplicate", f"call {seq} already has an outcome (line {line})", record
            )
        else:
            self.outcomes[seq] = record
            if self.understood(call) and self.understood(record):
                self.check_flags(call, record)

    # -- a call against the gate and the history rules ----------------------------------------

    def check_call(self, record: Record, outcome: Record | None) -> None:
        tool, act = record.get("tool"), record.get("act")
        fixed = FILE_TOOL_ACTS.get(tool) if isinstance(tool, str) else None
        if fixed is not None and act != fixed:
            self.add("act-mismatch", f"{tool} is always {fixed}, recorded as {act!r}", record)
        mutating = record.get("mutating")
        known = ACTS_BY_NAME.get(act) if isinstance(act, str) else None
        if known is not None and isinstance(mutating, bool) and mutating != known.mutating:
            self.add("mutating-mismatch", f"{act} recorded as mutating={mutating}", record)
        effect = self.effect(record) if tool == "bash" else None
        command = record.get("command")  # the gate classifies it with $TMPDIR spelled out
        config = GateConfig(
            self.history.workspace,
            MIN_REASON,
            self.temp,
            lambda text: effect if effect is not None and text == command else classify(text),
        )
        verdict = check(tool, _args(record), config)
        if isinstance(verdict, Rejected):
            self.add(f"gate/{verdict.rule}", verdict.message, record)
            return
        if effect is None:
            return
        if verdict.act == "revert":
            refused = consistency.precheck(verdict, effect, self.history, 0.0)
            if refused is not None:
                self.add(f"gate/{refused.rule}", refused.message, record)
        if verdict.act == "cleanup":
            self.check_cleanup(record, effect, outcome)

    def check_cleanup(self, record: Record, effect: Effect, outcome: Record | None) -> None:
        """The gate looked at the disk; after the fact, the call's own observation shows what
        existed: a named path it deleted that the session had not created."""
        found = [inside(path, self.history.workspace) for path in effect.deletes]
        named = [p for p in found if p and p != "." and not covers(self.history.created, p)]
        observed = (outcome or {}).get("observed")
        if named and not isinstance(observed, dict):
            self.notes.append(
                f"call {record['seq']}: a cleanup deleting {', '.join(named)}; whether it existed "
                "before the session cannot be told (nothing was observed)"
            )
            return
        gone = observed.get("deleted") if named and observed else None
        deleted = {str(p) for p in gone} if isinstance(gone, list) else set()
        old = [p for p in named if covers(deleted, p)]
        if old:
            self.add(
                "gate/cleanup-preexisting",
                f"cleanup removes only this session's own artifacts; {', '.join(old)} existed "
                "before the session started (the call deleted it; the session had not created it)",
                record,
            )

    def effect(self, record: Record) -> Effect:
        """The recorded static effect, else the command classified now."""
        recorded = _effect_of(record.get("effect"))
        return recorded or classify(str(record.get("command") or ""))

    # -- the flags, recomputed from what was observed ------------------------------------------

    def check_flags(self, call: Record, outcome: Record) -> None:
        if outcome.get("denied") is True or outcome.get("interrupted") is True:
            return
        raised, skip = self.recompute(call, outcome)
        given = outcome.get("flags")
        recorded = {
            str(f.get("flag")): str(f.get("message", ""))
            for f in (given if isinstance(given, list) else [])
            if isinstance(f, dict)
        }
        recomputed = {str(f["flag"]): str(f["message"]) for f in raised}
        for check_id, message in _compare(recomputed, recorded, skip):
            self.add(check_id, message, outcome)

    def recompute(self, call: Record, outcome: Record) -> tuple[list[dict[str, Any]], set[str]]:
        """The flags the live session would have raised, and those that cannot be recomputed."""
        tool, act = str(call.get("tool")), str(call.get("act"))
        if tool != "bash":
            return _file_tool_flags(tool, outcome), set(UNRECOMPUTABLE)
        code = outcome.get("returncode")
        enforcement = str(outcome.get("enforcement") or "none")
        watched = enforcement != "none" and not is_mutating(act)  # a write could be blocked
        stderr = self.stderr(outcome) if watched else ""
        made = Call(tool, act, str(call.get("reason", "")), {}, command=str(call.get("command")))
        raised = consistency.flags(
            made,
            self.effect(call),
            _changes(outcome.get("observed")),
            enforcement,
            code if isinstance(code, int) else None,
            stderr or "",
            self.history,
        )
        return raised, set(UNRECOMPUTABLE) | ({"blocked-write"} if stderr is None else set())

    def stderr(self, outcome: Record) -> str | None:
        """The call's stderr as the live check read it; None when its evidence is missing."""
        evidence = outcome.get("evidence")
        ref = evidence.get("stderr") if isinstance(evidence, dict) else None
        if not isinstance(ref, dict):
            return ""
        digest = str(ref.get("sha256", ""))
        path = self.evidence / digest[:2] / digest
        if not (len(digest) == 64 and set(digest) <= set(_HEX)) or not path.is_file():
            self.no_stderr.append(outcome.get("seq"))
            return None
        return bounded_text(path, OUTPUT_LIMIT)


def _compare(
    recomputed: dict[str, str], recorded: dict[str, str], skip: set[str]
) -> list[tuple[str, str]]:
    """Each flag the call carries, then where the record and the recomputation disagree."""
    found = [
        (f"flag/{name}", message) if name in consistency.FLAGS else ("flag-unknown", name)
        for name, message in {**recomputed, **recorded}.items()
    ]
    found += [
        ("flag-not-recorded", f"recomputed {name} ({message}), but the outcome does not record it")
        for name, message in recomputed.items()
        if name not in recorded
    ]
    found += [
        ("flag-not-reproduced", f"the outcome records {name}; recomputing does not raise it")
        for name in recorded
        if name in consistency.FLAGS and name not in recomputed and name not in skip
    ]
    return found


def _file_tool_flags(tool: str, outcome: Record) -> list[dict[str, Any]]:
    """An edit that changed nothing (the live session's only file-tool flag)."""
    observed = outcome.get("observed")
    if tool == "read_file" or outcome.get("ok") is not True or not isinstance(observed, dict):
        return []
    if any(observed.get(key) for key in ("created", "modified", "deleted")):
        return []
    message = "declared change-state, but the new content equals the old"
    return [{"flag": "no-change", "message": message}]


def _first_outcomes(records: list[Record]) -> dict[int, Record]:
    found: dict[int, Record] = {}
    for record in records:
        seq = seq_of(record)
        if record.get("kind") == "outcome" and seq is not None:
            found.setdefault(seq, record)
    return found


def _args(record: Record) -> dict[str, Any]:
    """The arguments a recorded call was accepted with, as far as the record keeps them."""
    tool, reason = record.get("tool"), record.get("reason")
    if tool == "bash":
        return {"command": record.get("command"), "type": record.get("act"), "reason": reason}
    args: dict[str, Any] = {"path": record.get("path"), "reason": reason}
    lines = record.get("lines")
    if tool == "read_file" and isinstance(lines, dict):
        args.update((k, v) for k, v in lines.items() if k in ("start_line", "end_line"))
    if tool == "write_file":
        args["content"] = ""  # kept as evidence, not in the record: not what the gate checks
    if tool == "str_replace_edit":
        args.update(old="old", new="new")
    return args


def _effect_of(data: object) -> Effect | None:
    if not isinstance(data, dict) or not isinstance(data.get("class"), str):
        return None
    lists = [data.get(key, []) for key in ("writes", "deletes", "reasons")]
    if not all(isinstance(value, list) for value in lists):
        return None
    writes, deletes, reasons = (tuple(str(v) for v in value) for value in lists)
    return Effect(data["class"], writes, deletes, data.get("dynamic") is True, reasons)


def _changes(observed: object) -> Changes | None:
    if not isinstance(observed, dict):
        return None
    lists = [observed.get(key, []) for key in ("created", "modified", "deleted")]
    created, modified, deleted = (
        tuple(str(p) for p in value) if isinstance(value, list) else () for value in lists
    )
    method = str(observed.get("method", "snapshot"))
    return Changes(created, modified, deleted, method, observed.get("complete") is not False)
