"""Reading finished (or running, or torn, or older) sessions from their journals alone: the
one loader behind `stats`, `diff`, `plot`, `html`, `lint` and `export`.

`load` never raises for what a journal holds: odd lines become notes, and a field readers rely
on that has the wrong type (a foreign or broken writer's) is read as absent, with a note. It
raises `ReadError` (a clear one-line message) only when there is nothing to read: a missing
path, a file that holds no journal record at all.
"""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.layout import JOURNAL_NAME, RECORD_DIR, workspace_of
from ..core.structs import field, struct
from ..core.tokens_text import input_sum
from ..core.vocabulary import act_order
from .log import FORMAT_VERSION, Record
from .reading import newer_version, read_numbered
from .records import CallView, merge_calls, seq_of

if TYPE_CHECKING:
    import datetime
    from typing import Any

    from .verify import Verification

MAX_DEPTH = 6  # how deep a folder of sessions is searched
#: The record kinds of the format (docs/journal-format.md); a reader skips others' timestamps.
KNOWN_KINDS = frozenset(
    {"session", "call", "outcome", "rejected", "approval", "policy", "alert", "run", "user"}
    | {"model", "model-error", "text", "final", "interrupt", "stop", "recovery", "review"}
)
#: What each type is called in a note.
TYPES = {
    "text": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "a boolean",
    "object": "an object",
    "array": "an array",
}


def _typed(**fields: str) -> dict[str, str]:
    """{field: type} from type="field field ..."."""
    return {name: kind for kind, names in fields.items() for name in names.split()}


#: Every record's `t`; then the fields readers rely on, by record kind, and the type each must
#: have (null is as if absent).
COMMON = _typed(text="t")
FIELDS: dict[str, dict[str, str]] = {
    "session": _typed(text="started session task model workspace", object="policy"),
    "call": _typed(
        integer="seq",
        text="tool act reason command path",
        boolean="mutating",
        object="lines effect policy",
    ),
    "rejected": _typed(integer="seq", text="act rule message", object="policy"),
    "outcome": _typed(
        integer="seq returncode",
        number="duration",
        text="outcome enforcement",
        boolean="ok denied interrupted",
        array="flags",
        object="observed",
    ),
    "approval": _typed(
        integer="seq",
        text="decision by channel rule comment",
        number="waited",
        boolean="timed_out",
    ),
    "policy": _typed(text="source sha256"),
    "model": _typed(integer="prompt_tokens completion_tokens cached_tokens"),
    "run": _typed(text="model task"),
    "stop": _typed(text="reason message"),
    "final": _typed(text="text"),
}
FIELDS = {kind: COMMON | fields for kind, fields in FIELDS.items()}
#: The object inside a record whose fields are lists of paths, by record kind.
PATH_LISTS = {
    "call": ("effect", ("writes", "deletes")),
    "outcome": ("observed", ("created", "modified", "deleted")),
}
FUTURE_SLACK = 86_400.0  # a writer's clock may run ahead of the reader's, not by a day
BACKWARDS_SLACK = 1.0  # records are stamped before their writer takes the journal's lock


class ReadError(Exception):
    """Nothing to read at a path: missing, not a journal, not JSON."""


@struct(frozen=False)
class Loaded:
    """One session as its journal tells it."""

    journal: Path
    records: list[Record]
    views: list[CallView]
    notes: list[str] = field(default_factory=list)
    integrity: Verification | None = None
    lines: list[int] = field(default_factory=list)  # each record's line number in the file
    wall_time: float | None = None  # seconds: see `wall_time`

    def numbered(self) -> list[tuple[int, Record]]:
        """Each record with its line number (its position, when the numbers are not known)."""
        lines = self.lines if len(self.lines) == len(self.records) else None
        return list(zip(lines or range(1, len(self.records) + 1), self.records, strict=True))

    @property
    def header(self) -> dict[str, Any]:
        first = self.records[0] if self.records else {}
        return first if first.get("kind") == "session" else {}

    @property
    def workspace(self) -> Path:
        """The folder the journal's `.epistemic` sits in (where the session ran, if moved)."""
        parent = self.journal.parent
        return workspace_of(parent) or parent

    @property
    def name(self) -> str:
        """A short label: the workspace folder's name."""
        return self.workspace.name or str(self.journal)

    def of_kind(self, kind: str) -> list[Record]:
        return [record for record in self.records if record.get("kind") == kind]


