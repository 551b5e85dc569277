"""Landlock through ctypes: a ruleset that makes one directory tree read-only and nothing else.

Landlock is an allow-list: once a right is *handled*, it is denied everywhere except beneath
the inodes a rule grants it on, and a rule on a directory covers its whole subtree. We handle
only the rights that change a tree (write, truncate, remove, make, refer), never read or
execute, so reading and running stay allowed everywhere. To keep everything outside the
workspace writable, every sibling of every ancestor of the workspace gets a rule: sibling
directories get all handled rights, sibling files get write and truncate. The ancestors
themselves get nothing, since a right on them would reach into the workspace.

The whole ruleset is built in the parent (it restricts nobody until a process calls
landlock_restrict_self); the child only makes two syscalls: prctl(PR_SET_NO_NEW_PRIVS) and
landlock_restrict_self. The ruleset fd is close-on-exec, so the command never sees it.
"""

from __future__ import annotations

import ctypes
import os
import stat
from collections.abc import Callable
from functools import cache
from pathlib import Path

from .structs import struct

SYS_CREATE_RULESET, SYS_ADD_RULE, SYS_RESTRICT_SELF = 444, 445, 446  # same on every arch
CREATE_RULESET_VERSION = 1
RULE_PATH_BENEATH = 1
PR_SET_NO_NEW_PRIVS = 38

WRITE_FILE = 1 << 1
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


class _RulesetAttr(ctypes.Structure):
    # Only handled_access_fs: the kernel accepts a shorter struct than its own.
    _fields_ = (("handled_access_fs", ctypes.c_uint64),)


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = (("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32))


@struct
class _Calls:
    create_ruleset: Callable[..., int]
    add_rule: Callable[..., int]
    restrict_self: Callable[..., int]
    prctl: Callable[..., int]


@cache
def _calls() -> _Calls:
    libc = ctypes.CDLL(None, use_errno=True)
    c_long, c_int, c_u32, c_ulong = ctypes.c_long, ctypes.c_int, ctypes.c_uint32, ctypes.c_ulong
    vp, size = ctypes.c_void_p, ctypes.c_size_t

    def syscall(*argtypes: type) -> Callable[..., int]:
        proto = ctypes.CFUNCTYPE(c_long, c_long, *argtypes, use_errno=True)
        return proto(("syscall", libc))

    prctl = ctypes.CFUNCTYPE(c_int, c_int, c_ulong, c_ulong, c_ulong, c_ulong, use_errno=True)
    return _Calls(
        create_ruleset=syscall(vp, size, c_u32),
        add_rule=syscall(c_int, c_int, vp, c_u32),
        restrict_self=syscall(c_int, c_u32),
        prctl=prctl(("prctl", libc)),
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


def build_ruleset(workspace: Path, writable: tuple[Path, ...], abi: int) -> int:
    """A ruleset fd that leaves everything writable but `workspace`, minus the `writable` paths."""
    calls, handled = _calls(), handled_rights(abi)
    attr = _RulesetAttr(handled)
    ruleset = calls.create_ruleset(SYS_CREATE_RULESET, ctypes.byref(attr), ctypes.sizeof(attr), 0)
    if ruleset < 0:
        _raise_errno("landlock_create_ruleset")
    try:
        _grant_siblings(ruleset, workspace, handled)
        for path in writable:
            _grant(ruleset, str(path), handled, None, strict=True)
    except BaseException:
        os.close(ruleset)
        raise
    return ruleset


def _grant_siblings(ruleset: int, workspace: Path, handled: int) -> None:
    """Grant every entry beside the path from / down to the workspace (the path itself: none)."""
    parts = workspace.parts
    for depth in range(1, len(parts)):
        try:
            parent = os.open(Path(*parts[:depth]), os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError:
            continue  # an unreadable ancestor: its other entries stay read-only (the safe side)
        try:
            for name in _listing(parent):
                if name != parts[depth]:
                    _grant(ruleset, name, handled, parent, strict=False)
        finally:
            os.close(parent)


def _listing(parent: int) -> list[str]:
    try:
        return os.listdir(parent)
    except OSError:
        return []


def _grant(ruleset: int, name: str, handled: int, parent: int | None, strict: bool) -> None:
    """Add a rule granting the handled rights on one path (file rights for a non-directory)."""
    flags = os.O_PATH | os.O_CLOEXEC | (0 if strict else os.O_NOFOLLOW)
    try:
        fd = os.open(name, flags, dir_fd=parent)
    except OSError:
        if strict:
            raise
        return  # vanished since the listing
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISLNK(mode):
            return  # a symlink's target is governed where it lives
        rights = handled if stat.S_ISDIR(mode) else handled & FILE_RIGHTS
        rule = _PathBeneathAttr(rights, fd)
        added = _calls().add_rule(SYS_ADD_RULE, ruleset, RULE_PATH_BENEATH, ctypes.byref(rule), 0)
        if added < 0 and strict:
            _raise_errno(f"landlock_add_rule({name})")
    finally:
        os.close(fd)


def child_setup(ruleset: int) -> Callable[[], None]:
    """The function the forked child calls before exec: two syscalls, nothing else."""
    calls = _calls()
    prctl, restrict, get_errno = calls.prctl, calls.restrict_self, ctypes.get_errno

    def setup() -> None:
        if prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise OSError(get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")
        if restrict(SYS_RESTRICT_SELF, ruleset, 0) != 0:
            raise OSError(get_errno(), "landlock_restrict_self")

    return setup
