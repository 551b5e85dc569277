"""Reading finished (or running, or torn, or older) sessions from their journals alone: the
one loader behind `stats`, `diff`, `plot`, `html`, `lint` and `export`.

`load` never raises for what a journal holds: odd lines become notes. It raises `ReadError`
(a clear one-line message) only when there is nothing to read: a missing path, a file that
holds no journal record at all.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from .journal import Record, read_records
from .layout import RECORD_DIR
from .records import CallView, merge_calls, seq_of
from .structs import field, struct
from .vocabulary import act_order

TYPE_CHECKING = False  # typing is not imported at run time: start-up cost
if TYPE_CHECKING:
    from typing import Any

    from .verify import Verification

JOURNAL_NAME = "journal.jsonl"
MAX_DEPTH = 6  # how deep a folder of sessions is searched


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

    @property
    def header(self) -> dict[str, Any]:
        first = self.records[0] if self.records else {}
        return first if first.get("kind") == "session" else {}

    @property
    def workspace(self) -> Path:
        """The folder the journal's `.epistemic` sits in (where the session ran, if moved)."""
        parent = self.journal.parent
        return parent.parent if parent.name == RECORD_DIR else parent

    @property
    def name(self) -> str:
        """A short label: the workspace folder's name."""
        return self.workspace.name or str(self.journal)

    def of_kind(self, kind: str) -> list[Record]:
        return [record for record in self.records if record.get("kind") == kind]


def journal_of(target: Path) -> Path:
    """The journal a path names: a journal file, a workspace, or its `.epistemic` folder."""
    if target.is_file():
        return target
    for candidate in (target / RECORD_DIR / JOURNAL_NAME, target / JOURNAL_NAME):
        if candidate.is_file():
            return candidate
    if not target.exists():
        raise ReadError(f"{target}: no such file or directory")
    raise ReadError(f"{target}: no journal here (looked for {RECORD_DIR}/{JOURNAL_NAME})")


def find_journals(targets: list[Path]) -> list[Path]:
    """Journals named by paths: journal files, workspaces, or folders holding many sessions
    (searched a few levels down). Each journal once, in the order found."""
    found: list[Path] = []
    for target in targets:
        try:
            found.append(journal_of(target))
            continue
        except ReadError:
            if not target.is_dir():
                raise
        nested = sorted(_nested(target, MAX_DEPTH))
        if not nested:
            raise ReadError(f"{target}: no session journals in this folder")
        found.extend(nested)
    return list(dict.fromkeys(path.resolve() for path in found))


def _nested(folder: Path, depth: int) -> list[Path]:
    if depth <= 0:
        return []
    journals: list[Path] = []
    try:
        children = sorted(folder.iterdir())
    except OSError:
        return []
    for child in children:
        if child.name == RECORD_DIR and (child / JOURNAL_NAME).is_file():
            journals.append(child / JOURNAL_NAME)
        elif child.is_dir() and not child.is_symlink() and child.name != RECORD_DIR:
            journals.extend(_nested(child, depth - 1))
    return journals


def load(target: Path, verify: bool = True) -> Loaded:
    """Read one session; `verify` also checks its hash chain (and head anchor, if beside it)."""
    journal = journal_of(target)
    try:
        records, notes = read_records(journal)
    except OSError as error:
        raise ReadError(f"{journal}: cannot read: {error.strerror or error}") from None
    if not records:
        if journal.stat().st_size == 0:
            raise ReadError(f"{journal}: the journal is empty")
        raise ReadError(f"{journal}: not a journal (no line is a JSON object)")
    if not any(isinstance(r.get("kind"), str) for r in records):
        raise ReadError(f"{journal}: not a journal (no line has a record `kind`)")
    if records[0].get("kind") != "session":
        notes.append("the first line is not a session header; the session's facts are unknown")
    loaded = Loaded(journal, records, merge_calls(records), notes)
    if verify:
        from .verify import verify_journal

        anchor = journal.parent / "head.json"
        loaded.integrity = verify_journal(journal, anchor if anchor.is_file() else None)
    return loaded


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
        "wall_time": wall_time(session.records),
        "model_calls": len(model),
        "prompt_tokens": _sum(model, "prompt_tokens"),
        "completion_tokens": _sum(model, "completion_tokens"),
        "stop": ending[-1].get("reason") if ending else None,
        "changed": changed_files(session),
        "integrity": session.integrity.status if session.integrity else None,
        "notes": list(session.notes),
    }


def _policy_denied(view: CallView) -> bool:
    return view.status == "rejected" and view.rule == "policy"


def _sum(records: list[Record], key: str) -> int:
    return sum(value for r in records if isinstance(value := r.get(key), int))


def wall_time(records: list[Record]) -> float | None:
    """Seconds from the session's start to its last record, from the records' timestamps."""
    import datetime

    stamps = []
    for record in (records[0], records[-1]) if records else ():
        text = record.get("t") or record.get("started")
        if isinstance(text, str):
            try:
                stamps.append(datetime.datetime.fromisoformat(text.replace("Z", "+00:00")))
            except ValueError:
                return None
    if len(stamps) != 2:
        return None
    return round((stamps[1] - stamps[0]).total_seconds(), 3)


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