def journal_of(target: Path, session: str | None = None) -> Path:
    """The journal a path names: a journal file, a session's folder, or a workspace (or its
    `.epistemic` folder): its newest session, or the one `session` names (an id or unique
    prefix; `catalog.UnknownSession` when it names none)."""
    if target.is_file():
        return target
    if (target / JOURNAL_NAME).is_file() and workspace_of(target) is None:
        return target / JOURNAL_NAME  # a folder holding a journal: a damaged copy, a bundle
    from .catalog import find_layout

    if target.name == RECORD_DIR or (target / RECORD_DIR).is_dir() or workspace_of(target):
        journal = find_layout(target, session).journal
        if journal.is_file():
            return journal
    if not target.exists():
        raise ReadError(f"{target}: no such file or directory")
    raise ReadError(f"{target}: no journal here (looked for {RECORD_DIR}/{JOURNAL_NAME})")


def find_journals(targets: list[Path], session: str | None = None) -> list[Path]:
    """Journals named by paths: journal files, workspaces (every session of each, or the one
    `session` names), or folders holding many workspaces (searched a few levels down). Each
    journal once, in the order found."""
    found: list[Path] = []
    for target in targets:
        every = _sessions_of(target) if session is None else []
        if every:
            found.extend(every)
            continue
        try:
            found.append(journal_of(target, session))
            continue
        except ReadError:
            if not target.is_dir():
                raise
        nested = sorted(_nested(target, MAX_DEPTH))
        if not nested:
            raise ReadError(f"{target}: no session journals in this folder")
        found.extend(nested)
    return list(dict.fromkeys(path.resolve() for path in found))


def _sessions_of(target: Path) -> list[Path]:
    """Every session's journal of a workspace (or of its `.epistemic` folder), oldest first."""
    from .catalog import listing

    folder = target.parent if target.name == RECORD_DIR else target
    if not (folder / RECORD_DIR).is_dir():
        return []
    return [entry.layout.journal for entry in listing(folder.resolve())]


def _nested(folder: Path, depth: int) -> list[Path]:
    if depth <= 0:
        return []
    journals: list[Path] = []
    try:
        children = sorted(folder.iterdir())
    except OSError:
        return []
    for child in children:
        if child.name == RECORD_DIR and (every := _sessions_of(child)):
            journals.extend(every)
        elif child.is_dir() and not child.is_symlink() and child.name != RECORD_DIR:
            journals.extend(_nested(child, depth - 1))
    return journals


def load(target: Path, verify: bool = True, session: str | None = None) -> Loaded:
    """Read one session (of a workspace: its newest, or the one `session` names); `verify`
    also checks its hash chain (and head anchor, if beside it)."""
    journal = journal_of(target, session)
    try:
        numbered, notes = read_numbered(journal)
    except OSError as error:
        raise ReadError(f"{journal}: cannot read: {error.strerror or error}") from None
    records = [record for _, record in numbered]
    if not records:
        if journal.stat().st_size == 0:
            raise ReadError(f"{journal}: the journal is empty")
        raise ReadError(f"{journal}: not a journal (no line is a JSON object)")
    if not any(isinstance(r.get("kind"), str) for r in records):
        raise ReadError(f"{journal}: not a journal (no line has a record `kind`)")
    if records[0].get("kind") != "session":
        notes.append("the first line is not a session header; the session's facts are unknown")
    notes += check_fields(numbered) + version_notes(records)
    wall, timing = wall_time(numbered)
    loaded = Loaded(
        journal,
        records,
        merge_calls(records),
        notes + timing,
        lines=[number for number, _ in numbered],
        wall_time=wall,
    )
    if verify:
        from .verify import verify_journal

        anchor = journal.parent / "head.json"
        loaded.integrity = verify_journal(journal, anchor if anchor.is_file() else None)
    return loaded


