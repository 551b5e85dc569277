"""seccomp user notification through ctypes: the filter that hands every call able to move or
remove a path to a listener, and the ioctls the listener answers with.

The filter is classic BPF. It sends to user space (SECCOMP_RET_USER_NOTIF) only rename,
renameat, renameat2, rmdir, unlink and unlinkat, for the host's own ABI and its 32-bit one
(x86_64 with i386 and x32; aarch64 with arm): a 64-bit process can make 32-bit calls
(`int 0x80`), which the kernel shows the filter under the 32-bit architecture and numbers.
link, linkat, symlink and symlinkat are not sent: they never replace an existing name (EEXIST),
so they cannot move or remove one. io_uring_setup, io_uring_enter and io_uring_register fail
with ENOSYS, as on a kernel built without io_uring: its IORING_OP_RENAMEAT and
IORING_OP_UNLINKAT are not system calls, and no filter would see them. Every other call is
allowed, so the kernel's per-call cache of the filter's answers (Linux 5.11+) skips the filter
for them altogether.

Nothing here decides what to watch or what a call means: tripwire.py does.
"""

from __future__ import annotations

import ctypes
import errno
import os
from collections.abc import Callable
from functools import cache

from ...core import struct

SECCOMP_SET_MODE_FILTER = 1
SECCOMP_FILTER_FLAG_NEW_LISTENER = 1 << 3
SECCOMP_RET_ALLOW = 0x7FFF0000
SECCOMP_RET_USER_NOTIF = 0x7FC00000
SECCOMP_RET_ERRNO = 0x00050000
SECCOMP_USER_NOTIF_FLAG_CONTINUE = 1

IOCTL_NOTIF_RECV = 0xC0502100  # _IOWR('!', 0, struct seccomp_notif)
IOCTL_NOTIF_SEND = 0xC0182101  # _IOWR('!', 1, struct seccomp_notif_resp)
IOCTL_NOTIF_ID_VALID = 0x80082102  # _IOR('!', 2, __u64): every kernel takes it, 5.8+ also _IOW
IOCTL_NOTIF_SET_FLAGS = 0x40082104  # _IOW('!', 4, __u64)
SYNC_WAKE_UP = 1  # SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
PATH_MAX = 4096
PAGE = 4096  # the smallest page: reads never cross one unless the string goes on
FIRST_READ = 256

AUDIT_ARCH_X86_64 = 0xC000003E
AUDIT_ARCH_I386 = 0x40000003
AUDIT_ARCH_AARCH64 = 0xC00000B7
AUDIT_ARCH_ARM = 0x40000028
X32_SYSCALL_BIT = 0x40000000
AT_FDCWD = -100
IO_URING = (425, 426, 427)  # io_uring_setup, _enter, _register: the same on every architecture

#: The seccomp(2) call's number on each host this watches, and the (architecture, call
#: number) -> call name of every call the filter sends to the listener.
SYS_SECCOMP = {"x86_64": 317, "aarch64": 277}
WATCHED: dict[str, dict[int, dict[int, str]]] = {
    "x86_64": {
        AUDIT_ARCH_X86_64: {
            82: "rename",
            84: "rmdir",
            87: "unlink",
            263: "unlinkat",
            264: "renameat",
            316: "renameat2",
        },
        AUDIT_ARCH_I386: {
            10: "unlink",
            38: "rename",
            40: "rmdir",
            301: "unlinkat",
            302: "renameat",
            353: "renameat2",
        },
    },
    "aarch64": {  # asm-generic: only the *at forms
        AUDIT_ARCH_AARCH64: {35: "unlinkat", 38: "renameat", 276: "renameat2"},
        AUDIT_ARCH_ARM: {
            10: "unlink",
            38: "rename",
            40: "rmdir",
            328: "unlinkat",
            329: "renameat",
            382: "renameat2",
        },
    },
}

#: Where each call's paths are: (index of its directory fd argument or None for the working
#: directory, index of its path argument), one pair per path.
PATH_ARGS: dict[str, tuple[tuple[int | None, int], ...]] = {
    "rename": ((None, 0), (None, 1)),
    "renameat": ((0, 1), (2, 3)),
    "renameat2": ((0, 1), (2, 3)),
    "rmdir": ((None, 0),),
    "unlink": ((None, 0),),
    "unlinkat": ((0, 1),),
}

_LD_ABS_W = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JEQ_K = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_AND_K = 0x54  # BPF_ALU | BPF_AND | BPF_K
_RET_K = 0x06  # BPF_RET | BPF_K
_NR, _ARCH = 0, 4  # offsets in struct seccomp_data


