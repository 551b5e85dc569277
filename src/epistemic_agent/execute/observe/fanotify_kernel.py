"""The fanotify interface: the wire format of the events a group queues (struct
fanotify_event_metadata, fanotify_event_info_fid; see fanotify(7)) and their parse into
`Event`s, then the system calls, bound with ctypes on first use, and the pool of notification
groups they are made on.

Closing a group waits for an SRCU grace period (8 to 20 ms measured), so groups are never
closed: idle ones are kept in a pool and only the file-system mark is added and removed per
call (µs). `available()` probes once per device whether a mark can be placed there at all.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Iterator
from pathlib import Path

from ...core import struct as _struct

# events and info record types
MODIFY, ATTRIB, CLOSE_WRITE = 0x2, 0x4, 0x8
CREATE, DELETE, OVERFLOW = 0x100, 0x200, 0x4000
RENAME, ONDIR = 0x10000000, 0x40000000
FID, DFID_NAME, OLD_DFID_NAME, NEW_DFID_NAME = 1, 2, 10, 12

_META = struct.Struct("=IBBHQii")  # struct fanotify_event_metadata
_INFO = struct.Struct("=BBH")  # struct fanotify_event_info_header
_HANDLE = struct.Struct("=Ii")  # struct file_handle, without f_handle

Record = tuple[int, bytes, str]  # info type, handle, name ("" when none)


@_struct
class Event:
    """One queued event: its mask, the writer's pid and its fid records."""

    mask: int
    pid: int
    records: tuple[Record, ...]

    def record(self, kind: int) -> tuple[bytes, str] | None:
        for found, handle, name in self.records:
            if found == kind:
                return handle, name
        return None

    @property
    def fid(self) -> bytes | None:
        """The handle of the object itself (the child, for create/delete/rename)."""
        found = self.record(FID)
        return None if found is None else found[0]

    def nameless_attrib(self) -> bytes | None:
        """The handle of an ATTRIB reported without a name: a link count changed."""
        if not self.mask & ATTRIB:
            return None
        entry = self.record(DFID_NAME)
        if entry is None:
            return self.fid
        return entry[0] if entry[1] == "." and self.mask & ONDIR else None


def parse(data: bytes, wanted: int = ~0) -> Iterator[Event]:
    """The events in a buffer read from a group (whole events only) whose mask has any of
    the `wanted` bits; the others are skipped without decoding their records."""
    offset, end, unpack = 0, len(data), _META.unpack_from
    while offset + _META.size <= end:
        length, _version, _reserved, meta_len, mask, _fd, pid = unpack(data, offset)
        if length < meta_len:
            break
        if mask & wanted:
            yield Event(mask, pid, _records(data, offset + meta_len, offset + length))
        offset += length


def _records(data: bytes, start: int, end: int) -> tuple[Record, ...]:
    """(info type, struct file_handle bytes, name) of each fid record of an event."""
    records = []
    while start + _INFO.size <= end:
        kind, _pad, length = _INFO.unpack_from(data, start)
        size, _type = _HANDLE.unpack_from(data, start + 12)
        handle_end = start + 12 + _HANDLE.size + size
        if length < handle_end - start:
            break
        stop = data.find(b"\0", handle_end, start + length)
        name = data[handle_end:stop].decode(errors="surrogateescape") if stop > handle_end else ""
        records.append((kind, data[start + 12 : handle_end], name))
        start += length
    return tuple(records)


# -- the system calls and the pool of groups ------------------------------------------------------

# fanotify_init flags (FAN_CLASS_NOTIF is 0) and marks
FAN_CLOEXEC, FAN_NONBLOCK, FAN_UNLIMITED_QUEUE = 0x1, 0x2, 0x10
REPORT_FID, REPORT_DIR_FID, REPORT_NAME, REPORT_TARGET_FID = 0x200, 0x400, 0x800, 0x1000
MARK_ADD, MARK_FLUSH, MARK_FILESYSTEM = 0x1, 0x80, 0x100

_INIT = FAN_CLOEXEC | FAN_NONBLOCK | REPORT_FID | REPORT_DIR_FID | REPORT_NAME | REPORT_TARGET_FID
_MASK = MODIFY | ATTRIB | CLOSE_WRITE | CREATE | DELETE | RENAME | ONDIR
_AT_FDCWD = -100


class _Lib:
    """The three libc calls, bound with ctypes on first use."""

    def __init__(self) -> None:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        self.init = libc.fanotify_init
        self.init.argtypes = [ctypes.c_uint, ctypes.c_uint]
        self.mark = libc.fanotify_mark
        self.mark.argtypes = [ctypes.c_int, ctypes.c_uint, ctypes.c_uint64, ctypes.c_int]
        self.mark.argtypes += [ctypes.c_char_p]
        self.open_handle = libc.open_by_handle_at
        self.open_handle.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int]
        self.errno = ctypes.get_errno

    def check(self, result: int, what: str) -> int:
        if result < 0:
            code = self.errno()
            raise OSError(code, f"{what}: {os.strerror(code)}")
        return result


_lib: _Lib | None = None
idle: dict[bool, list[int]] = {True: [], False: []}  # unlimited queue? → idle groups
_usable: dict[int, bool] = {}  # st_dev → whether a probe succeeded


def lib() -> _Lib:
    global _lib
    if _lib is None:
        _lib = _Lib()
    return _lib


def available(workspace: Path) -> bool:
    """Whether fanotify can watch this workspace's file system (probed once per device)."""
    try:
        device = os.stat(workspace).st_dev
    except OSError:
        return False
    if device not in _usable:
        _usable[device] = _probe(workspace)
    return _usable[device]


def _probe(workspace: Path) -> bool:
    try:
        group = acquire(True)
        mark(group, MARK_ADD, workspace)
        flush(group)
    except (OSError, AttributeError):  # EPERM, EINVAL (old kernel), no such libc symbol
        return False
    idle[True].append(group)
    return True


def acquire(unlimited: bool) -> int:
    """An idle group from the pool (its queue emptied), or a new one."""
    try:
        group = idle[unlimited].pop()
    except IndexError:
        flags = _INIT | (FAN_UNLIMITED_QUEUE if unlimited else 0)
        return lib().check(lib().init(flags, os.O_RDONLY), "fanotify_init")
    drain(group)  # stragglers queued while the last mark was being removed
    return group


def mark(group: int, action: int, workspace: Path) -> None:
    path = os.fsencode(workspace)
    lib().check(lib().mark(group, action | MARK_FILESYSTEM, _MASK, _AT_FDCWD, path), "mark")


def flush(group: int) -> None:
    """Remove the group's file-system marks (whatever became of the workspace's path)."""
    lib().check(lib().mark(group, MARK_FLUSH | MARK_FILESYSTEM, 0, _AT_FDCWD, None), "flush")


def drain(group: int) -> bytes:
    chunks = []
    while True:
        try:
            chunk = os.read(group, 1 << 16)
        except BlockingIOError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks)


def where(handle_fd: int, handle: bytes) -> str | None:
    """The current absolute path of a directory's handle; None if it no longer exists."""
    found = lib().open_handle(handle_fd, handle, os.O_PATH | os.O_CLOEXEC)
    if found < 0:
        return None  # ESTALE: deleted (or the handle is of another file system)
    try:
        target = os.readlink(f"/proc/self/fd/{found}")
    except OSError:  # a path longer than PATH_MAX: placed by the names events gave instead
        return None
    finally:
        os.close(found)
    return None if target.endswith(" (deleted)") else target
