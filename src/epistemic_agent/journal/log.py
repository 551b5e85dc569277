"""The journal: append-only, hash-chained JSON Lines, locked against concurrent writers."""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.fsutil import atomic_write
from ..core.structs import field, struct

FORMAT_VERSION = 1
GENESIS = "0" * 64
PREFIX = b'{"prev":"'
#: The fields the writer owns; a record cannot set them.
CHAIN_FIELDS = frozenset({"prev", "n", "v"})
CHUNK = 1 << 20
ANCHOR_SIZE = 256  # head.json is rewritten in place: padded JSON of this many bytes


if TYPE_CHECKING:
    from typing import Any

    Record = dict[str, Any]
else:
    Record = dict


class JournalError(Exception):
    """The journal cannot be appended to safely (its chain is broken, or it is unreadable).
    `journal` names a damaged journal (`epistemic verify --salvage` can continue after it)."""

    def __init__(self, message: str, journal: Path | None = None) -> None:
        super().__init__(message)
        self.journal = journal


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
            record = decode(body) or {"kind": "unreadable"}
            yield record, position.advance(body, record)
    finally:
        os.close(fd)


@struct(frozen=False)
class JournalWriter:
    """Appends records to one journal file. Use `locked()` around every append."""

    path: Path
    fold: Fold
    anchor_path: Path | None = None
    position: Position = field(default_factory=Position)
    _fd: int = -1
    _anchor_fd: int = -1
    _anchor_checked: bool = False
    _unsynced: bool = False
    relinked: list[str] = field(default_factory=list)

    def open(self, start: Position | None = None) -> bool:
        """Open (creating) the file; resume from `start` if it still matches. True if resumed.
        A journal or anchor with another hard link (made by anything that could reach it
        before) is first copied to a file of its own, so the link reaches only the old copy;
        `relinked` names what was moved."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
        if os.fstat(self._fd).st_nlink > 1:
            self._fd = _own_copy(self.path, self._fd, os.O_RDWR | os.O_APPEND)
            self.relinked.append(self.path.name)
        if self.anchor_path is not None:
            self._anchor_fd = os.open(self.anchor_path, os.O_RDWR | os.O_CREAT, 0o644)
            if os.fstat(self._anchor_fd).st_nlink > 1:
                self._anchor_fd = _own_copy(self.anchor_path, self._anchor_fd, os.O_RDWR)
                self.relinked.append(self.anchor_path.name)
        resumed = start is not None and self._valid_start(start)
        self.position = start.copy() if start is not None and resumed else Position()
        return resumed

    def close(self) -> None:
        if self._fd >= 0:
            if self._unsynced:
                os.fsync(self._fd)
            os.close(self._fd)
            self._fd = -1
        if self._anchor_fd >= 0:
            os.close(self._anchor_fd)
            self._anchor_fd = -1

    @contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the journal's lock and catch up with what other writers appended."""
        self.restore_if_gone()
        fcntl.flock(self._fd, fcntl.LOCK_EX)
        try:
            self._catch_up()
            yield
        finally:
            fcntl.flock(self._fd, fcntl.LOCK_UN)

    def restore_if_gone(self) -> bool:
        """If the journal file was deleted or replaced under us (a command did it), put back
        the one we hold open, whole. True when it had to be restored."""
        held = os.fstat(self._fd)
        try:
            found = os.stat(self.path)
            if (found.st_ino, found.st_dev) == (held.st_ino, held.st_dev):
                return False
        except FileNotFoundError:
            pass
        data = os.pread(self._fd, held.st_size, 0)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(self.path, data)
        os.close(self._fd)
        self._fd = os.open(self.path, os.O_RDWR | os.O_APPEND)
        if self.anchor_path is not None:
            os.close(self._anchor_fd)
            self._anchor_fd = os.open(self.anchor_path, os.O_RDWR | os.O_CREAT, 0o644)
        return True

    def write_anchor(self) -> None:
        """Record where the journal ends now, in place (fixed size: no new file per call)."""
        if self._anchor_fd < 0:
            return
        if os.fstat(self._anchor_fd).st_nlink == 0 and self.anchor_path is not None:
            os.close(self._anchor_fd)  # deleted under us: write a new one
            self._anchor_fd = os.open(self.anchor_path, os.O_RDWR | os.O_CREAT, 0o644)
        data = json.dumps(self.position.to_json()).encode("ascii")
        os.pwrite(self._anchor_fd, data.ljust(ANCHOR_SIZE - 1) + b"\n", 0)
        if os.fstat(self._anchor_fd).st_size > ANCHOR_SIZE:
            os.ftruncate(self._anchor_fd, ANCHOR_SIZE)

    def append(self, record: Record, *, durable: bool, before: bytes = b"") -> Record:
        """Chain, write and (if durable) fsync one record. Caller holds the lock. `before`
        goes out in the same write (the newline that closes a torn line)."""
        full: Record = {
            "prev": self.position.head,
            "n": self.position.lines + 1,
            "v": FORMAT_VERSION,
        }
        full.update((k, v) for k, v in record.items() if k not in CHAIN_FIELDS)
        body = encode(full)
        self._write(before + body + b"\n")
        if durable:
            os.fsync(self._fd)
            self._unsynced = False
        else:
            self._unsynced = True
        self._advance(body, full)
        return full

    def _advance(self, body: bytes, record: Record) -> None:
        self.fold(record, self.position.advance(body, record))

    def _write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            written = os.write(self._fd, view)
            view = view[written:]

    def _catch_up(self) -> None:
        size = os.fstat(self._fd).st_size
        if size < self.position.offset:
            raise JournalError(
                f"{self.path} shrank below what was already read: truncated", self.path
            )
        unrecovered: tuple[int, int] | None = None  # (line, bytes) awaiting a recovery record
        torn = b""
        for body in read_lines(self._fd, self.position.offset, size):
            if not body.endswith(b"\n"):  # torn: a crash cut the last write
                torn = body
                break
            unrecovered = self._take(body[:-1], unrecovered)
        if not self._anchor_checked:  # before anything is appended: nothing may cover it up
            self._anchor_checked = True
            self._check_anchor(unrecovered)
        if unrecovered is not None:  # complete, yet no writer wrote it: not a crash's doing
            raise JournalError(
                f"{self.path}: line {unrecovered[0]} is not a journal entry, and it ends in a "
                "newline (a crash leaves an incomplete last line): it was added or overwritten",
                self.path,
            )
        if torn:  # closed, and described by the recovery record, in one write
            self._advance(torn, {"kind": "unreadable"})
            line = {"kind": "recovery", "torn_line": self.position.lines, "torn_bytes": len(torn)}
            self.append(line, durable=True, before=b"\n")

    def _check_anchor(self, unrecovered: tuple[int, int] | None) -> None:
        """The journal must still hold everything the head anchor recorded, unchanged."""
        if self.anchor_path is None:
            return
        try:
            anchored = Position.from_json(json.loads(self.anchor_path.read_bytes()))
        except (OSError, ValueError):
            return
        if anchored is None:
            return
        problem = None
        if self.position.lines < anchored.lines:
            problem = (
                f"it has {self.position.lines} complete line(s) but its head anchor "
                f"records {anchored.lines}: it was truncated"
            )
        elif unrecovered is not None and unrecovered[0] <= anchored.lines:
            problem = f"line {unrecovered[0]} was complete when anchored and is now unreadable"
        elif self.position.lines == anchored.lines and self.position.head != anchored.head:
            problem = f"line {anchored.lines} changed after it was written"
        if problem:
            raise JournalError(
                f"{self.path}: {problem}; run `epistemic verify` before appending to it",
                self.path,
            )

    def _take(self, body: bytes, unrecovered: tuple[int, int] | None) -> tuple[int, int] | None:
        """Follow one complete line; an unreadable one must be followed by a recovery record."""
        record = decode(body)
        number = self.position.lines + 1
        bad = unrecovered[0] if unrecovered is not None else number
        if record is None:
            if number == 1 or unrecovered is not None:
                raise JournalError(
                    f"{self.path}: line {bad} is not a journal entry; "
                    "this is not an intact journal",
                    self.path,
                )
            self._advance(body, {"kind": "unreadable"})
            return number, len(body)
        if record.get("prev") != self.position.head or (
            unrecovered is not None and not recovers(record, *unrecovered)
        ):
            raise JournalError(
                f"{self.path}: the hash chain breaks at line {bad}; "
                "run `epistemic verify` before appending to it",
                self.path,
            )
        self._advance(body, record)
        return None

    def _valid_start(self, start: Position) -> bool:
        """Whether a remembered position still matches the file (its previous line hashes right)."""
        if start.offset == 0:
            return start.lines == 0
        size = os.fstat(self._fd).st_size
        if start.offset > size:
            return False
        window = min(start.offset, 1 << 16)
        tail = os.pread(self._fd, window, start.offset - window)
        if not tail.endswith(b"\n"):
            return False
        body = tail[:-1].rsplit(b"\n", 1)[-1]
        return line_hash(body) == start.head and (window == start.offset or b"\n" in tail[:-1])