def check_fields(numbered: list[tuple[int, Record]]) -> list[str]:
    """Remove each field readers rely on (COMMON, FIELDS, PATH_LISTS) that has the wrong type,
    so that it reads as absent; one note says how many, which, and where."""
    dropped: dict[str, list[int]] = {}
    for line, record in numbered:
        kind = record.get("kind")
        kind = kind if isinstance(kind, str) else ""
        named = kind if kind in KNOWN_KINDS else "record"  # a foreign kind is not echoed
        for what in _drop_wrong(record, kind):
            dropped.setdefault(f"{named} {what}", []).append(line)
    if not dropped:
        return []
    total = sum(map(len, dropped.values()))
    parts = [f"{what} (line {_lines(lines)})" for what, lines in dropped.items()]
    shown = "; ".join(parts[:4]) + ("; …" if len(parts) > 4 else "")
    seq = any("`seq`" in what for what in dropped)
    unplaced = "; a record without its `seq` cannot be matched to its call" if seq else ""
    return [f"{total} field(s) of the wrong type were read as absent: {shown}{unplaced}"]


def _drop_wrong(record: Record, kind: str) -> list[str]:
    """Remove the fields of one record that have the wrong type; say which."""
    wrong = []
    for name, wanted in FIELDS.get(kind, COMMON).items():
        value = record.get(name)
        if type(value) is not _EXACT.get(wanted) and not _fits(value, wanted):
            del record[name]
            wrong.append(f"`{name}` is not {TYPES[wanted]}")
    owner, names = PATH_LISTS.get(kind, ("", ()))
    inner = record.get(owner)
    if isinstance(inner, dict):
        for name in names:
            if not _fits(inner.get(name), "array"):
                del inner[name]
                wrong.append(f"`{owner}.{name}` is not an array")
    return wrong


#: The Python type JSON gives each type (a number is an int or a finite float).
_EXACT = {"text": str, "integer": int, "boolean": bool, "object": dict, "array": list}


def _fits(value: object, wanted: str) -> bool:
    """Whether a field's value has the type wanted (null: as if absent, always fits)."""
    if value is None:
        return True
    if type(value) is bool:
        return wanted == "boolean"
    if wanted == "number":
        return type(value) is int or (type(value) is float and math.isfinite(value))
    return isinstance(value, _EXACT[wanted])


def _lines(lines: list[int]) -> str:
    return str(lines[0]) if len(lines) == 1 else f"{lines[0]} and {len(lines) - 1} more"


def summary(session: Loaded) -> dict[str, Any]:
    """The numbers `stats` prints for one session (JSON-ready; stable keys, additive only)."""
    views = session.views
    ran = [v for v in views if v.status not in ("rejected",)]
    acts = Counter(v.act for v in ran if v.act)
    total = sum(acts.values())
    model = session.of_kind("model")
    ending = session.of_kind("stop")
    approvals = Counter(str(r.get("decision")) for r in session.of_kind("approval"))
    flags = Counter(str(f.get("flag")) for v in views for f in v.flags)
    return {
        "session": session.header.get("session"),
        "journal": str(session.journal),
        "name": session.name,
        "task": session.header.get("task"),
        "model": session.header.get("model"),
        "calls": len(views),
        "acts": {act: acts[act] for act in sorted(acts, key=act_order)},
        "shares": {act: round(acts[act] / total, 4) for act in sorted(acts, key=act_order)},
        "rejections": dict(Counter(str(v.rule) for v in views if v.status == "rejected")),
        "failed": sum(1 for v in ran if v.status == "ran" and v.ok is False),
        "unknown": sum(1 for v in views if v.status == "unknown"),
        "flags": dict(flags),
        "reverts": acts.get("revert", 0),
        "dead_ends": [v.seq for v in ran if v.act == "revert"],
        "approved": approvals.get("approved", 0),
        "denied": approvals.get("denied", 0) + sum(1 for v in views if _policy_denied(v)),
        "hypotheses": acts.get("test-hypothesis", 0),
        "wall_time": session.wall_time,
        "model_calls": len(model),
        "prompt_tokens": _sum(model, "prompt_tokens"),
        "completion_tokens": _sum(model, "completion_tokens"),
        "input_tokens": input_sum(model),  # all input, cached or not (tokens_text.py)
        "stop": ending[-1].get("reason") if ending else None,
        "changed": changed_files(session),
        "integrity": session.integrity.status if session.integrity else None,
        "notes": list(session.notes),
    }


