"""Verifying a journal: the hash chain, the head anchor, torn lines; and saying what broke.

Only an incomplete last line (no newline) is a crash's doing ("torn"). A complete line that is
not a journal entry is accepted only when the recovery record a writer adds after a torn line
follows it and describes it; anywhere else it was added or overwritten ("tampered").
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import TYPE_CHECKING

from ..core import field, struct
from .diagnose import diagnose
from .log import GENESIS, PREFIX, Position, decode, line_hash, recovers

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    OnLine = Callable[[int, bytes, str], None]  # line number, its bytes, its hash

INTACT, TAMPERED, TORN = "intact", "tampered", "torn"
#: A seal the verifier required is missing: nothing was found changed, but nothing vouches.
UNSEALED = "unsealed"
EXIT_CODES = {INTACT: 0, TAMPERED: 1, TORN: 3, UNSEALED: 4}
#: Problem ids of the journal itself (record_check.py adds evidence, seals and anchors).
CHAIN, TRUNCATED, ANCHOR, TORN_LINE = "chain-broken", "journal-truncated", "anchor-mismatch", "torn"
RECOVERY = b'"kind":"recovery"'


@struct
class Problem:
    """One thing that does not verify: a stable id, what was found, and the line if any."""

    check: str
    message: str
    line: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {"check": self.check, "message": self.message, "line": self.line}


@struct(frozen=False)
class Verification:
    """The verdict on one journal: status, lines checked, the first problem, and notes.
    `good` lines (1 to `good`, the last hashing to `good_head`) verify whatever the status."""

    status: str
    lines: int
    head: str
    problem: str | None = None
    line: int | None = None
    notes: list[str] = field(default_factory=list)
    check: str | None = None
    good: int = 0
    good_head: str = GENESIS
    more: list[Problem] = field(default_factory=list)  # the problems after the first
    extra: dict[str, Any] = field(default_factory=dict)  # evidence, seals, expected head

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.status]

    @property
    def problems(self) -> list[Problem]:
        first = [Problem(self.check or CHAIN, self.problem, self.line)] if self.problem else []
        return first + self.more

    @property
    def record_status(self) -> str:
        """The status of the record itself, a required seal aside: intact, tampered or torn."""
        if self.status != UNSEALED:
            return self.status
        return TORN if any(p.check == TORN_LINE for p in self.problems) else INTACT

    @property
    def damaged(self) -> bool:
        """Whether the journal file itself is damaged (not only its evidence or seals)."""
        return self.status == TAMPERED and any(
            p.check in (CHAIN, TRUNCATED, ANCHOR) for p in self.problems
        )

    def add(self, problem: Problem) -> None:
        """One more problem: the record does not verify."""
        if self.status == UNSEALED:  # tampering outranks a missing seal: it comes first
            self.more, self.problem = self.problems, None
        if self.problem is None:
            self.problem, self.line, self.check = problem.message, problem.line, problem.check
        else:
            self.more.append(problem)
        self.status = TAMPERED

    def lack(self, problem: Problem) -> None:
        """Something the verifier required is missing (a seal): the record is not found
        changed, but it does not pass. Tampering outranks it; it outranks a torn line."""
        if self.status == TAMPERED:
            self.more.append(problem)
            return
        self.more = self.problems
        self.problem, self.line, self.check = problem.message, problem.line, problem.check
        self.status = UNSEALED

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "lines": self.lines,
            "head": self.head,
            "problem": self.problem,
            "line": self.line,
            "notes": self.notes,
            "check": self.check if self.problem else None,
            "problems": [problem.to_json() for problem in self.problems],
            "verified": {"lines": self.good, "head": self.good_head},
            **self.extra,
        }


def _verdict(
    status: str,
    count: int,
    head: str,
    problem: Problem | None,
    notes: list[str],
    good: int,
    good_head: str,
) -> Verification:
    if problem is None:
        return Verification(status, count, head, notes=notes, good=good, good_head=good_head)
    return Verification(
        status, count, head, problem.message, problem.line, notes, problem.check, good, good_head
    )


def verify_journal(
    journal: Path, anchor: Path | None = None, on_line: OnLine | None = None
) -> Verification:
    """Walk the chain once, then explain the first break if there is one. `on_line` sees each
    line that chains, before any break, with its number and hash. A line is parsed only when
    it could be torn (it does not end like a JSON object) or closes a torn one: verifying
    costs a hash per line."""
    expected = GENESIS.encode()
    count = 0
    unreadable: tuple[int, int] | None = None  # (line, bytes): fine only if its recovery follows
    previous = b""
    notes: list[str] = []
    with journal.open("rb") as handle:
        for raw in handle:
            if not raw.endswith(b"\n"):
                if unreadable is not None:
                    break
                return _torn_tail(journal, anchor, count, expected.decode(), len(raw), notes)
            body = raw[:-1]
            if body.startswith(PREFIX) and body[9:73] == expected:
                closes = unreadable or _torn(previous, count, body)
                if closes is not None:
                    if not recovers(decode(body) or {}, *closes):
                        break
                    notes.append(
                        f"line {count} was torn by a crash and closed by the "
                        f"recovery record on line {count + 1}"
                    )
                    unreadable = None
                elif not body.endswith(b"}") and decode(body) is None:
                    unreadable = (count + 1, len(body))
            elif unreadable is None and count and decode(body) is None:
                unreadable = (count + 1, len(body))
            else:
                break
            digest = hashlib.sha256(body).hexdigest()
            if on_line is not None and unreadable is None:
                on_line(count + 1, body, digest)
            expected, previous = digest.encode(), body
            count += 1
        else:
            if unreadable is None:
                return _check_anchor(journal, anchor, count, expected.decode(), notes)
    walked = count - (unreadable is not None)  # the unreadable line does not verify
    problem, line = diagnose(journal, walked)
    head = _hash_of_line(journal, walked) if walked else GENESIS
    good_head = head if line - 1 == walked else _hash_of_line(journal, line - 1) or GENESIS
    found = Problem(CHAIN, problem, line)
    return _verdict(TAMPERED, walked, head, found, notes, line - 1, good_head)


def _torn(previous: bytes, count: int, body: bytes) -> tuple[int, int] | None:
    """A recovery record closing a torn line that happened to end like an object: the torn
    line's number and size, when the previous line does not parse."""
    if body.find(RECOVERY, 73, 128) < 0 or not previous or decode(previous) is not None:
        return None
    return count, len(previous)


