"""The Linux system calls confinement is made of, through ctypes: namespaces, mounts,
capabilities and no_new_privs. Landlock has a module of its own (confine_landlock).

Every function raises OSError (with the errno) when the kernel refuses. Nothing here decides
what to confine; execute/sandbox/confinement.py does.
"""

from __future__ import annotations

import ctypes
import os
from collections.abc import Callable
from functools import cache

CLONE_FS = 0x00000200
CLONE_NEWNS = 0x00020000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000

MS_RDONLY = 1
MS_NOSUID = 2
MS_NODEV = 4
MS_NOEXEC = 8
MS_BIND = 4096
MS_REC = 16384
MS_PRIVATE = 1 << 18

AT_FDCWD = -100
AT_RECURSIVE = 0x8000
MOUNT_ATTR_RDONLY = 0x1
MOUNT_ATTR_NOSUID = 0x2
MOUNT_ATTR_NODEV = 0x4
SYS_MOUNT_SETATTR = 442  # the same number on every architecture (asm-generic and x86)

PR_CAPBSET_DROP = 24
PR_SET_NO_NEW_PRIVS = 38
PR_CAP_AMBIENT = 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
CAPABILITY_VERSION_3 = 0x20080522
CAP_LAST = 63  # higher than any kernel's last capability: dropping an unknown one is EINVAL

#: What a root act keeps (Docker's default set, less MKNOD, SETPCAP and SETFCAP): enough to
#: chown, install packages and bind low ports; never enough to mount, change namespaces, trace
#: processes, open files by handle, load modules, write raw devices or set the clock.
KEPT_CAPABILITIES = (
    0,  # CAP_CHOWN
    1,  # CAP_DAC_OVERRIDE
    3,  # CAP_FOWNER
    4,  # CAP_FSETID
    5,  # CAP_KILL (signals are scoped by Landlock or a PID namespace)
    6,  # CAP_SETGID
    7,  # CAP_SETUID
    10,  # CAP_NET_BIND_SERVICE
    13,  # CAP_NET_RAW
    18,  # CAP_SYS_CHROOT
    29,  # CAP_AUDIT_WRITE
)


class _MountAttr(ctypes.Structure):
    _fields_ = (
        ("attr_set", ctypes.c_uint64),
        ("attr_clr", ctypes.c_uint64),
        ("propagation", ctypes.c_uint64),
        ("userns_fd", ctypes.c_uint64),
    )


class _CapHeader(ctypes.Structure):
    _fields_ = (("version", ctypes.c_uint32), ("pid", ctypes.c_int))


class _CapData(ctypes.Structure):
    _fields_ = (
        ("effective", ctypes.c_uint32),
        ("permitted", ctypes.c_uint32),
        ("inheritable", ctypes.c_uint32),
    )


@cache
def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def _check(result: int, what: str) -> int:
    if result < 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"{what}: {os.strerror(errno)}")
    return result


def _bytes(path: str | None) -> bytes | None:
    return None if path is None else os.fsencode(path)


def unshare(flags: int) -> None:
    _check(_libc().unshare(flags), "unshare")


def mount(source: str | None, target: str, fstype: str | None, flags: int, data: str = "") -> None:
    """mount(2); `data` is the file system's option string (tmpfs: size, mode)."""
    options = data.encode() if data else None
    call: Callable[..., int] = _libc().mount
    result = call(_bytes(source), _bytes(target), _bytes(fstype), ctypes.c_ulong(flags), options)
    _check(result, f"mount {target}")


def mount_setattr(path: str, set_flags: int = 0, clear: int = 0, recursive: bool = True) -> None:
    """Change the per-mount flags of the mount at `path` (and, recursively, those beneath)."""
    attr = _MountAttr(set_flags, clear, 0, 0)
    flags = AT_RECURSIVE if recursive else 0
    result = _libc().syscall(
        SYS_MOUNT_SETATTR, AT_FDCWD, _bytes(path), flags, ctypes.byref(attr), ctypes.sizeof(attr)
    )
    _check(result, f"mount_setattr {path}")


def no_new_privs() -> None:
    _check(_libc().prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(PR_SET_NO_NEW_PRIVS)")


def keep_only_capabilities(kept: tuple[int, ...]) -> None:
    """Drop every capability not in `kept` from the bounding, ambient, inheritable, permitted
    and effective sets of the calling thread. Without CAP_SETPCAP the bounding set cannot be
    changed, so a process that does not hold it only lowers the other sets."""
    libc = _libc()
    if _has_setpcap():
        for number in range(CAP_LAST + 1):
            if number not in kept and libc.prctl(PR_CAPBSET_DROP, number, 0, 0, 0) != 0:
                if ctypes.get_errno() == 22:  # EINVAL: past the kernel's last capability
                    break
                _check(-1, f"prctl(PR_CAPBSET_DROP, {number})")
    libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    mask = sum(1 << number for number in kept) & _current_permitted()
    low, high = mask & 0xFFFFFFFF, mask >> 32
    data = (_CapData * 2)(_CapData(low, low, 0), _CapData(high, high, 0))
    header = _CapHeader(CAPABILITY_VERSION_3, 0)
    _check(libc.capset(ctypes.byref(header), data), "capset")


def _current_permitted() -> int:
    data = (_CapData * 2)()
    header = _CapHeader(CAPABILITY_VERSION_3, 0)
    _check(_libc().capget(ctypes.byref(header), data), "capget")
    return int(data[0].permitted) | (int(data[1].permitted) << 32)


def _has_setpcap() -> bool:
    return bool(_current_permitted() & (1 << 8))


def enter_user_namespace() -> None:
    """Make this (single-threaded) process root of a user namespace of its own with a mount
    namespace of its own, mapping only its own uid and gid: the unprivileged way to get the
    capabilities that private mounts need. Raises OSError when the kernel refuses."""
    uid, gid = os.geteuid(), os.getegid()
    unshare(CLONE_NEWUSER | CLONE_NEWNS)
    _write("/proc/self/setgroups", "deny")
    _write("/proc/self/uid_map", f"{uid} {uid} 1")
    _write("/proc/self/gid_map", f"{gid} {gid} 1")


def _write(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)