def recovers(record: Record, line: int, size: int) -> bool:
    """Whether a record is the recovery record of the torn line `line` of `size` bytes."""
    return (
        record.get("kind") == "recovery"
        and record.get("torn_line") == line
        and record.get("torn_bytes") == size
    )


def _own_copy(path: Path, fd: int, flags: int) -> int:
    """Replace `path` by a copy of what `fd` holds, in a new file; the new descriptor."""
    data = os.pread(fd, os.fstat(fd).st_size, 0)
    atomic_write(path, data)
    os.close(fd)
    return os.open(path, flags)


def read_records(path: Path) -> tuple[list[Record], list[str]]:
    """Every readable record of a journal, and plain-language notes on what was odd."""
    numbered, notes = read_numbered(path)
    return [record for _, record in numbered], notes


def read_numbered(path: Path) -> tuple[list[tuple[int, Record]], list[str]]:
    """Every readable record with its line number, and notes on what was odd: one note for
    all the lines that are not JSON objects, one for all the lines of newer versions."""
    numbered: list[tuple[int, Record]] = []
    skipped: list[int] = []
    torn: list[str] = []
    with path.open("rb") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.endswith(b"\n"):
                torn.append(
                    f"line {number} is torn (incomplete: a crash mid-write, "
                    "or still being written); it was not read"
                )
                break
            record = decode(line[:-1])
            if record is None:
                skipped.append(number)
            else:
                numbered.append((number, record))
    notes = [_skipped_note(skipped)] if skipped else []
    newer = newer_note(numbered)
    return numbered, notes + ([newer] if newer else []) + torn


