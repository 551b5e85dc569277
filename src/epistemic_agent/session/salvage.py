"""`epistemic verify --salvage`: continue after a journal damaged in place (docs/journal-format.md,
"Salvaging a damaged journal").

Nothing is rewritten and nothing is dropped: the damaged journal, its head anchor, its evidence,
its seals and its report pages move, as they are, to `.epistemic/damaged/<UTC time>/` with a
NOTE.md saying what was found; a new journal starts whose header names them and records the
damaged journal's good prefix (its line count and head hash), which `epistemic verify` then
checks each time.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import sys
import time
from pathlib import Path

from ..core import GitTimeout, Layout, __version__, git_head, now, struct, user
from ..journal import TORN, JournalWriter, Position, Record, Verification, decode, verify_journal
from ..reports import rebuild

DAMAGED = "damaged"
MOVED = ("journal.jsonl", "head.json", "evidence", "seals", "report")


@struct
class Salvaged:
    """What salvage did: `folder` is None when there was nothing to salvage."""

    verification: Verification
    folder: Path | None = None
    reason: str = ""


def salvage(layout: Layout) -> Salvaged:
    """Move a damaged record aside and start a new journal after its good prefix."""
    with layout.journal.open("rb") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # writers take it for each append: none meanwhile
        found = verify_journal(layout.journal, layout.head)
        if not found.damaged:
            return Salvaged(found, reason=_nothing(found))
        folder = _new_folder(layout.record / DAMAGED)
        header = _first_record(layout.journal)
        for name in MOVED:
            if (layout.record / name).exists() or (layout.record / name).is_symlink():
                os.rename(layout.record / name, folder / name)
        if layout.report.is_file():
            shutil.copyfile(layout.report, folder / "RATIONALE.md")
    relative = f"{DAMAGED}/{folder.name}/journal.jsonl"
    (folder / "NOTE.md").write_text(_note(found, relative), encoding="utf-8")
    _start_journal(layout, _header(layout, header, found, relative))

    rebuild(layout)
    return Salvaged(found, folder)


def _nothing(found: Verification) -> str:
    if found.status == TORN:
        return (
            "the journal ends in a torn line (a crash mid-write): the next call closes it with "
            "a recovery record; nothing to salvage"
        )
    if found.status == "intact":
        return "the journal is intact: nothing to salvage"
    return f"the journal itself verifies ({found.problem}): nothing to salvage"


def _new_folder(parent: Path) -> Path:
    parent.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    for suffix in ("", *(f"-{n}" for n in range(2, 1000))):
        folder = parent / f"{stamp}{suffix}"
        try:
            folder.mkdir()
            return folder
        except FileExistsError:
            continue
    raise FileExistsError(f"{parent}: too many salvaged journals this second")


def _first_record(journal: Path) -> Record:
    with journal.open("rb") as handle:
        record = decode(handle.readline().rstrip(b"\n"))
    return record if record is not None and record.get("kind") == "session" else {}


def _git_head(workspace: Path) -> dict[str, str | None]:
    """The header's `git_head`, and `git_head_unknown` when git did not answer in time."""
    try:
        return {"git_head": git_head(workspace)}
    except GitTimeout as error:
        return {"git_head": None, "git_head_unknown": str(error)}


def _header(layout: Layout, old: Record, found: Verification, relative: str) -> Record:
    session = old.get("session")
    return {
        "kind": "session",
        "session": os.urandom(16).hex(),
        "started": now(),
        "started_epoch": time.time(),
        "tool_version": __version__,
        "workspace": str(layout.workspace),
        **_git_head(layout.workspace),
        "user": user(),
        "host": os.uname().nodename,
        "pid": os.getpid(),
        "python": sys.version.split()[0],
        "salvaged_from": {
            "journal": relative,
            "session": session if isinstance(session, str) else None,
            "lines": found.good,
            "head": found.good_head,
            "line": found.line,
            "problem": found.problem,
        },
    }


def _start_journal(layout: Layout, header: Record) -> None:
    writer = JournalWriter(layout.journal, _ignore, layout.head)
    writer.open(Position())
    try:
        with writer.locked():
            writer.append(header, durable=True)
            writer.write_anchor()
    finally:
        writer.close()


def _ignore(record: Record, before: Position) -> None:
    pass


def _note(found: Verification, relative: str) -> str:
    good = f"lines 1-{found.good}" if found.good else "no line"
    problems = "".join(f"- {problem.message}\n" for problem in found.problems)
    return (
        "# A damaged journal, kept as evidence of the damage\n\n"
        f"Salvaged {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} by "
        "`epistemic verify --salvage`. Nothing here was changed: the journal, its head anchor, "
        "its evidence, its seals and its report pages were moved as they were.\n\n"
        f"What does not verify:\n\n{problems}\n"
        f"What still verifies: {good} of `{relative}`; line {found.good} hashes to "
        f"`{found.good_head}`.\n\n"
        "The workspace's new journal (`.epistemic/journal.jsonl`) names this folder in its "
        "first line (`salvaged_from`), with that line count and hash; `epistemic verify` "
        "checks them. Check this journal on its own with "
        f"`epistemic verify .epistemic/{relative}`.\n"
    )
