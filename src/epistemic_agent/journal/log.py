"""The journal's lines: append-only, hash-chained JSON Lines. How a record is encoded and
decoded, the chain hash, the position a reader or writer has reached, and following the file
from there. The writer is writer.py; reading a whole journal, reading.py."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ..core import EXIT_RECORD, EpistemicError, struct
from .migrations import upgrade

FORMAT_VERSION = 1
GENESIS = "0" * 64
PREFIX = b'{"prev":"'
#: The fields the writer owns; a record cannot set them.
CHAIN_FIELDS = frozenset({"prev", "n", "v"})
CHUNK = 1 << 20


#: One journal line, parsed: the fields of docs/journal-format.md.
Record = dict[str, Any]


class JournalError(EpistemicError):
    """The journal cannot be appended to safely (its chain is broken, or it is unreadable).
    `journal` names a damaged journal (`epistemic verify --salvage` can continue after it)."""

    exit_status = EXIT_RECORD

    def __init__(self, message: str, journal: Path | None = None) -> None:
        super().__init__(message)
        self.journal = journal

    @property
    def hint(self) -> str | None:  # type: ignore[override]
        """What to run when the journal is damaged: see what verifies, then continue after it."""
        if self.journal is None:
            return None
        import shlex

        folder = self.journal.parent
        workspace = shlex.quote(str(folder.parent if folder.name == ".epistemic" else folder))
        return (
            f"to continue after its last good line: `epistemic verify --salvage {workspace}` "
            "(the damaged journal and its evidence are kept under .epistemic/damaged/)"
        )


def line_hash(body: bytes) -> str:
    """The chain hash of one line: SHA-256 of its bytes, without the newline."""
    return hashlib.sha256(body).hexdigest()


def encode(record: Record) -> bytes:
    """Serialise a record compactly; `prev` must already be its first key."""
    try:
        text = json.dumps(record, ensure_ascii=False, separators=(",", ":"), default=repr)
        return text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates: fall back to escapes, still valid JSON
        return json.dumps(record, separators=(",", ":"), default=repr).encode("ascii")


def decode(body: bytes) -> Record | None:
    """Parse one line; None when it is not a JSON object."""
    try:
        value = json.loads(body)
    except (ValueError, UnicodeDecodeError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


@struct(frozen=False)
class Position:
    """How far a reader or writer has followed the journal."""

    offset: int = 0
    lines: int = 0
    head: str = GENESIS
    last_seq: int = 0

    def to_json(self) -> Record:
        return {
            "offset": self.offset,
            "lines": self.lines,
            "head": self.head,
            "last_seq": self.last_seq,
        }

    def copy(self) -> Position:
        return Position(self.offset, self.lines, self.head, self.last_seq)

    def advance(self, body: bytes, record: Record) -> Position:
        """Step over one line (given without its newline); return the position before it."""
        before = self.copy()
        self.offset += len(body) + 1
        self.lines += 1
        self.head = line_hash(body)
        seq = record.get("seq")
        if record.get("kind") in ("call", "rejected") and isinstance(seq, int):
            self.last_seq = max(self.last_seq, seq)
        return before

    @classmethod
    def from_json(cls, data: object) -> Position | None:
        if not isinstance(data, dict):
            return None
        try:
            return cls(
                int(data["offset"]), int(data["lines"]), str(data["head"]), int(data["last_seq"])
            )
        except (KeyError, TypeError, ValueError):
            return None


#: Called with each record and the journal position just before its line.
Fold = Callable[[Record, Position], None]


def read_lines(fd: int, start: int, end: int) -> Iterator[bytes]:
    """The lines between two offsets, each with its newline; a torn last piece comes without."""
    pending = b""
    offset = start
    while offset < end:
        chunk = os.pread(fd, min(CHUNK, end - offset), offset)
        if not chunk:
            break
        offset += len(chunk)
        pieces = (pending + chunk).split(b"\n")
        pending = pieces.pop()
        for piece in pieces:
            yield piece + b"\n"
    if pending:
        yield pending


def follow(path: Path, position: Position) -> Iterator[tuple[Record, Position]]:
    """Each complete record from `position` on (which it advances), with the position before."""
    fd = os.open(path, os.O_RDONLY)
    try:
        size = os.fstat(fd).st_size
        for line in read_lines(fd, position.offset, size):
            if not line.endswith(b"\n"):
                break
            body = line[:-1]
            record = decode(body)
            record = upgrade(record) if record is not None else {"kind": "unreadable"}
            yield record, position.advance(body, record)
    finally:
        os.close(fd)


def recovers(record: Record, line: int, size: int) -> bool:
    """Whether a record is the recovery record of the torn line `line` of `size` bytes."""
    return (
        record.get("kind") == "recovery"
        and record.get("torn_line") == line
        and record.get("torn_bytes") == size
    )
