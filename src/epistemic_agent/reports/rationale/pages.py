"""RATIONALE.md's earlier pages, under the session's `report/` folder: each page of calls is
written once, when the next page starts, and rebuilt from the journal only when a late
outcome or approval lands on it; the dead ends beyond those RATIONALE.md shows have a page
of their own. Also how a narrative entry is written, on a page or in RATIONALE.md."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...core import atomic_write
from ...journal import CallView, Position, follow, seq_of, view_of
from . import diffs as call_diff
from . import output as call_output
from . import render
from . import words as model_words

if TYPE_CHECKING:
    from collections.abc import Iterable
    from pathlib import Path

    from ...core import Layout

DEAD_ENDS_PAGE = "dead-ends.md"  # in the session's pages folder


class Pages:
    """The pages of one session's report, `page_size` calls each."""

    def __init__(self, layout: Layout, page_size: int) -> None:
        self.layout = layout
        self.page_size = page_size

    def range(self, page: int) -> tuple[int, int]:
        """The first and last seq a page holds."""
        return page * self.page_size + 1, (page + 1) * self.page_size

    def link(self, page: int) -> str:
        first, last = self.range(page)
        return self.link_to(f"calls-{first:06d}-{last:06d}.md")

    def link_to(self, name: str) -> str:
        """A page of the session's as a link from RATIONALE.md."""
        return self.layout.relative(self.layout.pages / name)

    def entry(
        self,
        view: CallView,
        said: dict[int, list[str]],
        diffs: dict[int, object],
        base: Path | None = None,
    ) -> str:
        """A narrative entry with the model's words before it, where its whole output is, and
        the call's diff; `base`: the folder of the file it goes in (links are relative to it;
        by default the workspace, where RATIONALE.md is)."""
        ref, session = diffs.get(view.seq), self.layout.session_folder_id
        evidence = self.layout.evidence
        output = call_output.markdown(view, evidence, base or self.layout.workspace, session)
        return render.entry(
            view,
            model_words.markdown(said.get(view.seq) or []),
            output + call_diff.markdown_for(view, ref, evidence, session),
        )

    def write(
        self,
        page: int,
        views: Iterable[CallView],
        said: dict[int, list[str]],
        diffs: dict[int, object],
    ) -> None:
        first, last = self.range(page)
        folder = (self.layout.workspace / self.link(page)).parent
        entries = (self.entry(v, said, diffs, folder) for v in sorted(views, key=_seq))
        text = render.page(first, last, entries)
        atomic_write(self.layout.workspace / self.link(page), encode(text))

    def rewrite(self, page: int, start: Position, said_before: list[str], end: Position) -> None:
        """A late outcome landed on a finished page: rebuild the page from the journal, from
        the page's start to `end`; `said_before`: the words pending as the page started."""
        views: dict[int, CallView] = {}
        words = model_words.Words(said_before)
        said: dict[int, list[str]] = {}
        diffs: dict[int, object] = {}
        first, last = self.range(page)
        for record, before in follow(self.layout.journal, start):
            if before.offset >= end.offset:
                break
            taken = words.fold(record)
            view = view_of(record)
            if view is not None and first <= view.seq <= last:
                views[view.seq] = view
                said[view.seq] = taken or []
            elif record.get("kind") == "outcome" and seq_of(record) in views:
                views[record["seq"]].apply_outcome(record)
                diffs[record["seq"]] = call_diff.diff_ref(record)
            elif record.get("kind") == "approval" and seq_of(record) in views:
                views[record["seq"]].apply_approval(record)
        self.write(page, views.values(), said, diffs)

    def write_dead_ends(self, items: Iterable[str]) -> None:
        atomic_write(self.layout.pages / DEAD_ENDS_PAGE, encode(render.dead_ends_page(items)))

    def drop_dead_ends(self) -> None:
        """Fewer dead ends than RATIONALE.md shows (a revert was denied): no page of them."""
        (self.layout.pages / DEAD_ENDS_PAGE).unlink(missing_ok=True)


def encode(text: str) -> bytes:
    return text.encode("utf-8", "backslashreplace")  # lone surrogates from a foreign writer


def _seq(view: CallView) -> int:
    return view.seq
