"""Verifying a journal: the hash chain, the head anchor, torn lines; and saying what broke."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from .journal import GENESIS, PREFIX, Position, decode, line_hash
from .structs import field, struct

TYPE_CHECKING = False  # typing is not imported at run time: start-up cost
if TYPE_CHECKING:
    from typing import Any

INTACT, TAMPERED, TORN = "intact", "tampered", "torn"
RECOVERY = b'"kind":"recovery"'
EXIT_CODES = {INTACT: 0, TAMPERED: 1, TORN: 3}


@struct(frozen=False)
class Verification:
    """The verdict on one journal: status, lines checked, the first problem, and notes."""

    status: str
    lines: int
    head: str
    problem: str | None = None
    line: int | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.status]

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "lines": self.lines,
            "head": self.head,
            "problem": self.problem,
            "line": self.line,
            "notes": self.notes,
        }


def verify_journal(journal: Path, anchor: Path | None = None) -> Verification:
    """Walk the chain once (fast path), then explain the first break if there is one."""
    expected = GENESIS.encode()
    count = 0
    torn_line: int | None = None  # a line cut by a crash: fine only if a recovery follows
    notes: list[str] = []
    with journal.open("rb") as handle:
        for raw in handle:
            if not raw.endswith(b"\n"):
                return _torn_tail(count, expected.decode(), notes)
            body = raw[:-1]
            if body.startswith(PREFIX) and body[9:73] == expected:
                if RECOVERY in body[73:120]:
                    notes.append(
                        f"line {count} was torn by a crash and closed by the "
                        f"recovery record on line {count + 1}"
                    )
                    torn_line = None
                elif torn_line is not None:
                    break
            elif torn_line is None and decode(body) is None:
                torn_line = count + 1
            else:
                break
            expected = hashlib.sha256(body).hexdigest().encode()
            count += 1
        else:
            if torn_line is None:
                return _check_anchor(journal, anchor, count, expected.decode(), notes)
    if torn_line is not None:
        problem = f"line {torn_line} is not a journal entry (edited or corrupted)"
        return Verification(TAMPERED, torn_line - 1, "", problem, torn_line, notes)
    problem, line = diagnose(journal, count)
    return Verification(TAMPERED, count, expected.decode(), problem, line, notes)


def _torn_tail(count: int, head: str, notes: list[str]) -> Verification:
    before = f"lines 1-{count} verify" if count else "there is no complete line before it"
    problem = f"line {count + 1} is torn: it was cut mid-write (a crash or kill); {before}"
    return Verification(TORN, count, head, problem, count + 1, notes)


def _check_anchor(
    journal: Path, anchor: Path | None, count: int, head: str, notes: list[str]
) -> Verification:
    """Compare the tail with the last head recorded beside the journal (catches truncation)."""
    if anchor is None or not anchor.exists():
        notes.append(
            "no head anchor beside the journal: a cut at the very end could not be "
            "detected; compare the head hash with one recorded elsewhere"
        )
        return Verification(INTACT, count, head, notes=notes)
    try:
        data = json.loads(anchor.read_bytes())
    except ValueError:
        data = None
    position = Position.from_json(data)
    if position is None:
        notes.append(f"the head anchor {anchor.name} is unreadable; tail not checked")
        return Verification(INTACT, count, head, notes=notes)
    if count < position.lines:
        return Verification(
            TAMPERED,
            count,
            head,
            f"truncated: the head anchor records {position.lines} lines, the journal has {count}",
            count + 1,
            notes,
        )
    anchored = head if count == position.lines else _hash_of_line(journal, position.lines)
    if anchored != position.head:
        return Verification(
            TAMPERED,
            count,
            head,
            f"line {position.lines} was changed after it was written: it no "
            "longer matches the head anchor",
            position.lines,
            notes,
        )
    if count > position.lines:
        notes.append(
            f"{count - position.lines} line(s) after the last anchored head (a call "
            "in progress, or a crash before the report was updated)"
        )
    return Verification(INTACT, count, head, notes=notes)


def _hash_of_line(journal: Path, number: int) -> str:
    with journal.open("rb") as handle:
        for index, raw in enumerate(handle, start=1):
            if index == number:
                return line_hash(raw.rstrip(b"\n"))
    return ""


def diagnose(journal: Path, good: int) -> tuple[str, int]:
    """Explain why line good+1 does not follow line good: edited, deleted, inserted or moved."""
    bodies = [raw.rstrip(b"\n") for raw in journal.open("rb")]
    hashes = {line_hash(body): index for index, body in enumerate(bodies)}
    bad = good  # 0-based index of the first line whose prev is wrong
    record = decode(bodies[bad])
    number = bad + 1
    if record is None or not isinstance(record.get("prev"), str):
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
    follower = decode(bodies[bad + 1]) if bad + 1 < len(bodies) else None
    if follower is not None and bad > 0 and follower.get("prev") == line_hash(bodies[bad - 1]):
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
