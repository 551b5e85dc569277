"""Opening a workspace path without being led out of it: openat2(RESOLVE_BENEATH).

A file tool's path is checked before it runs (filetools.precheck), but between that check and
the write, a symlink can be swapped in by any process that can write the workspace. So the
file tools never open a path by name: they open it beneath a descriptor of the workspace with
openat2, which refuses (EXDEV) any resolution that leaves it, by `..`, an absolute symlink or
a magic link, however the components are swapped meanwhile; then they look at where the
descriptor really is, and act on it through descriptors only (a write goes to a new file in
the verified folder, renamed over the name there).

Kernels before 5.6 lack openat2: there the path is resolved and checked, then opened with
O_NOFOLLOW on its last component, which narrows the race but does not close it (the record
says which: `Beneath.exact`).
"""

from __future__ import annotations

import ctypes
import errno
import os
from functools import cache

SYS_OPENAT2 = 437  # the same on every architecture
RESOLVE_NO_MAGICLINKS = 0x02
RESOLVE_BENEATH = 0x08
RESOLVE_IN_ROOT = 0x10


class _OpenHow(ctypes.Structure):
    _fields_ = (
        ("flags", ctypes.c_uint64),
        ("mode", ctypes.c_uint64),
        ("resolve", ctypes.c_uint64),
    )


@cache
def _syscall() -> ctypes._CFuncPtr:  # type: ignore[name-defined]
    libc = ctypes.CDLL(None, use_errno=True)
    function = libc.syscall
    function.restype = ctypes.c_long
    return function


@cache
def exact() -> bool:
    """Whether this kernel has openat2 (else the fallback's narrower guarantee applies)."""
    try:
        fd = open_beneath(os.open("/", os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC), ".", os.O_PATH)
    except OSError as error:
        return error.errno != errno.ENOSYS
    os.close(fd)
    return True


def open_beneath(root: int, path: str, flags: int, mode: int = 0o644) -> int:
    """A descriptor for `path` resolved beneath the folder `root` (a descriptor), never
    outside it; OSError (EXDEV when it would leave, ENOENT, ...) otherwise."""
    how = _OpenHow(flags | os.O_CLOEXEC, mode if flags & os.O_CREAT else 0, _RESOLVE)
    found = int(_syscall()(SYS_OPENAT2, root, os.fsencode(path), ctypes.byref(how), 24))
    if found >= 0:
        return found
    code = ctypes.get_errno()
    if code == errno.ENOSYS:
        return _fallback(root, path, flags, mode)
    raise OSError(code, os.strerror(code), path)


_RESOLVE = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS


def open_in_root(root: int, path: str, flags: int) -> int:
    """A descriptor for `path` resolved as a process whose root is the folder `root` (a
    descriptor) would resolve it: `..` stops there, absolute symlinks start there. OSError
    otherwise (ENOSYS before Linux 5.6)."""
    how = _OpenHow(flags | os.O_CLOEXEC, 0, RESOLVE_IN_ROOT)
    found = int(_syscall()(SYS_OPENAT2, root, os.fsencode(path), ctypes.byref(how), 24))
    if found < 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code), path)
    return found


def _fallback(root: int, path: str, flags: int, mode: int) -> int:
    """Without openat2: resolve and check, then open the last component without following."""
    base = where(root)
    full = os.path.realpath(os.path.join(base, path))
    if full != base and not full.startswith(base.rstrip("/") + "/"):
        raise OSError(errno.EXDEV, "the path leads out of the workspace", path)
    return os.open(full, flags | os.O_CLOEXEC | os.O_NOFOLLOW, mode)


def where(fd: int) -> str:
    """The absolute path a descriptor stands for now."""
    return os.readlink(f"/proc/self/fd/{fd}")
