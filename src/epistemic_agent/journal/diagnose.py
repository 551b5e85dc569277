"""Saying why a journal's chain breaks where it does: a line edited, deleted, inserted, moved,
or not a journal entry at all (verify.py finds where; this says what happened there)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from .log import decode, line_hash

if TYPE_CHECKING:
    from typing import Any


def diagnose(journal: Path, good: int) -> tuple[str, int]:
    """Explain why line good+1 does not follow line good: edited, deleted, inserted or moved."""
    bodies = [raw.rstrip(b"\n") for raw in journal.open("rb")]
    hashes = {line_hash(body): index for index, body in enumerate(bodies)}
    bad = good  # 0-based index of the first line whose prev is wrong
    record = decode(bodies[bad])
    number = bad + 1
    follower = decode(bodies[bad + 1]) if bad + 1 < len(bodies) else None
    skipped = (
        follower is not None and bad > 0 and follower.get("prev") == line_hash(bodies[bad - 1])
    )
    if record is None or not isinstance(record.get("prev"), str):
        if skipped:
            return (
                f"line {number} was inserted: it is not a journal entry, and line {number + 1} "
                f"follows line {bad} in the chain",
                number,
            )
        if number == len(bodies) and bad > 0:
            return (
                f"line {number} is not a journal entry, yet complete (a crash leaves only an "
                "incomplete last line, without a newline): it was added or overwritten",
                number,
            )
        if record is not None:
            return (
                f"line {number} is not a chained journal entry (it has no `prev` hash): "
                "written by a tool that keeps no chain, or edited",
                number,
            )
        return f"line {number} is not a journal entry (edited or corrupted)", number
    pointed = hashes.get(record["prev"])
    if pointed is not None and pointed < bad - 1:
        return (
            f"line(s) {pointed + 2}-{bad} were inserted: line {number} records line "
            f"{pointed + 1} as its predecessor",
            pointed + 2,
        )
    if pointed is not None and pointed > bad:
        return (f"lines were reordered: line {number} was written after line {pointed + 1}", number)
    if skipped:
        return f"line {number} was inserted: the chain skips over it", number
    if follower is not None and follower.get("prev") != line_hash(bodies[bad]):
        return f"line {number} was edited: its content no longer matches the chain", number
    previous = decode(bodies[bad - 1]) if bad > 0 else None
    if bad > 0 and previous is None:
        return f"line {bad} is not a journal entry (edited or corrupted)", bad
    gap = _gap(previous, record)
    if gap:
        return (
            f"{gap} line(s) were deleted before line {number} (it records a predecessor "
            "that is not in the journal)",
            number,
        )
    if bad == 0:
        return "line 1 does not start the chain (lines deleted before it, or edited)", 1
    return f"line {bad} was edited: line {number} recorded a different hash for it", bad


def _gap(previous: dict[str, Any] | None, record: dict[str, Any]) -> int:
    before = previous.get("n") if previous else 0
    after = record.get("n")
    if isinstance(before, int) and isinstance(after, int) and after > before + 1:
        return after - before - 1
    return 0
