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


def replace_file(target: Path, data: bytes) -> None:
    """Replace a regular file with a new one holding `data`: a reader sees the old file or the
    new one, and what a reader holds open is never written again (it keeps what it held).

    The new file is written beside the target and swapped with it (renameat2
    RENAME_EXCHANGE), then the old one, now under the new file's temporary name, is unlinked.
    It is what `atomic_write` does, but a rename over an existing file makes ext4 flush the
    new file's data at once (its `auto_da_alloc` safeguard), which costs a few hundred
    microseconds per write on a virtual disk (bench/RESULTS.md, section 15); this runs on every
    call, twice. Without the swap (another kernel, another file system, no target yet, a
    target that is not a regular file) it falls back to `atomic_write`."""
    try:
        found = os.lstat(target)
    except FileNotFoundError:
        found = None
    if found is None or not stat.S_ISREG(found.st_mode) or _renameat2() is None:
        atomic_write(target, data)
        return
    prefix = "." + _shortened(target.name) + "."
    handle, name = make_unique(target.parent, prefix=prefix, mode=0o644)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        if not _exchange(name, target):
            os.replace(name, target)
    finally:
        name.unlink(missing_ok=True)  # the old file after a swap; the new one after a failure


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
