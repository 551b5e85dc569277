"""Calls whose session died before it recorded their outcome.

No act can signal the session that records it (confinement.py), but a session can still be killed
from outside: the OOM killer, a `kill -9`, a machine that lost power. Its last call then has a
declaration and no outcome. The next process that continues the session finds such calls, makes
sure the process that recorded each is gone (not merely busy: a live recorder is left alone),
and closes each with what can still be known:

- whether it ran at all: a call that waited for an approval that never came did not;
- what it changed: every workspace entry whose ctime is at or after the declaration (a ctime
  cannot be set back by a user; deletions leave no trace and cannot be recovered);
- its output, from the capture files its session left in `.epistemic/tmp/`: what one read of
  each finds is copied first, then scrubbed of secrets like any other output and kept as
  evidence, so the evidence is exactly those bytes even if a process of the call still
  writes the file (where its confinement could not end it with the session); the outcome
  then says how much came after. Capture files no live call owns are removed in any case.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from ..core import epoch_of, now, recorder_alive, struct
from ..execute import changed_since
from ..journal import EvidenceStore, copy_of

if TYPE_CHECKING:
    from typing import Any

    from ..journal import Record
    from .scrub import Scrubber

FLAG = "session-killed"


@struct
class Orphan:
    """A declared call without an outcome, and what its declaration says."""

    seq: int
    act: str
    pid: int | None
    t: str
    asked: bool  # its policy decision was `ask`
    answered: bool  # an approval record followed


class Recovery:
    """Closes the orphaned calls of one workspace's journal (see the module's docstring)."""

    def __init__(
        self,
        workspace: Path,
        tmp: Path,
        evidence: EvidenceStore,
        scrubber: Scrubber,
        ignored: frozenset[str],
    ) -> None:
        self.workspace, self.tmp, self.evidence = workspace, tmp, evidence
        self.scrubber = scrubber
        self.ignored = ignored

    def outcomes(self, orphans: list[Orphan]) -> list[Record]:
        """One outcome record per orphan whose recorder is gone (in seq order)."""
        records = []
        for orphan in sorted(orphans, key=lambda item: item.seq):
            declared = epoch_of(orphan.t)
            if declared is None or recorder_alive(orphan.pid, declared):
                continue
            records.append(self._outcome(orphan, declared))
        return records

    def _outcome(self, orphan: Orphan, declared: float) -> Record:
        never_ran = orphan.asked and not orphan.answered
        record: Record = {
            "kind": "outcome",
            "seq": orphan.seq,
            "t": now(),
            "ok": False,
            "outcome": "not run: its session was killed while it waited for approval"
            if never_ran
            else "unknown: its session was killed before the call finished",
            "duration": 0.0,
            "interrupted": True,
            "recovered": True,
        }
        message = (
            "the session recording this call was killed before the call finished; "
            "what it changed was recovered afterwards from file times (deletions cannot be)"
        )
        if not never_ran:
            since = int((declared - 0.001) * 1e9)
            changed = sorted(changed_since(str(self.workspace), self.ignored, since))
            record["observed"] = {
                "created": [],
                "modified": changed,
                "deleted": [],
                "method": "recovered",
                "complete": False,
            }
            record["flags"] = [{"flag": FLAG, "message": message}]
        record["evidence"], growing = self._captures(orphan.pid)
        if growing:
            record["outcome"] += (
                "; its output was still being written when it was recovered: at least "
                + " and ".join(f"{count} bytes of {name}" for name, count in growing.items())
                + " came after what is kept"
            )
        return record

    def _captures(self, pid: int | None) -> tuple[dict[str, Any], dict[str, int]]:
        """The output the dead call left in its capture files, scrubbed, as evidence; and how
        many bytes came after the read, for each file still being written."""
        found: dict[str, Any] = {}
        growing: dict[str, int] = {}
        if pid is None:
            return found, growing
        for path in sorted(self.tmp.glob(f"call-{pid}-*")):
            name = (
                "stdout" if path.suffix == ".out" else "stderr" if path.suffix == ".err" else None
            )
            if name is None or name in found:
                continue
            copied = copy_of(path)  # the bytes to keep, out of reach of any writer
            path.unlink(missing_ok=True)
            if copied is None:
                continue
            if copied.size > copied.kept:
                growing[name] = copied.size - copied.kept
            self.scrubber.scrub_file(copied.path)
            ref = self.evidence.adopt(copied.path)
            copied.path.unlink(missing_ok=True)  # empty: adopt leaves it
            if ref is not None:
                found[name] = ref.to_json()
        return found, growing

    def sweep(self, live: set[int]) -> int:
        """Remove the capture files no live process owns (their output, secrets included, is
        not kept but in the evidence of a recovered call); how many were removed."""
        removed = 0
        for path in self.tmp.glob("call-*"):
            owner = _owner(path.name)
            if owner is None or owner in live or _process_exists(owner):
                continue
            path.unlink(missing_ok=True)
            removed += 1
        return removed


def _owner(name: str) -> int | None:
    """The pid in a capture file's name (call-PID-TOKEN.out)."""
    parts = name.split("-")
    try:
        return int(parts[1]) if len(parts) >= 3 else None
    except ValueError:
        return None


def _process_exists(pid: int) -> bool:
    return pid != os.getpid() and os.path.exists(f"/proc/{pid}")
