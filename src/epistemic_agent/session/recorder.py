"""Where a session's records go: appended to its journal under the journal's lock, and the
report re-rendered after each, so RATIONALE.md and the head anchor always show the journal
as it stands."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..journal import JournalWriter, SessionState
from ..reports import Report

if TYPE_CHECKING:
    from ..core import Layout
    from ..journal import Position, Record
    from .scrub import Scrubber


class SessionRecord:
    """A session's journal, and its state and report folded from each record it takes: the
    state first (the gate, the policy and the checks read it), then the report that renders
    it. Made before the journal is read, and before the policy in force is known."""

    def __init__(self, layout: Layout) -> None:
        self.layout = layout
        self.state = state = SessionState.of(str(layout.workspace))
        self.report = report = Report(layout, state=state)

        def fold(record: Record, before: Position) -> None:
            state.fold(record)
            report.fold(record, before)

        self.journal = JournalWriter(layout.journal, fold, layout.head)


class Recorder:
    """Where a session's records go: its journal (and the state and report folded from it),
    with the scrubber of the policy in force."""

    def __init__(self, record: SessionRecord, scrubber: Scrubber) -> None:
        self.state, self.report, self.journal = record.state, record.report, record.journal
        self.layout = record.layout
        self.scrubber = scrubber
        self.last_outcome: object = None  # the seq of the last outcome recorded
        self._published: Position | None = None  # where the journal was at the last publish

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
            record, redacted = self.scrubber.scrub(record)
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
