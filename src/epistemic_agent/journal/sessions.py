"""Reading finished (or running, or torn, or older) sessions from their journals alone: the
one loader behind `stats`, `diff`, `plot`, `html`, `lint` and `export`.

`load` never raises for what a journal holds: odd lines become notes, and a field readers rely
on that has the wrong type (a foreign or broken writer's) is read as absent, with a note. It
raises `ReadError` (a clear one-line message) only when there is nothing to read: a missing
path, a file that holds no journal record at all.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ..core import JOURNAL_NAME, RECORD_DIR, EpistemicError, field, struct, workspace_of
from .catalog import find_layout, listing
from .log import Record
from .reading import read_numbered
from .record_fields import check_fields, version_notes
from .records import CallView, merge_calls
from .timing import wall_time
from .verify import Verification, verify_journal
from .view import Tally, tally_of

if TYPE_CHECKING:
    from typing import Any

MAX_DEPTH = 6  # how deep a folder of sessions is searched


class ReadError(EpistemicError):
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
    tally: Tally = field(default_factory=Tally)  # the counts every reader shows (view.py)

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
        tally=tally_of(records),
    )
    if verify:
        anchor = journal.parent / "head.json"
        loaded.integrity = verify_journal(journal, anchor if anchor.is_file() else None)
    return loaded
