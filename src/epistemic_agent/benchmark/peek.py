"""Seeing what an agent opened among the benchmark's files: fanotify, the second line of defence.

While a task's agent runs, one fanotify group marks every folder and file of the task's own
folder and of the decoy tree shown in place of the task folders (hiding.py), for opens, reads
and executions. Marks are on inodes, so every path to a file counts: relative, absolute,
through /proc, a symlink, a hard link. Under full confinement the agent can reach only the
decoys (empty files: it reads nothing); where confinement is weaker, a read of the real files
is seen too.

What is not the agent is left out: this process (copying the task); a decoy opened through
the decoy folder's own mount rather than through the cover in an act's view (another program
walking the temporary folder); and, where the acts are confined, a real file opened by any
process but the session's own (the acts cannot reach the real files, so another program on
the machine did).

Needs CAP_SYS_ADMIN (fanotify_init); without it `start()` says why detection is unavailable,
and the result says so.
"""

from __future__ import annotations

import ctypes
import os
import struct
from pathlib import Path

from ..core import struct as _struct

FAN_CLOEXEC, FAN_NONBLOCK = 0x1, 0x2
FAN_MARK_ADD = 0x1
FAN_ACCESS, FAN_OPEN, FAN_OPEN_EXEC, FAN_Q_OVERFLOW = 0x1, 0x20, 0x1000, 0x4000
FAN_ONDIR = 0x40000000
MASK = FAN_ACCESS | FAN_OPEN | FAN_OPEN_EXEC
AT_FDCWD = -100
MAX_MARKS = 20_000
_META = struct.Struct("=IBBHQii")  # struct fanotify_event_metadata


@_struct
class Peek:
    """One file the agent's processes opened: where (relative to the task folders), whether it
    was a decoy, and who."""

    path: str
    decoy: bool
    pid: int
    process: str = ""

    def to_json(self) -> dict[str, object]:
        return {"path": self.path, "decoy": self.decoy, "pid": self.pid, "process": self.process}


class Watch:
    """Inode marks on `trees` (label -> (folder, decoy?)) from `start()` to `finish()`."""

    def __init__(self, trees: dict[str, tuple[Path, bool]]) -> None:
        self.trees = trees
        self.inodes: dict[tuple[int, int], tuple[str, bool]] = {}
        self.mounts: set[int | None] = set()  # the decoy folders' own mounts (host side)
        self._group: int | None = None

    def start(self) -> str | None:
        """Mark everything; None when watching, else why detection is unavailable."""
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            init, mark = libc.fanotify_init, libc.fanotify_mark
            mark.argtypes = [ctypes.c_int, ctypes.c_uint, ctypes.c_uint64, ctypes.c_int]
            mark.argtypes += [ctypes.c_char_p]
        except (OSError, AttributeError) as error:
            return f"no fanotify here ({error})"
        group = init(FAN_CLOEXEC | FAN_NONBLOCK, os.O_RDONLY | os.O_CLOEXEC)
        if group < 0:
            return f"fanotify_init: {os.strerror(ctypes.get_errno())} (needs CAP_SYS_ADMIN)"
        self._group = group
        for label, (folder, decoy) in self.trees.items():
            if decoy:
                self.mounts.add(_mount_of_path(folder))
            for path, is_dir in _entries(folder):
                flags = MASK | (FAN_ONDIR if is_dir else 0)
                if mark(group, FAN_MARK_ADD, flags, AT_FDCWD, os.fsencode(path)) < 0:
                    self.close()
                    return f"fanotify_mark {path}: {os.strerror(ctypes.get_errno())}"
                info = os.lstat(path)
                name = Path(label, path.relative_to(folder)).as_posix()
                self.inodes[(info.st_dev, info.st_ino)] = (name, decoy)
                if len(self.inodes) > MAX_MARKS:
                    self.close()
                    return f"more than {MAX_MARKS} files to watch"
        return None

    def finish(self, session: int | None, confined: bool) -> list[Peek]:
        """Every distinct file the agent opened (see the module docstring for what is left
        out); the group is closed."""
        if self._group is None:
            return []
        seen: dict[tuple[str, int], Peek] = {}
        try:
            while True:
                try:
                    data = os.read(self._group, _META.size * 64)
                except BlockingIOError:
                    break
                if not data:
                    break
                for peek in self._events(data, session, confined):
                    seen.setdefault((peek.path, peek.pid), peek)
        finally:
            self.close()
        return list(seen.values())

    def _events(self, data: bytes, session: int | None, confined: bool) -> list[Peek]:
        found = []
        offset = 0
        while offset + _META.size <= len(data):
            length, _v, _r, _m, mask, fd, pid = _META.unpack_from(data, offset)
            offset += max(length, _META.size)
            try:
                if mask & FAN_Q_OVERFLOW:
                    found.append(Peek("(too many opens to list)", False, pid))
                    continue
                if pid == os.getpid() or fd < 0:
                    continue
                info = os.fstat(fd)
                name, decoy = self.inodes.get((info.st_dev, info.st_ino), ("?", False))
                if decoy and _mount_of(fd) in self.mounts:
                    continue  # opened through the decoy folder itself, not through a cover
                if not decoy and confined and pid != session:
                    continue  # a real file, and not the session's: another program
                found.append(Peek(name, decoy, pid, _process(pid)))
            finally:
                if fd >= 0:
                    os.close(fd)
        return found

    def close(self) -> None:
        if self._group is not None:
            os.close(self._group)
            self._group = None


def _entries(folder: Path) -> list[tuple[Path, bool]]:
    found = [(folder, True)]
    for root, dirs, files in os.walk(folder):
        here = Path(root)
        found += [(here / name, True) for name in dirs]
        found += [(here / name, False) for name in files if not (here / name).is_symlink()]
    return found


def _mount_of(fd: int) -> int | None:
    """The id of the mount an open file was reached through (its fdinfo `mnt_id`)."""
    try:
        with open(f"/proc/self/fdinfo/{fd}", encoding="ascii", errors="replace") as handle:
            for line in handle:
                if line.startswith("mnt_id:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return None


def _mount_of_path(path: Path) -> int | None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        return _mount_of(fd)
    finally:
        os.close(fd)


def _process(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/comm", encoding="utf-8", errors="replace") as handle:
            return handle.read().strip()
    except OSError:
        return ""


def describe(peeks: list[Peek]) -> str:
    """One line for the verdict: what was opened, decoys said as such."""
    names = sorted({(peek.path, peek.decoy) for peek in peeks})
    names = [(path.removesuffix("/."), decoy) for path, decoy in names]
    shown = [f"{path} (a decoy: it read nothing)" if decoy else path for path, decoy in names]
    more = f" and {len(shown) - 3} more" if len(shown) > 3 else ""
    return "the benchmark's own files: " + ", ".join(shown[:3]) + more
