"""Declared versus done: the checks that need the session's history, and the flags on outcomes.

Before a call runs (rejections): a revert must undo something an earlier change-state touched;
a cleanup must not delete what existed before the session. After it ran (flags, recorded on
the outcome): a non-mutating act that changed files, a write the read-only workspace blocked,
a revert or cleanup that did more than its declaration allows, a change-state that changed
nothing.
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING

from ..core import is_mutating
from ..effects import Effect
from ..execute import Changes
from ..gate import Call, Rejected
from ..journal import History, covers, inside

if TYPE_CHECKING:
    from typing import Any

#: Stable ids of the flags an outcome can carry, and what each one means.
FLAGS: dict[str, str] = {
    "undeclared-write": "a non-mutating act changed files in the workspace",
    "blocked-write": "a non-mutating act tried to write and the read-only workspace refused",
    "revert-unrelated": "a revert changed paths no earlier change-state touched",
    "cleanup-preexisting": "a cleanup deleted a path that existed before the session",
    "no-change": "a change-state that changed nothing in the workspace",
    "record-tampered": "the call deleted or replaced the journal; it was restored as it was",
    "session-killed": "the session recording the call was killed; its changes were recovered",
    "concurrent": "changes seen while the call ran that other processes made (or may have)",
    "commit-without-trailers": "the call made a commit without the session's Epistemic-* "
    "trailers, in a workspace with the trailers hook (git_hook.py)",
    "protected-path-attempted": "the call tried to move or remove a protected path, or a folder "
    "leading to one (seen by the tripwire, whatever the route)",
}
_DENIED = re.compile(r"(Permission denied|Read-only file system|Operation not permitted)")
_LISTED = 5


def precheck(call: Call, effect: Effect, history: History, started: float) -> Rejected | None:
    """The history rules for revert and cleanup, from the command's static effect."""
    if call.act == "revert":
        paths = _inside(effect.writes + effect.deletes, history.workspace)
        stray = [p for p in paths if not covers(history.touched, p)]
        if stray:
            return Rejected(
                "revert-unrelated",
                "a revert that touches a file no earlier change-state mentioned is not a revert: "
                f"{_list(stray)}. Revert only what this session changed; if this is new work, "
                "declare it as change-state.",
                call.tool,
                call.act,
                call.args,
            )
    if call.act == "cleanup":
        old = [p for p in effect.deletes if _preexisting(p, history, started)]
        if old:
            return Rejected(
                "cleanup-preexisting",
                f"cleanup removes only this session's own artifacts; {_list(old)} existed before "
                "the session started. If deleting it is part of the work, declare change-state.",
                call.tool,
                call.act,
                call.args,
            )
    return None


def _preexisting(path: str, history: History, started: float) -> bool:
    rel = inside(path, history.workspace)
    if rel is not None and covers(history.created, rel) and rel != ".":
        return False
    full = os.path.join(history.workspace, os.path.expanduser(path))
    try:
        changed = os.lstat(full).st_ctime
    except OSError:
        return False  # nothing there: nothing pre-existing to delete
    return changed < started


def flags(
    call: Call,
    effect: Effect | None,
    changes: Changes | None,
    enforcement: str,
    returncode: int | None,
    stderr: str,
    history: History,
    others: Others | None = None,
) -> list[dict[str, Any]]:
    """The mismatches between what the call declared and what it was observed to do. With
    `others`, changes that other processes made (or may have) are not held against it."""
    found: list[dict[str, Any]] = []
    mutating = is_mutating(call.act)
    changed = [] if changes is None else [*changes.created, *changes.modified, *changes.deleted]
    others = others or Others()
    if not mutating and changed:
        if others.sealed or others.calls:
            found.append(_flag("concurrent", others.blame(changed)))
        else:
            found.append(
                _flag("undeclared-write", f"declared {call.act}, but changed {_list(changed)}")
            )
    refused = [x for x in stderr.splitlines() if _DENIED.search(x) and "execute" not in x]
    if refused and not mutating and enforcement != "none" and returncode not in (0, 126):
        line = refused[0]
        found.append(
            _flag(
                "blocked-write",
                f"a write was refused by the read-only workspace "
                f"({enforcement}): {line.strip()[:200]}",
            )
        )
    if changes is None:
        return found
    if call.act == "revert":
        stray = [p for p in changed if not covers(history.touched, p)]
        if stray and others.calls:
            found.append(_flag("concurrent", others.blame(stray)))
        elif stray:
            found.append(
                _flag(
                    "revert-unrelated",
                    f"reverted {_list(stray)}, which no earlier change-state touched",
                )
            )
    if call.act == "cleanup":
        old = [p for p in changes.deleted if not covers(history.created, p)]
        if old and others.calls:
            found.append(_flag("concurrent", others.blame(old)))
        elif old:
            found.append(
                _flag(
                    "cleanup-preexisting",
                    f"deleted {_list(old)}, which this session did not create",
                )
            )
    expected_here = effect is None or not effect.dynamic or bool(effect.writes or effect.deletes)
    if call.act == "change-state" and changes.empty and expected_here:
        found.append(
            _flag("no-change", "declared change-state, but nothing in the workspace changed")
        )
    return found


class Others:
    """Who else may have changed the workspace while a call ran: other calls that overlapped
    it (`calls`), or, for an observation the kernel kept from writing (`sealed`), anyone."""

    def __init__(self, calls: tuple[int, ...] = (), sealed: bool = False) -> None:
        self.calls, self.sealed = calls, sealed

    def blame(self, paths: list[str]) -> str:
        if self.calls:
            who = ", ".join(str(seq) for seq in self.calls[:_LISTED])
            return (
                f"{_list(paths)} changed while call(s) {who} ran in the same workspace; "
                "they may have made the change, so it is not counted against this call"
            )
        return (
            f"{_list(paths)} changed while this observation ran, which the kernel kept from "
            "writing the workspace: another process made the change"
        )


def _flag(flag: str, message: str) -> dict[str, Any]:
    return {"flag": flag, "message": message}


def _inside(paths: tuple[str, ...], workspace: str) -> list[str]:
    found = (inside(p, workspace) for p in paths)
    return [p for p in found if p is not None]


def _list(paths: list[str]) -> str:
    shown = ", ".join(paths[:_LISTED])
    return shown + (f" and {len(paths) - _LISTED} more" if len(paths) > _LISTED else "")
