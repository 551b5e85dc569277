"""Small file-system helpers shared by the record's writers (kept cheap: they run per call)."""

from __future__ import annotations

import ctypes
import os
import stat
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL


def make_unique(
    directory: Path, prefix: str = "", suffix: str = "", mode: int = 0o600
) -> tuple[int, Path]:
    """Create a new empty file (O_EXCL) with a random name; like tempfile.mkstemp, cheaper to
    import (start-up time matters: `epistemic exec` runs once per command)."""
    while True:
        path = directory / f"{prefix}{os.urandom(8).hex()}{suffix}"
        try:
            return os.open(path, _CREATE, mode), path
        except FileExistsError:
            continue


def atomic_write(target: Path, data: bytes, mode: int | None = None) -> None:
    """Write beside the target and rename over it: a reader sees the old file or the new one.

    Without `mode` the file is created 0644 (less the umask); with it, exactly that mode.
    """
    prefix = "." + _shortened(target.name) + "."  # beside a 255-byte name: still a valid name
    try:
        handle, name = make_unique(target.parent, prefix=prefix, mode=0o644)
    except FileNotFoundError:
        target.parent.mkdir(parents=True, exist_ok=True)
        handle, name = make_unique(target.parent, prefix=prefix, mode=0o644)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        if mode is not None:
            os.chmod(name, mode)
        os.replace(name, target)
    except BaseException:
        name.unlink(missing_ok=True)
        raise


def _shortened(name: str, most: int = 200) -> str:
    """A file name cut to at most `most` bytes (whole characters)."""
    data = name.encode("utf-8", "surrogateescape")
    return name if len(data) <= most else data[:most].decode("utf-8", "ignore")


def exchange_write(target: Path, data: bytes, spare: Path) -> None:
    """Replace a file atomically without creating one: write `spare` in place, then swap it
    with `target` (renameat2 RENAME_EXCHANGE). Creating and renaming files is what a per-call
    report write costs on some disks; this costs a pwrite and a swap. Falls back to
    atomic_write where the swap is not supported."""
    try:
        handle = _open_spare(spare)
    except FileNotFoundError:
        atomic_write(target, data)
        return
    try:
        os.pwrite(handle, data, 0)
        os.ftruncate(handle, len(data))
    finally:
        os.close(handle)
    if not _exchange(spare, target):
        os.replace(spare, target)


def written_at(path: Path) -> int:
    """When a file was last written (0 when it does not exist)."""
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return 0


def _open_spare(spare: Path) -> int:
    """The spare for writing, never through what someone may have swapped in for it (a
    symlink, a hard link, a FIFO): anything but a plain file of one link is replaced."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        handle = os.open(spare, flags, 0o644)
    except FileNotFoundError:
        raise
    except OSError:  # ELOOP: a symlink; ENXIO: a FIFO; EISDIR...
        handle = -1
    if handle >= 0:
        found = os.fstat(handle)
        if stat.S_ISREG(found.st_mode) and found.st_nlink == 1:
            return handle
        os.close(handle)
    if spare.is_dir() and not spare.is_symlink():
        os.rmdir(spare)
    else:
        spare.unlink()
    return os.open(spare, flags | os.O_EXCL, 0o644)


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths atomically; False when the kernel or file system cannot."""
    renameat2 = _renameat2()
    return renameat2 is not None and renameat2(-100, bytes(a), -100, bytes(b), 2) == 0


@cache
def _renameat2() -> Any:
    """libc's renameat2 (AT_FDCWD = -100, RENAME_EXCHANGE = 2), loaded once; None if absent."""
    try:
        return ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return None
