"""Which session's approval request `epistemic pending`, `approve` and `deny` mean.

Each session has its own `pending/` folder (layout.py), and several sessions of a workspace
can wait for a human at once (a `run`, and an `exec` that started a newer session). The
commands look in every session: `pending` lists what waits in each, and `approve SEQ` answers
in the one session where a request for call SEQ waits; when several do, it refuses and asks
for `--session ID`. The answer is written into the folder the request was found in, and it
binds that request's session, call number and call record (approval_files.py), so where it
was found changes nothing of what it can approve.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ..core import RECORD_DIR, Layout, UsageError, struct, workspace_of
from ..journal import listing, named
from .files import asking, closed_path, paths_of, pending, read_json

if TYPE_CHECKING:
    from typing import Any


class AmbiguousRequest(UsageError):
    """Several sessions wait for an answer about the same call number."""


@struct
class Place:
    """A session of the workspace, and the folder its approval requests wait in."""

    session: str
    folder: Path


def places(target: Path, session: str | None) -> list[Place]:
    """The sessions to look in, oldest first: the one `session` names (an id or a unique
    prefix), the one session folder `target` is, or every session of the workspace."""
    target = target.resolve()
    owner = workspace_of(target)
    if owner is not None and target.name != RECORD_DIR and session is None:
        layout = Layout(owner, target)  # -C .epistemic/sessions/<id>: that session only
        return [Place(target.name, layout.pending)]
    workspace = owner if owner is not None else target
    entries = listing(workspace)
    if session is not None:
        entries = [named(entries, session, workspace)]
    elif not entries:  # no journal yet: `.epistemic/pending/`, as a first session writes it
        return [Place("", Layout(workspace).pending)]
    return [Place(entry.id, entry.layout.pending) for entry in entries]


def waiting(found: list[Place]) -> list[dict[str, Any]]:
    """The open requests of every place, each with `session_id`: the session it waits in."""
    requests = []
    for place in found:
        for item in pending(place.folder):
            item["session_id"] = place.session or str(item.get("session") or "")
            requests.append(item)
    return requests


def folder_for(found: list[Place], seq: int) -> Path | None:
    """The pending folder where call `seq` waits for an answer: the one session whose asking
    process still waits, else the one that holds a request at all (approve then says its
    asker is gone), else the newest that closed one (it says why). None: no session has
    heard of call `seq`. AmbiguousRequest when two sessions fit equally."""
    held: list[tuple[Place, bool]] = []
    for place in found:
        try:
            request = read_json(paths_of(place.folder, seq)[0])
        except (OSError, ValueError):
            continue
        held.append((place, isinstance(request, dict) and asking(request)))
    live = [place for place, alive in held if alive]
    choices = live or [place for place, _ in held]
    if len(choices) > 1:
        ids = ", ".join(place.session[:12] for place in choices)
        raise AmbiguousRequest(
            f"call {seq} waits for an answer in {len(choices)} sessions ({ids}): "
            f"say which with --session ID (`epistemic pending` lists them)"
        )
    if choices:
        return choices[0].folder
    closed = [place for place in found if closed_path(place.folder, seq).exists()]
    return closed[-1].folder if closed else None
