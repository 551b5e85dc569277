"""Reading a file an act may have written: never blocking, never more than a stated size.

Acts run as the session's user and write the workspace and their grants, so a name the session
reads there may have become a FIFO (opening it waits for a writer), a Unix socket, a device
node, a symbolic link loop, or a sparse file of many gigabytes (reading it fills memory). Every
such read goes through `read_regular`: the name is stat'ed first, and anything but a regular
file is refused without being opened (opening a device runs its driver); the file is then
opened with O_NONBLOCK (and O_NOFOLLOW when a symlink must not be followed), checked again on
the descriptor, and read up to `limit` bytes. A file over the limit is refused (`TooLarge`),
unless the caller asked for its first `limit` bytes only (`whole=False`).
"""

from __future__ import annotations

import errno
import os
import stat
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from os import PathLike

CHUNK = 1 << 20
_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
_KINDS = {
    stat.S_IFIFO: "a FIFO",
    stat.S_IFSOCK: "a socket",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFDIR: "a directory",
    stat.S_IFLNK: "a symbolic link",
}


class NotRegular(OSError):
    """Not a regular file: a FIFO, a socket, a device, a folder, or a symlink not followed."""


class TooLarge(OSError):
    """Larger than the reader's limit."""


def read_regular(
    path: str | PathLike[str],
    limit: int,
    *,
    follow: bool = True,
    whole: bool = True,
    offset: int = 0,
) -> bytes:
    """The bytes of the regular file at `path`, at most `limit` of them. NotRegular for
    anything else, TooLarge for a file over `limit` (with `whole`; without it, its first
    `limit` bytes, or the `limit` from `offset` on), and OSError as `open` raises it (ENOENT,
    ELOOP for a symlink loop...)."""
    if offset and whole:
        raise ValueError("an offset reads a part of the file: whole=False")
    name = os.fspath(path)
    check(os.stat(name, follow_symlinks=follow), name, limit if whole else None)
    fd = os.open(name, _FLAGS if follow else _FLAGS | os.O_NOFOLLOW)
    try:
        if offset:
            os.lseek(fd, offset, os.SEEK_SET)
        return read_open(fd, limit, name, whole=whole)
    finally:
        os.close(fd)


def read_open(fd: int, limit: int, name: str = "", *, whole: bool = True) -> bytes:
    """`read_regular` for a descriptor the caller opened (with O_NONBLOCK): checked with
    fstat, then read from where it stands."""
    check(os.fstat(fd), name, limit if whole else None)
    chunks, left = [], limit + 1 if whole else limit
    while left > 0:
        chunk = os.read(fd, min(left, CHUNK))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
    data = b"".join(chunks)
    if len(data) > limit:  # it grew since fstat
        raise TooLarge(errno.EFBIG, f"larger than {limit} bytes", name)
    return data


def check(info: os.stat_result, name: str, limit: int | None) -> None:
    """NotRegular unless `info` is a regular file's; TooLarge when it is over `limit`."""
    if not stat.S_ISREG(info.st_mode):
        raise NotRegular(errno.EINVAL, f"not a regular file ({kind(info.st_mode)})", name)
    if limit is not None and info.st_size > limit:
        raise TooLarge(errno.EFBIG, f"larger than {limit} bytes", name)


def kind(mode: int) -> str:
    """What a file mode names, in words: `a FIFO`, `a socket`, `a character device`..."""
    return _KINDS.get(stat.S_IFMT(mode), "not a file")
