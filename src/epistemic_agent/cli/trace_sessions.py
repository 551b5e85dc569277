"""Which sessions a `trace` means: the workspace's own, every one under a folder, or the one
an id prefix names."""

from __future__ import annotations

import sys
from pathlib import Path

from ..core.errors import UsageError
from ..journal.sessions import Loaded, ReadError, find_journals, journal_of, load
from .choice import reading


def choose_sessions(directory: Path, session: str | None, every: bool) -> list[Loaded]:
    """The sessions asked for: the workspace's own; every one under the folder; or the one
    whose id starts with `session`."""
    try:
        if not every and session is None:
            return [load(journal_of(directory, reading(directory, None)))]
        journals = find_journals([directory])
    except ReadError as error:
        raise UsageError(str(error)) from None
    loaded = []
    for journal in journals:
        try:
            loaded.append(load(journal))
        except ReadError as error:
            print(f"epistemic: skipped: {error}", file=sys.stderr)
    if session is None:
        return loaded
    if not session.strip():
        raise UsageError("--session: the id is empty")
    found = [one for one in loaded if str(one.header.get("session", "")).startswith(session)]
    if not found:
        known = ", ".join(str(one.header.get("session", "?"))[:16] for one in loaded)
        raise UsageError(f"no session {session!r} under {directory} (sessions: {known or 'none'})")
    if len(found) > 1:
        raise UsageError(
            f"--session {session!r} matches {len(found)} sessions: give more of the id"
        )
    return found