def _policy_denied(view: CallView) -> bool:
    return view.status == "rejected" and view.rule == "policy"


def _sum(records: list[Record], key: str) -> int:
    return sum(value for r in records if isinstance(value := r.get(key), int))


#: What a note says of timestamps that cannot be the session's end, and what came of them.
ODD_TIMES = {
    "unreadable": ("cannot be read", "wall time ignores them"),
    "future": ("lie in the future, after this reader's clock", "wall time ignores them"),
    "backwards": (
        "go back in time, earlier than one before them",
        "wall time runs from the start to the latest timestamp",
    ),
}


def wall_time(numbered: list[tuple[int, Record]]) -> tuple[float | None, list[str]]:
    """Seconds from the session's start (the header's `started`, else the first timestamp) to
    the latest timestamp of a record this reader knows (a known kind, not a newer version),
    never below 0; and notes on timestamps that cannot be read, lie in the future (neither
    counts) or go back in time."""
    from datetime import UTC, datetime, timedelta

    limit = datetime.now(UTC) + timedelta(seconds=FUTURE_SLACK)
    start = latest = None
    odd: dict[str, list[int]] = {key: [] for key in ODD_TIMES}
    for line, record in numbered:
        kind = record.get("kind")
        if not isinstance(kind, str) or kind not in KNOWN_KINDS or newer_version(record):
            continue
        text = record.get("started" if kind == "session" else "t")
        if text is None:
            continue
        moment = _moment(text)
        if moment is None or moment > limit:
            odd["unreadable" if moment is None else "future"].append(line)
            continue
        if latest is None or start is None:
            start = latest = moment
        elif moment > latest:
            latest = moment
        elif (latest - moment).total_seconds() > BACKWARDS_SLACK:
            odd["backwards"].append(line)
    notes = [
        f"{len(lines)} timestamp(s) {ODD_TIMES[key][0]} (the first is line {lines[0]}); "
        + ODD_TIMES[key][1]
        for key, lines in odd.items()
        if lines
    ]
    if start is None or latest is None:
        return None, notes
    return round(max(0.0, (latest - start).total_seconds()), 3), notes


def _moment(text: object) -> datetime.datetime | None:
    """An ISO 8601 timestamp, in UTC (without a zone: taken as UTC); None if it is not one."""
    from datetime import UTC, datetime, timedelta

    if not isinstance(text, str):
        return None
    try:
        moment = datetime.fromisoformat(text)
        if moment.tzinfo is None:
            return moment.replace(tzinfo=UTC)
        return moment if moment.utcoffset() == timedelta(0) else moment.astimezone(UTC)
    except (ValueError, OverflowError):
        return None


def version_notes(records: list[Record]) -> list[str]:
    """Notes on lines older than this reader, or without a format version: both are read as
    the current version (newer ones are noted by `journal.read_numbered`)."""
    older = Counter(v for r in records if type(v := r.get("v")) is int and v < FORMAT_VERSION)
    unversioned = sum(1 for record in records if type(record.get("v")) is not int)
    read_as = f"read as version {FORMAT_VERSION}"
    read_as += " (the only version there is)" if FORMAT_VERSION == 1 else ""
    notes = [
        f"{count} line(s) have format version {version}, older than this reader's "
        f"{FORMAT_VERSION}; {read_as}"
        for version, count in sorted(older.items())
    ]
    if unversioned:
        notes.append(f"{unversioned} line(s) carry no format version `v`; {read_as}")
    return notes


def changed_files(session: Loaded) -> dict[str, list[str]]:
    """The workspace paths the session's calls were seen to create, modify and delete."""
    changed: dict[str, dict[str, None]] = {"created": {}, "modified": {}, "deleted": {}}
    for view in session.views:
        for key, paths in (view.observed or {}).items():
            if key in changed and isinstance(paths, list):
                changed[key].update(dict.fromkeys(str(p) for p in paths))
    return {key: sorted(paths) for key, paths in changed.items()}


def call_seqs(records: list[Record]) -> list[int]:
    """The seq of every call and rejection, in journal order."""
    return [
        seq
        for r in records
        if r.get("kind") in ("call", "rejected") and (seq := seq_of(r)) is not None
    ]
