"""Where a session's records go: appended to its journal under the journal's lock, and the
report re-rendered after each, so RATIONALE.md and the head anchor always show the journal
as it stands."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..journal.state import SessionState
from ..journal.writer import JournalWriter
from ..reports.rationale.report import Report

if TYPE_CHECKING:
    from ..core.layout import Layout
    from ..journal.log import Position, Record
    from .guard import Guard


class Recorder:
    """The journal, the session's state and report folded from it, and the guard that scrubs
    what is recorded."""

    def __init__(self, layout: Layout, guard: Guard):
        self.state = SessionState.of(str(layout.workspace))
        self.report = Report(layout, state=self.state)
        self.journal = JournalWriter(layout.journal, self.fold, layout.head)
        self.layout = layout
        self.guard = guard
        self.last_outcome: object = None  # the seq of the last outcome recorded
        self._published: Position | None = None  # where the journal was at the last publish

    def fold(self, record: Record, before: Position) -> None:
        """Each record the journal takes: the session's state first (the gate, the policy and
        the checks read it), then the report that renders it."""
        self.state.fold(record)
        self.report.fold(record, before)

    @property
    def session_id(self) -> str:
        return self.state.session_id

    @property
    def next_seq(self) -> int:
        """The seq the next call would get (read without the lock: a forecast)."""
        return self.journal.position.last_seq + 1

    def record(self, record: Record, publish: bool = True) -> None:
        """Append one record (an outcome is scrubbed once more: observed paths, flag
        messages), not durably, and publish unless told the caller records more at once
        (a model call's record, followed by its calls or the session's end)."""
        if record.get("kind") == "outcome":
            self.last_outcome = record.get("seq")
            record, redacted = self.guard.scrub(record)
            if redacted:
                record["redacted"] = int(record.get("redacted", 0)) + redacted
        with self.journal.locked():
            self.journal.append(record, durable=False)
            if publish:
                self.publish()

    def append(self, record: Record) -> None:
        """Append one record durably (it must outlive a crash: an approval, an end), and
        publish. The caller scrubbed it."""
        with self.journal.locked():
            self.journal.append(record, durable=True)
            self.publish()

    def publish_in_flight(self) -> None:
        """A command that takes a while shows in RATIONALE.md as running (outcome unknown),
        unless the report already shows that: nothing was recorded since it was written (the
        call was, as running, when it was declared). Not writing it again then is not only
        cheaper: the command's view holds a read-only bind on the report as it was when the
        command started, and a new report file in its place would be one the view does not
        guard (docs/security.md)."""
        with self.journal.locked():
            if self.journal.position != self._published:
                self.publish()

    def publish(self) -> None:
        """Re-render the report (a new file each time: what a reader holds open stays whole)
        and move the head anchor (caller holds the journal lock)."""
        self.report.write(self.journal.position)
        self.journal.write_anchor()
        self._published = self.journal.position.copy()
