"""Landlock through ctypes: a ruleset that denies every change to the file system except beneath
the paths it grants, and (ABI 6 on) scopes signals and abstract Unix sockets to the sandbox; with
an allow-list of what may be read, it denies reading, listing and running anything else too.

Landlock is an allow-list: once a right is *handled* it is denied everywhere except beneath the
inodes a rule grants it on, and a rule on a directory covers its whole subtree (a subtree cannot
be carved back out: confinement.py uses mounts for that). Only the rights that change a tree are
handled (write, truncate, remove, make, refer); read, list and execute are handled only when
the caller gives an allow-list of readable paths (`readable`), and then are granted beneath
those, the writable grants and the files, and nowhere else. Landlock governs opening, not
looking up: a path outside the list can still be stat'ed or traversed, never opened, listed
or run. A restricted process also cannot mount, unmount or pivot_root, and
cannot ptrace (or open /proc/PID/mem, /fd, /root of) any process outside its own domain.

The ruleset is built in the confining thread (it restricts nobody until landlock_restrict_self)
and its fd is close-on-exec, so the command never sees it.
"""

from __future__ import annotations

import ctypes
import os
import stat
from collections.abc import Callable
from functools import cache
from pathlib import Path

from ...core import struct

SYS_CREATE_RULESET, SYS_ADD_RULE, SYS_RESTRICT_SELF = 444, 445, 446  # same on every arch
CREATE_RULESET_VERSION = 1
RULE_PATH_BENEATH = 1

EXECUTE = 1 << 0
WRITE_FILE = 1 << 1
READ_FILE = 1 << 2
READ_DIR = 1 << 3
REMOVE_DIR = 1 << 4
REMOVE_FILE = 1 << 5
MAKE_CHAR = 1 << 6
MAKE_DIR = 1 << 7
MAKE_REG = 1 << 8
MAKE_SOCK = 1 << 9
MAKE_FIFO = 1 << 10
MAKE_BLOCK = 1 << 11
MAKE_SYM = 1 << 12
REFER = 1 << 13  # ABI 2
TRUNCATE = 1 << 14  # ABI 3

SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0  # ABI 6
SCOPE_SIGNAL = 1 << 1  # ABI 6
SCOPES_SINCE = 6

ABI1_WRITES = (
    WRITE_FILE
    | REMOVE_DIR
    | REMOVE_FILE
    | MAKE_CHAR
    | MAKE_DIR
    | MAKE_REG
    | MAKE_SOCK
    | MAKE_FIFO
    | MAKE_BLOCK
    | MAKE_SYM
)
FILE_RIGHTS = WRITE_FILE | TRUNCATE  # the only handled rights a rule on a non-directory may hold
READS = EXECUTE | READ_FILE | READ_DIR  # handled only with an allow-list of readable paths
FILE_READS = EXECUTE | READ_FILE  # what of READS a rule on a non-directory may hold
DEVICE_NODES = MAKE_CHAR | MAKE_BLOCK  # never granted: a device node is a way around everything


class _RulesetAttr(ctypes.Structure):
    _fields_ = (
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    )


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = (("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32))


@struct
class _Calls:
    create_ruleset: Callable[..., int]
    add_rule: Callable[..., int]
    restrict_self: Callable[..., int]


@cache
def _calls() -> _Calls:
    libc = ctypes.CDLL(None, use_errno=True)
    c_long, c_int, c_u32 = ctypes.c_long, ctypes.c_int, ctypes.c_uint32
    vp, size = ctypes.c_void_p, ctypes.c_size_t

    def syscall(*argtypes: type) -> Callable[..., int]:
        proto = ctypes.CFUNCTYPE(c_long, c_long, *argtypes, use_errno=True)
        return proto(("syscall", libc))

    return _Calls(
        create_ruleset=syscall(vp, size, c_u32),
        add_rule=syscall(c_int, c_int, vp, c_u32),
        restrict_self=syscall(c_int, c_u32),
    )


def _raise_errno(what: str) -> None:
    errno = ctypes.get_errno()
    raise OSError(errno, f"{what}: {os.strerror(errno)}")


def abi_version() -> int:
    """The kernel's Landlock ABI version; OSError (ENOSYS, EOPNOTSUPP) when there is none."""
    abi = _calls().create_ruleset(SYS_CREATE_RULESET, None, 0, CREATE_RULESET_VERSION)
    if abi < 0:
        _raise_errno("landlock_create_ruleset")
    return abi


def handled_rights(abi: int) -> int:
    """The tree-changing rights this ABI knows; older kernels simply handle fewer of them."""
    rights = ABI1_WRITES
    if abi >= 2:
        rights |= REFER
    if abi >= 3:
        rights |= TRUNCATE
    return rights


def scopes(abi: int) -> int:
    return SCOPE_SIGNAL | SCOPE_ABSTRACT_UNIX_SOCKET if abi >= SCOPES_SINCE else 0


def restrict_thread(
    grants: tuple[Path, ...],
    files: tuple[Path, ...],
    abi: int,
    readable: tuple[Path, ...] | None = None,
) -> None:
    """Restrict the calling thread (and what it spawns from now on): no change to the file
    system but beneath the `grants` directories and in the `files` (write and truncate only),
    and, from ABI 6, no signal or abstract socket beyond its own domain. With `readable`, no
    file read, folder listed or program run either but beneath those paths, the grants and
    the files. The caller must have set no_new_privs (or hold CAP_SYS_ADMIN)."""
    reads = READS if readable is not None else 0
    handled = handled_rights(abi) | reads
    attr = _RulesetAttr(handled, 0, scopes(abi))
    size = ctypes.sizeof(attr) if abi >= SCOPES_SINCE else ctypes.sizeof(ctypes.c_uint64)
    calls = _calls()
    ruleset = calls.create_ruleset(SYS_CREATE_RULESET, ctypes.byref(attr), size, 0)
    if ruleset < 0:
        _raise_errno("landlock_create_ruleset")
    try:
        for path in grants:
            _grant(ruleset, path, handled & ~DEVICE_NODES, strict=True)
        for path in files:
            _grant(ruleset, path, handled & (FILE_RIGHTS | FILE_READS), strict=False)
        for path in readable or ():
            _grant(ruleset, path, reads, strict=False)
        if calls.restrict_self(SYS_RESTRICT_SELF, ruleset, 0) != 0:
            _raise_errno("landlock_restrict_self")
    finally:
        os.close(ruleset)


def _grant(ruleset: int, path: Path, rights: int, strict: bool) -> None:
    """Add a rule granting `rights` beneath one path (file rights only for a non-directory)."""
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        if strict:
            raise
        return  # a device this machine lacks: nothing to grant
    try:
        if not stat.S_ISDIR(os.fstat(fd).st_mode):
            rights &= FILE_RIGHTS | FILE_READS
        rule = _PathBeneathAttr(rights, fd)
        added = _calls().add_rule(SYS_ADD_RULE, ruleset, RULE_PATH_BENEATH, ctypes.byref(rule), 0)
        if added < 0:
            _raise_errno(f"landlock_add_rule({path})")
    finally:
        os.close(fd)
