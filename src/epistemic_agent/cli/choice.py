"""Which session a reader reads, said out loud.

A workspace holds one session per `run`, `repl` or `mcp`, and per `exec` that found no open
one; a reader given the workspace reads its newest (journal/catalog.py). When there are
several and no `--session` says which, a reader says on stderr, in one line, which one it
reads, so that nobody takes the numbers of a stray `exec` for those of the run they meant.
`diff` and `seal` go further and refuse: a comparison or a signature of the wrong session is
worse than none, so they ask for `--session ID` and list the candidates (exit 2).
"""

from __future__ import annotations

import sys
from pathlib import Path

from ..core import UsageError


def reading(target: str | Path, session: str | None, strict: bool = False) -> str | None:
    """The `--session` a reader goes on with: `session` as given; else, when `target` is a
    workspace of several sessions, the newest one's id, said on stderr. With `strict` (diff,
    seal), that choice is refused instead (UsageError, exit 2), naming every candidate."""
    from ..journal import by_default

    entries = by_default(Path(target), session)
    if not entries:
        return session
    if strict:
        listed = "; ".join(entry.describe() for entry in entries)
        raise UsageError(
            f"{target} holds {len(entries)} sessions; say which with --session ID: {listed}"
        )
    newest = entries[-1]
    print(
        f"epistemic: reading session {newest.describe()}, the newest of {len(entries)} in "
        f"{target}; --session ID reads another (`epistemic sessions` lists them)",
        file=sys.stderr,
    )
    return newest.id
