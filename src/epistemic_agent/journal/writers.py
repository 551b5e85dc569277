"""Which call could have written a file: the record's answer, for the policies a session is
asked to put in force (session/provenance.py).

Two ways to know, from every session of a workspace:

- **it wrote it**: the call's observed changes list the file as created or modified (or, for
  a file tool, the call's path is the file);
- **it was running when the file changed**: the file's ctime falls within a call's run (from
  its declaration to its outcome, or to now for a call without one), and the call's act could
  write there: a mutating act, in the workspace or a folder the policy granted it (any act
  where nothing was confined). A user cannot set a ctime back, so a file an act wrote keeps a
  ctime inside that act's run whatever it does to the file's other times.

Reading every journal of a workspace is the slow path: it runs only for a file whose content
no session of the workspace was started under and no trust entry covers, so once per change of
a policy.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import TYPE_CHECKING

from ..core import epoch_of, struct
from .catalog import listing
from .reading import read_records

if TYPE_CHECKING:
    from typing import Any

    from .log import Record

#: Seconds of slack before a call's run: file times come from the kernel's coarse clock, up
#: to a tick (a few milliseconds) behind the one the record's times are read from. After the
#: run, only the record's rounding to milliseconds: a write the act made is older than its
#: outcome, and the coarse clock can only make it look older still.
SLACK_BEFORE = 0.05
SLACK_AFTER = 0.002
WRITING_TOOLS = ("write_file", "str_replace_edit")


@struct
class Writer:
    """A call that wrote a file, or was running when it changed."""

    session: str
    seq: int
    act: str
    reason: str
    wrote: bool  # True: its observed changes list the file; False: it ran when it changed

    def describe(self) -> str:
        how = "wrote it" if self.wrote else "was running when it changed"
        return f"call {self.seq} of session {self.session[:12]} ({self.act}) {how}"


@struct(frozen=False)
class _Run:
    seq: int
    act: str
    mutating: bool
    reason: str
    tool: str
    path: str | None
    start: float
    end: float | None = None
    changed: tuple[str, ...] = ()


def find_writer(workspace: Path, target: str, ctime: float) -> Writer | None:
    """The first call of `workspace`'s sessions that wrote `target` (an absolute real path
    whose ctime is `ctime`), else the first that could have written it while it ran; None
    when no call of the record could have."""
    found: Writer | None = None
    for entry in listing(workspace):
        try:
            records, _ = read_records(entry.layout.journal)
        except OSError:
            continue
        header = records[0] if records and records[0].get("kind") == "session" else {}
        session = header.get("session") if isinstance(header.get("session"), str) else entry.id
        runs = _runs(records)
        for run in runs:
            if _wrote(run, target, header):
                return Writer(str(session), run.seq, run.act, run.reason, True)
        if found is None:
            found = _running(runs, target, ctime, header, str(session))
    return found


def _runs(records: list[Record]) -> list[_Run]:
    """Every accepted call of a journal, with when it ran and what it changed."""
    runs: dict[int, _Run] = {}
    for record in records:
        kind, seq = record.get("kind"), record.get("seq")
        if type(seq) is not int:
            continue
        if kind == "call":
            start = epoch_of(str(record.get("t", "")))
            if start is None:
                continue
            path = record.get("path")
            runs[seq] = _Run(
                seq,
                str(record.get("act", "")),
                record.get("mutating") is True,
                str(record.get("reason", "")),
                str(record.get("tool", "")),
                path if isinstance(path, str) else None,
                start,
            )
        elif kind == "outcome" and seq in runs:
            runs[seq].end = epoch_of(str(record.get("t", "")))
            runs[seq].changed = _changed(record)
    return list(runs.values())


def _changed(outcome: Record) -> tuple[str, ...]:
    """The workspace paths an outcome says were created or modified, and the granted
    folders' paths as absolute ones."""
    found: list[str] = []
    observed = outcome.get("observed")
    if isinstance(observed, dict):
        for key in ("created", "modified"):
            items = observed.get(key)
            if isinstance(items, list):
                found += [item for item in items if isinstance(item, str)]
    outside = outcome.get("outside")
    if isinstance(outside, dict):
        for folder, seen in outside.items():
            if not isinstance(seen, dict):
                continue
            for key in ("created", "modified"):
                items = seen.get(key)
                if isinstance(items, list):
                    found += [os.path.join(folder, i) for i in items if isinstance(i, str)]
    return tuple(found)


def _wrote(run: _Run, target: str, header: dict[str, Any]) -> bool:
    workspace = str(header.get("workspace", ""))
    named = [os.path.join(workspace, path) for path in run.changed]
    if run.tool in WRITING_TOOLS and run.path is not None:
        named.append(os.path.join(workspace, run.path))
    return any(os.path.normpath(path) == target for path in named)


def _running(
    runs: list[_Run], target: str, ctime: float, header: dict[str, Any], session: str
) -> Writer | None:
    now = time.time()
    for run in runs:
        end = run.end if run.end is not None else now
        if not run.start - SLACK_BEFORE <= ctime <= end + SLACK_AFTER:
            continue
        if _could_write(run, target, header):
            return Writer(session, run.seq, run.act, run.reason, False)
    return None


def _could_write(run: _Run, target: str, header: dict[str, Any]) -> bool:
    """Whether an act of this kind could write `target` under the session's confinement."""
    confinement = header.get("confinement")
    mechanism = confinement.get("mechanism") if isinstance(confinement, dict) else "none"
    if mechanism == "none":
        return True
    if not run.mutating:
        return False
    folders = [str(header.get("workspace", ""))]
    grants = confinement.get("grants") if isinstance(confinement, dict) else None
    if isinstance(grants, dict) and isinstance(grants.get(run.act), list):
        folders += [str(folder) for folder in grants[run.act]]
    return any(folder and (target + "/").startswith(folder.rstrip("/") + "/") for folder in folders)
