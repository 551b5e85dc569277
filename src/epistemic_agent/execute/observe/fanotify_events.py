"""The fanotify event queue's wire format: the masks and info records the observer asks for,
and the parse of a buffer read from a group into `Event`s (struct fanotify_event_metadata,
fanotify_event_info_fid; see fanotify(7))."""

from __future__ import annotations

import struct
from collections.abc import Iterator

from ...core.structs import struct as _struct

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
