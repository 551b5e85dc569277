"""RATIONALE.md as an incremental projection of the journal: folding one record costs O(1).

The narrative is paged: RATIONALE.md holds the current page of calls in full and links the
earlier pages, which are written once under `.epistemic/report/`. Rendering therefore costs
the same at call 10,000 as at call 100. A checkpoint taken at each page start lets a new
process (one `epistemic exec` per command) resume without re-reading the whole journal.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...core import replace_file
from ...journal import (
    RAN,
    CallView,
    JournalError,
    Position,
    SessionState,
    follow,
    listing,
    outcome_fate,
    seq_of,
    view_of,
)
from . import beliefs as render_beliefs
from . import checkpoint, render
from . import diffs as call_diff
from . import spend as render_spend
from .pages import DEAD_ENDS_PAGE, Pages, encode
from .sessions import others
from .totals import Totals

if TYPE_CHECKING:
    from ...core import Layout
    from ...journal import Record

PAGE_SIZE = 100
DEAD_ENDS_SHOWN = 20
MISMATCHES_SHOWN = 20
#: Records that are never a call: the state alone takes them.
_NOT_CALLS = frozenset(("session", "model", "thinking", "compaction", "final", "stop", "review"))
_NOT_CALLS |= {"policy", "policy-ignored", "confinement"}


class Report:
    """Renders a session's state and its calls as RATIONALE.md and its pages.

    The state (journal/state.py) is folded before the report sees a record: by the journal
    writer of a live session, or by `take` for a reader rendering a journal. The report keeps
    only what rendering needs: the current page's calls, the words before them, the dead ends
    and rendered text."""

    def __init__(
        self, layout: Layout, page_size: int = PAGE_SIZE, state: SessionState | None = None
    ) -> None:
        self.layout = layout
        self.page_size = page_size
        self.state = SessionState.of(str(layout.workspace)) if state is None else state
        self.pages = Pages(layout, page_size)
        self.totals = Totals()
        self.entries: dict[int, CallView] = {}
        self._text: dict[int, str] = {}
        self._said: dict[int, list[str]] = {}  # the model's words before each call of the page
        self._diffs: dict[int, object] = {}  # each call's `evidence.diff` ref
        self._dead_text: dict[int, str] = {}
        self._beliefs_kept: dict[int, tuple[int, list[str]]] = {}  # the Beliefs shown
        self._dead_page_due = False
        self._links: str | None = None
        self._stale_pages: set[int] = set()
        self._checkpoint_due = False
        self._other_sessions: str | None = None
        self.warning: list[str] = []  # the journal does not verify: shown first (rebuild)

    def reset(self) -> None:
        """Start again from nothing (the journal is folded from its first line)."""
        state = self.state
        self.__init__(self.layout, self.page_size, state)  # type: ignore[misc]
        state.restore(SessionState.of(str(self.layout.workspace)))

    # -- folding ---------------------------------------------------------------------------

    def take(self, record: Record, before: Position) -> None:
        """Fold one record into the state, then into the report: a reader of a journal."""
        self.state.fold(record)
        self.fold(record, before)

    def fold(self, record: Record, before: Position) -> None:
        """Take one record the state has already folded into the report's pages."""
        kind = record.get("kind")
        said = self.totals.words.fold(record)  # a declaration takes the words before it
        if kind == "outcome":
            self._fold_outcome(record)
        elif kind == "approval":
            self._fold_approval(record)
        elif kind not in _NOT_CALLS:
            view = view_of(record)
            if view is not None:
                self._fold_call(view, before, said or [])

    def _fold_call(self, view: CallView, before: Position, said: list[str]) -> None:
        page = (view.seq - 1) // self.page_size
        if page > self.totals.page:
            self._turn_page(page, before, said)
        elif page < self.totals.page:
            self._page_changed(page)
        if view.status != "rejected" and view.act == "revert":
            self._dead_changed(view.seq)
            self.totals.dead_ends[view.seq] = {
                "seq": view.seq,
                "reason": view.reason,
                "command": view.command,
                "label": view.label,
            }
        if page == self.totals.page:
            self.entries[view.seq] = view
            self._said[view.seq] = said
            self._text.pop(view.seq, None)

    def _fold_outcome(self, record: Record) -> None:
        seq = record.get("seq")
        if not isinstance(seq, int):
            return
        view = self.entries.get(seq)
        if view is not None:
            view.apply_outcome(record)
            self._diffs[seq] = call_diff.diff_ref(record)
            self._text.pop(seq, None)
        elif (seq - 1) // self.page_size < self.totals.page:
            self._page_changed((seq - 1) // self.page_size)
        end = self.totals.dead_ends.get(seq)
        if end is not None:
            self._dead_changed(seq)
            fate = outcome_fate(record)
            if fate not in RAN:  # a revert that did not run (denied, cancelled, aborted)
                del self.totals.dead_ends[seq]  # undid nothing known: no dead end
            else:
                end["label"] = "ok" if fate == "ran" else "FAILED"

    def _fold_approval(self, record: Record) -> None:
        seq = seq_of(record)
        if seq is None:
            return
        view = self.entries.get(seq)
        if view is not None:
            view.apply_approval(record)
            self._text.pop(seq, None)
        elif (seq - 1) // self.page_size < self.totals.page:
            self._page_changed((seq - 1) // self.page_size)

    def _page_changed(self, page: int) -> None:
        """A written page is out of date (a seq below 1, from a foreign writer, is on none)."""
        if page >= 0:
            self._stale_pages.add(page)

    def _dead_changed(self, seq: int) -> None:
        self._dead_text.pop(seq, None)
        self._dead_page_due = True

    def _turn_page(self, page: int, before: Position, said: list[str]) -> None:
        """The current page is complete: write it once, start the next one, and checkpoint
        at the next write (where the state and the report are whole at one position)."""
        self.pages.write(self.totals.page, self.entries.values(), self._said, self._diffs)
        self.entries.clear()
        self._text.clear()
        self._said, self._diffs = {}, {}
        self._links = None
        while len(self.totals.page_offsets) <= page:
            self.totals.page_offsets.append(before.offset)
        while len(self.totals.page_said) <= page:
            self.totals.page_said.append([])
        self.totals.page_said[page] = said
        self.totals.page = page
        self._checkpoint_due = True

    # -- writing ---------------------------------------------------------------------------

    def write(self, position: Position) -> None:
        """Render RATIONALE.md (atomically), re-render stale pages, save a due checkpoint."""
        for page in sorted(self._stale_pages):
            self._rerender_page(page, position)
        self._stale_pages.clear()
        replace_file(self.layout.report, encode(self.render(position)))  # a new file, always
        if self._dead_page_due and len(self.totals.dead_ends) > DEAD_ENDS_SHOWN:
            self.pages.write_dead_ends(
                self._dead_end_text(s) for s in sorted(self.totals.dead_ends)
            )
        elif self._dead_page_due:
            self.pages.drop_dead_ends()
        self._dead_page_due = False
        if self._checkpoint_due:
            self.save_checkpoint(position)
            self._checkpoint_due = False

    def render(self, position: Position) -> str:
        totals, state = self.totals, self.state
        entries = [self._entry_text(seq) for seq in sorted(self.entries)]
        if self._links is None:
            pages = [(*self.pages.range(p), self.pages.link(p)) for p in range(totals.page)]
            self._links = render.page_links(pages)
        dead = sorted(totals.dead_ends)
        shown = [self._dead_end_text(seq) for seq in dead[-DEAD_ENDS_SHOWN:]]
        return "".join(
            [
                render.header(state.header, self.warning),
                render.shape(state.tally),
                render.approvals(state.tally),
                render.model_line(state.model, state.ending, state.spend.to_json()),
                render_spend.section(state.spend),
                render.mismatches(state.flagged[-MISMATCHES_SHOWN:], len(state.flagged)),
                render_beliefs.section(state.beliefs, self._beliefs_kept),
                render.narrative(self._links, entries),
                render.dead_ends(shown, len(dead), self.pages.link_to(DEAD_ENDS_PAGE)),
                render.rejections(state.tally.rejected),
                render.ending(state.ending),
                self._others(),
                render.footer(
                    position.head, position.lines, self.layout.relative(self.layout.journal)
                ),
            ]
        )

    def _others(self) -> str:
        """The workspace's other sessions (listed once per process: they are not this one's
        to change, and listing reads each one's ends)."""
        if self._other_sessions is None:
            self._other_sessions = others(listing(self.layout.workspace), self.layout.folder)
        return self._other_sessions

    def _dead_end_text(self, seq: int) -> str:
        text = self._dead_text.get(seq)
        if text is None:
            text = self._dead_text[seq] = render.dead_end(self.totals.dead_ends[seq])
        return text

    def _entry_text(self, seq: int) -> str:
        text = self._text.get(seq)
        if text is None:
            text = self._text[seq] = self.pages.entry(self.entries[seq], self._said, self._diffs)
        return text

    def _rerender_page(self, page: int, position: Position) -> None:
        start = Position(offset=self.totals.page_offsets[page])
        said_before = (self.totals.page_said + [[]] * page)[page]
        self.pages.rewrite(page, start, said_before, position)

    # -- resuming --------------------------------------------------------------------------

    def load_checkpoint(self) -> Position | None:
        """Restore the last saved state; None if there is none usable (then fold from 0)."""
        saved = checkpoint.load(self.layout)
        if saved is None:
            return None
        self.totals = saved.totals
        self.state.restore(saved.state)
        self.entries, self._said, self._diffs = saved.entries, saved.said, saved.diffs
        return saved.position

    def save_checkpoint(self, position: Position) -> None:
        """Save the whole state at `position`, so the next process need not fold the page."""
        entries = [
            {**view.to_json(), "said": self._said.get(seq), "diff": self._diffs.get(seq)}
            for seq, view in self.entries.items()
        ]
        text = checkpoint.encode(position, self.totals.to_json(), self.state, entries)
        checkpoint.save(self.layout, text)


def rebuild(
    layout: Layout, page_size: int = PAGE_SIZE, warning: list[str] | None = None
) -> Position:
    """Re-render RATIONALE.md and every page from the whole journal (`epistemic report`);
    a `warning` (the chain does not verify: journal/notice.py) heads it."""
    report = Report(layout, page_size)
    report.warning = list(warning or ())
    position = Position()
    readable = 0
    for record, before in follow(layout.journal, position):
        readable += record.get("kind") != "unreadable"
        report.take(record, before)
    if not readable:
        raise JournalError(f"{layout.journal} holds no journal records; nothing was rendered")
    report.write(position)
    report.save_checkpoint(position)
    return position