def newer_version(record: Record) -> int | None:
    """The record's format version when it is newer than this reader's, else None."""
    version = record.get("v")
    if type(version) is int and version > FORMAT_VERSION:
        return version
    return None


def newer_note(numbered: list[tuple[int, Record]]) -> str | None:
    """One note on the lines of newer versions: how many, which versions, the first."""
    lines = [(number, v) for number, record in numbered if (v := newer_version(record))]
    if not lines:
        return None
    which = versions_text([version for _, version in lines])
    reader = f"newer than this reader ({FORMAT_VERSION}); read what is understood"
    if len(lines) == 1:
        return f"line {lines[0][0]} has format {which}, {reader}"
    return f"{len(lines)} lines have format {which}, {reader} (the first is line {lines[0][0]})"


def versions_text(versions: list[int]) -> str:
    """`version 2`, `versions 2 and 3`."""
    found = sorted(set(versions))
    return f"version {found[0]}" if len(found) == 1 else f"versions {listed(found)}"


def _skipped_note(lines: list[int]) -> str:
    if len(lines) == 1:
        return f"line {lines[0]} is not a JSON object; skipped"
    return f"{len(lines)} lines are not JSON objects; skipped (lines {listed(lines)})"


def listed(items: list[Any], most: int = 5) -> str:
    """`1`, `1 and 2`, `1, 2 and 3`; past `most` items, `1, 2, 3, 4, 5 and 7 more`."""
    words = [str(item) for item in items]
    if len(words) > most + 1:
        words = [*words[:most], f"{len(words) - most} more"]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]
