"""The report's checkpoint (`report/checkpoint.json`): its state at a journal position, so a new
process (one `epistemic exec` per command) resumes there instead of folding the whole journal.
Derived data: one that is missing, of another version or unreadable is ignored."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from ...core import atomic_write, struct
from ...journal import CallView, Position, SessionState
from .totals import Totals

if TYPE_CHECKING:
    from typing import Any

    from ...core import Layout

VERSION = 3


@struct
class Saved:
    """A checkpoint read back: the state it holds and the current page's calls."""

    position: Position
    totals: Totals
    state: SessionState
    entries: dict[int, CallView]
    said: dict[int, list[str]]
    diffs: dict[int, object]


def encode(
    position: Position, totals: dict[str, Any], state: SessionState, entries: list[dict[str, Any]]
) -> str:
    """The checkpoint's text (`totals` as `Totals.to_json`; `entries`: the page's calls)."""
    data: dict[str, Any] = {"v": VERSION, "position": position.to_json(), "totals": totals}
    data["entries"] = entries
    data["state"] = state.to_json()
    return json.dumps(data)


def save(layout: Layout, text: str) -> None:
    atomic_write(layout.checkpoint, text.encode("ascii"))


def load(layout: Layout) -> Saved | None:
    """The last saved state; None if there is none usable (then fold from the start)."""
    try:
        data = json.loads(layout.checkpoint.read_bytes())
        position = Position.from_json(data["position"])
        if data.get("v") != VERSION or position is None:
            return None
        totals = Totals.from_json(data["totals"])
        items = data.get("entries", [])
        views = [CallView.from_json(item) for item in items]
        said = {int(i["seq"]): list(i.get("said") or []) for i in items}
        diffs = {int(i["seq"]): i.get("diff") for i in items}
        state = SessionState.from_json(str(layout.workspace), data["state"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return Saved(position, totals, state, {view.seq: view for view in views}, said, diffs)
