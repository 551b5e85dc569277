"""The journal's one writer: appends chained records under an exclusive lock, catches up with
other writers, closes a torn last line with a recovery record, and keeps the head anchor."""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ..core import atomic_write, field, replace_file, struct
from .log import (
    CHAIN_FIELDS,
    FORMAT_VERSION,
    Fold,
    JournalError,
    Position,
    Record,
    decode,
    encode,
    line_hash,
    read_lines,
    recovers,
)
from .migrations import upgrade
from .schema import check


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
        """Record where the journal ends now, in a new file renamed over the anchor: a reader
        (`epistemic verify`) reads the old anchor or the new one, never one half written."""
        if self._anchor_fd < 0 or self.anchor_path is None:
            return
        data = json.dumps(self.position.to_json()).encode("ascii")
        replace_file(self.anchor_path, data + b"\n")

    def append(self, record: Record, *, durable: bool, before: bytes = b"") -> Record:
        """Chain, write and (if durable) fsync one record. Caller holds the lock. `before`
        goes out in the same write (the newline that closes a torn line). A record that does
        not fit the journal's schema is a bug: RecordError, and nothing is written."""
        full: Record = {
            "prev": self.position.head,
            "n": self.position.lines + 1,
            "v": FORMAT_VERSION,
        }
        full.update((k, v) for k, v in record.items() if k not in CHAIN_FIELDS)
        check(full)
        body = encode(full)
        self._write(before + body + b"\n")
        # the line is in the file: follow it at once, before the fsync, which a signal may
        # interrupt (its handler raising); the caller must then find the record it wrote
        self._advance(body, full)
        if durable:
            self._unsynced = True
            os.fsync(self._fd)
            self._unsynced = False
        else:
            self._unsynced = True
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
        self._advance(body, upgrade(record))
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


def _own_copy(path: Path, fd: int, flags: int) -> int:
    """Replace `path` by a copy of what `fd` holds, in a new file; the new descriptor."""
    data = os.pread(fd, os.fstat(fd).st_size, 0)
    atomic_write(path, data)
    os.close(fd)
    return os.open(path, flags)