class _SockFilter(ctypes.Structure):
    _fields_ = (
        ("code", ctypes.c_uint16),
        ("jt", ctypes.c_uint8),
        ("jf", ctypes.c_uint8),
        ("k", ctypes.c_uint32),
    )


class _SockFprog(ctypes.Structure):
    _fields_ = (("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_SockFilter)))


class _Data(ctypes.Structure):
    _fields_ = (
        ("nr", ctypes.c_int32),
        ("arch", ctypes.c_uint32),
        ("instruction_pointer", ctypes.c_uint64),
        ("args", ctypes.c_uint64 * 6),
    )


class _Notif(ctypes.Structure):
    _fields_ = (
        ("id", ctypes.c_uint64),
        ("pid", ctypes.c_uint32),
        ("flags", ctypes.c_uint32),
        ("data", _Data),
    )


class _Resp(ctypes.Structure):
    _fields_ = (
        ("id", ctypes.c_uint64),
        ("val", ctypes.c_int64),
        ("error", ctypes.c_int32),
        ("flags", ctypes.c_uint32),
    )


class _Iovec(ctypes.Structure):
    _fields_ = (("base", ctypes.c_void_p), ("len", ctypes.c_size_t))


@struct
class Call:
    """One watched call a process is blocked in, as the listener received it."""

    id: int
    pid: int
    name: str
    args: tuple[int, ...]


@cache
def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


@cache
def _readv() -> Callable[..., int]:
    function = _libc().process_vm_readv
    function.restype = ctypes.c_ssize_t
    reader: Callable[..., int] = function
    return reader


def host() -> str | None:
    """The host architecture's name in WATCHED; None where no filter is made for it, or
    where the kernel cannot let a watched call go on (SECCOMP_USER_NOTIF_FLAG_CONTINUE came
    with Linux 5.5): there a watched call would wait for an answer that cannot be given."""
    machine, release = os.uname().machine, os.uname().release
    numbers = [int(part) if part.isdigit() else 0 for part in release.split(".")[:2]]
    if machine not in WATCHED or tuple(numbers) < (5, 5):
        return None
    return machine


def program(machine: str) -> list[tuple[int, int, int, int]]:
    """The filter for `machine`, as (code, jt, jf, k) instructions."""
    tables = WATCHED[machine]
    archs = list(tables)
    head = [(_LD_ABS_W, 0, 0, _ARCH)]
    blocks: list[list[tuple[int, int, int, int]]] = []
    for arch in archs:  # each block ends in its own returns: no jump leaves it
        numbers = sorted(tables[arch])
        block = [(_LD_ABS_W, 0, 0, _NR)]
        if arch == AUDIT_ARCH_X86_64:  # x32 calls are x86_64's numbers with one bit set
            block.append((_AND_K, 0, 0, ~X32_SYSCALL_BIT & 0xFFFFFFFF))
        tests = [*numbers, *IO_URING]
        for index, number in enumerate(tests):
            left = len(tests) - index - 1  # the tests after this one
            to_return = left + 1 + (0 if number in tables[arch] else 1)  # past ALLOW (+NOTIF)
            block.append((_JEQ_K, to_return, 0, number))
        block += [
            (_RET_K, 0, 0, SECCOMP_RET_ALLOW),
            (_RET_K, 0, 0, SECCOMP_RET_USER_NOTIF),
            (_RET_K, 0, 0, SECCOMP_RET_ERRNO | errno.ENOSYS),
        ]
        blocks.append(block)
    dispatch: list[tuple[int, int, int, int]] = []
    for index in range(len(archs)):
        before = sum(len(block) for block in blocks[:index])
        # from this jump: the jumps after it, the ALLOW of unknown architectures, the blocks
        dispatch.append((_JEQ_K, len(archs) - index - 1 + 1 + before, 0, archs[index]))
    allow_other = [(_RET_K, 0, 0, SECCOMP_RET_ALLOW)]
    return [*head, *dispatch, *allow_other, *(i for block in blocks for i in block)]


def install(machine: str) -> int:
    """Filter the calling thread (and all it spawns from now on) and return the listener's
    fd (close-on-exec). Needs no_new_privs or CAP_SYS_ADMIN. Raises OSError."""
    instructions = program(machine)
    array = (_SockFilter * len(instructions))(*(_SockFilter(*i) for i in instructions))
    prog = _SockFprog(len(instructions), array)
    call: Callable[..., int] = _libc().syscall
    flags = SECCOMP_FILTER_FLAG_NEW_LISTENER
    fd = call(SYS_SECCOMP[machine], SECCOMP_SET_MODE_FILTER, flags, ctypes.byref(prog))
    return _check(fd, "seccomp")


class Listener:
    """The session's end of one filter: receives the calls, reads their path strings, lets
    them go on. Used by one thread (its buffers are reused from call to call)."""

    def __init__(self, fd: int, machine: str) -> None:
        self.fd, self.tables = fd, WATCHED[machine]
        self._notif, self._resp = _Notif(), _Resp()
        self._bytes = bytearray(PATH_MAX)
        self._window = (ctypes.c_char * PATH_MAX).from_buffer(self._bytes)
        self._base = ctypes.addressof(self._window)
        self._local, self._remote = _Iovec(), _Iovec()
        ioctl: Callable[..., int] = _libc().ioctl
        self._ioctl = ioctl
        # Linux 6.6+: the woken process runs on this CPU, as a call and its return would
        self._ioctl(fd, ctypes.c_ulong(IOCTL_NOTIF_SET_FLAGS), ctypes.c_uint64(SYNC_WAKE_UP))

    def receive(self) -> Call | None:
        """The next notification (None when it was withdrawn: its process was killed). Blocks
        until one comes: poll the fd first. Raises OSError."""
        notif = self._notif
        ctypes.memset(ctypes.byref(notif), 0, ctypes.sizeof(notif))  # the kernel wants zeros
        if self._ioctl(self.fd, ctypes.c_ulong(IOCTL_NOTIF_RECV), ctypes.byref(notif)) < 0:
            code = ctypes.get_errno()
            if code in (errno.ENOENT, errno.EINTR):
                return None
            raise OSError(code, f"seccomp notification: {os.strerror(code)}")
        data = notif.data
        name = self.tables.get(data.arch, {}).get(data.nr & ~X32_SYSCALL_BIT, "")
        return Call(notif.id, notif.pid, name, tuple(data.args))

    def still_blocked(self, call: Call) -> bool:
        """Whether the process is still in the call (so its pid was not reused meanwhile)."""
        number = ctypes.c_uint64(call.id)
        request = ctypes.c_ulong(IOCTL_NOTIF_ID_VALID)
        return self._ioctl(self.fd, request, ctypes.byref(number)) == 0

    def carry_on(self, call: Call) -> None:
        """Let the call go on as if it had not been watched (the kernel then does what it
        would have done). A process killed meanwhile is no error; any other refusal is
        (OSError): the call would wait for an answer that will not come."""
        resp = self._resp
        resp.id, resp.flags = call.id, SECCOMP_USER_NOTIF_FLAG_CONTINUE
        if self._ioctl(self.fd, ctypes.c_ulong(IOCTL_NOTIF_SEND), ctypes.byref(resp)) < 0:
            code = ctypes.get_errno()
            if code != errno.ENOENT:
                raise OSError(code, f"seccomp answer: {os.strerror(code)}")

    def read_string(self, pid: int, address: int) -> bytes | None:
        """The NUL-terminated string at `address` in process `pid` (process_vm_readv: the same
        ptrace check as /proc/PID/mem, in one call); None at a bad address or with no end
        within PATH_MAX. PermissionError when this process may not read that one's memory."""
        got, size = 0, min(FIRST_READ, PAGE - address % PAGE)  # most paths are short
        local, remote, found = self._local, self._remote, self._bytes
        while got < PATH_MAX:
            local.base, local.len = self._base + got, size
            remote.base, remote.len = address + got, size
            done = _readv()(pid, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0)
            if done < 0 and ctypes.get_errno() in (errno.EPERM, errno.EACCES):
                raise PermissionError(ctypes.get_errno(), "its memory cannot be read")
            if done <= 0:
                return None
            end = found.find(b"\0", got, got + done)
            if end >= 0:
                return bytes(found[:end])
            got += done
            # a read stops at the first unmapped page: go on page by page
            size = min(PAGE - (address + got) % PAGE, PATH_MAX - got)
        return None


def as_fd(value: int) -> int:
    """A directory fd argument as the signed int the kernel reads (AT_FDCWD is -100)."""
    low = value & 0xFFFFFFFF
    return low - (1 << 32) if low >= 1 << 31 else low


def _check(result: int, what: str) -> int:
    if result < 0:
        code = ctypes.get_errno()
        raise OSError(code, f"{what}: {os.strerror(code)}")
    return result