def _torn_tail(
    journal: Path, anchor: Path | None, count: int, head: str, size: int, notes: list[str]
) -> Verification:
    """An incomplete last line: a crash, unless the head anchor had recorded it whole."""
    anchored = _anchored(anchor)
    if anchored is not None and anchored.lines > count:
        problem = Problem(
            TRUNCATED,
            f"truncated in place: the head anchor records {anchored.lines} lines, the journal "
            f"has {count} whole line(s) and then {size} byte(s) of line {count + 1}, cut short",
            count + 1,
        )
        return _verdict(TAMPERED, count, head, problem, notes, count, head)
    if (
        anchored is not None
        and anchored.lines
        and _hash_of_line(journal, anchored.lines) != (anchored.head)
    ):
        return _changed(journal, anchored, count, head, notes)
    before = f"lines 1-{count} verify" if count else "there is no complete line before it"
    problem = Problem(
        TORN_LINE,
        f"line {count + 1} is torn: it was cut mid-write (a crash or kill); {before}",
        count + 1,
    )
    return _verdict(TORN, count, head, problem, notes, count, head)


def _anchored(anchor: Path | None) -> Position | None:
    if anchor is None or not anchor.is_file():
        return None
    try:
        return Position.from_json(json.loads(anchor.read_bytes()))
    except (OSError, ValueError):
        return None


def _check_anchor(
    journal: Path, anchor: Path | None, count: int, head: str, notes: list[str]
) -> Verification:
    """Compare the tail with the last head recorded beside the journal (catches truncation)."""
    if anchor is None or not anchor.exists():
        notes.append(
            "no head anchor beside the journal: a cut at the very end could not be "
            "detected; compare the head hash with one recorded elsewhere"
        )
        return _verdict(INTACT, count, head, None, notes, count, head)
    position = _anchored(anchor)
    if position is None:
        notes.append(f"the head anchor {anchor.name} is unreadable; tail not checked")
        return _verdict(INTACT, count, head, None, notes, count, head)
    if count < position.lines:
        problem = Problem(
            TRUNCATED,
            f"truncated: the head anchor records {position.lines} lines, the journal has {count}",
            count + 1,
        )
        return _verdict(TAMPERED, count, head, problem, notes, count, head)
    anchored = head if count == position.lines else _hash_of_line(journal, position.lines)
    if position.lines and anchored != position.head:
        return _changed(journal, position, count, head, notes)
    if count > position.lines:
        notes.append(
            f"{count - position.lines} line(s) after the last anchored head (a call "
            "in progress, or a crash before the report was updated)"
        )
    return _verdict(INTACT, count, head, None, notes, count, head)


def _changed(
    journal: Path, position: Position, count: int, head: str, notes: list[str]
) -> Verification:
    line = position.lines
    problem = Problem(
        ANCHOR,
        f"line {line} was changed after it was written: it no longer matches the head anchor",
        line,
    )
    good_head = _hash_of_line(journal, line - 1) if line > 1 else GENESIS
    return _verdict(TAMPERED, count, head, problem, notes, line - 1, good_head)


def _hash_of_line(journal: Path, number: int) -> str:
    with journal.open("rb") as handle:
        for index, raw in enumerate(handle, start=1):
            if index == number:
                return line_hash(raw.rstrip(b"\n"))
    return ""
