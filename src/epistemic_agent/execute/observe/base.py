"""What one shell command did to the workspace: the paths it created, modified and deleted.

An `Observer` is started just before a command is spawned and finished after the command and
its process group have ended; `finish()` returns `Changes`. `best_observer()` picks the method:

fanotify (`fanotify.py`; CAP_SYS_ADMIN, Linux >= 5.17, a file system that reports
    file handles: ext4, xfs, btrfs, tmpfs...). The kernel queues an event at the moment of
    each create, delete, rename, write, attribute change and close-after-write anywhere on the
    workspace's file system. After the command the queue is read and folded per path. The
    cost does not grow with the workspace: about 0.25 ms per call plus about 15 µs per event
    (bench/bench_observe.py). Events outside the workspace, under ignored components, or
    caused by the observing process itself (a file tool on another thread) are dropped.
snapshot (the fallback, anywhere). Each of `start()` and `finish()` lstats every entry of the
    workspace (os.scandir, no hashing, ignored directories are not entered), and the two maps
    are compared. The cost grows with the workspace: about 50 ms per scan for 10,000 files on
    the reference machine, which is far above the per-call budget (see bench/bench_observe.py).

What both report (they agree on all the cases in tests/execute/test_observe.py):
- paths are workspace-relative, POSIX, sorted; the workspace itself is never listed;
- created then deleted within the call: nothing; deleted then created: modified; a rename:
  the old path deleted and the new one created; a rename over an existing file (`sed -i`,
  editors' atomic saves): the target is modified;
- a directory created, deleted or moved is listed with everything beneath it;
- modified means the content, size, mode, owner or mtime changed (`touch` counts). A
  directory is modified only by a chmod/chown/utime on it or by being replaced; entries
  added or removed inside it are listed themselves;
- symlinks are entries of their own and are never followed;
- a path any of whose components is in `ignore` is not reported (`.git` entirely: its
  internals say nothing that the working tree does not).

Limits:
- both methods see every process, not only the command: another process writing inside the
  workspace during the call is indistinguishable from the command. fanotify drops events
  outside the workspace by path, so other workspaces on the same file system are not a
  problem (two observers may run at once);
- fanotify: the kernel holds the call's events until `finish()` in an unlimited queue (so
  none are lost; repeated events of one process on one file are merged; every process
  writing on that file system adds its own), and `finish()` folds them all: about 15 µs
  per event, so a call that creates 100,000 files takes 1.5 s more to finish. A file
  system mounted inside the workspace is not watched. A file written only through a shared
  mmap is caught by its close-after-write and its new mtime; one opened for writing and not
  written is not reported, unless it was also written in the clock tick before `start()`.
  A directory moved in the same call as changes inside it is listed from its contents at
  the end of the call. `touch` on a directory is reported (snapshot ignores directory
  times). A background process killed at the end may have its last writes missed. If the
  queue overflows (only when the kernel refuses an unlimited queue), the result is rebuilt
  from the events read plus every path whose ctime moved during the call (reported as
  modified), and is marked `complete=False`: deletions after the overflow are lost;
- snapshot: a change that keeps size, mtime, inode, mode and owner (a rewrite within the
  file system's timestamp granularity; Linux >= 6.13 uses fine-grained times for files
  that were just stat'ed) is missed.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from ...core import RECORD_DIR, struct

if TYPE_CHECKING:
    from typing import Any, ClassVar

DEFAULT_IGNORE: tuple[str, ...] = (
    "__pycache__",
    ".pytest_cache",
    ".mypy_cache",
    ".ruff_cache",
    ".hypothesis",
    ".git",
    RECORD_DIR,
)

Stamp = tuple[int, int, int, int, int, int]
CLOCK_REALTIME_COARSE = 5  # linux/time.h: the clock file times are stamped from


@struct
class Changes:
    """The paths one command changed (workspace-relative, POSIX, sorted)."""

    created: tuple[str, ...] = ()
    modified: tuple[str, ...] = ()
    deleted: tuple[str, ...] = ()
    method: str = "snapshot"
    complete: bool = True  # False when some changes may be missing (fanotify queue overflow)

    @classmethod
    def of(
        cls,
        created: set[str],
        modified: set[str],
        deleted: set[str],
        method: str,
        complete: bool = True,
    ) -> Changes:
        return cls(
            tuple(sorted(created)),
            tuple(sorted(modified)),
            tuple(sorted(deleted)),
            method,
            complete,
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "created": list(self.created),
            "modified": list(self.modified),
            "deleted": list(self.deleted),
            "method": self.method,
            "complete": self.complete,
        }

    @property
    def empty(self) -> bool:
        return not (self.created or self.modified or self.deleted)


@runtime_checkable
class Observer(Protocol):
    """What a session needs of an observer: `start()` just before the command is spawned,
    `finish()` after it and its process group have ended, returning what changed. Observers
    are registered by name in registry.py; `method` names the observer in the record."""

    @property
    def method(self) -> str: ...

    def start(self) -> None: ...

    def finish(self) -> Changes: ...


class WorkspaceObserver:
    """The observers' shared base: watches one workspace across one command, `start()`, run
    it, `finish()`. Reusable."""

    method: ClassVar[str] = ""

    def __init__(self, workspace: Path, ignore: tuple[str, ...] = DEFAULT_IGNORE) -> None:
        self.workspace = Path(os.path.realpath(workspace))
        self.ignore = tuple(ignore)
        self.ignored = frozenset(ignore)

    def start(self) -> None:
        """Called just before the command is spawned."""
        raise NotImplementedError

    def finish(self) -> Changes:
        """Called after the command and its process group have ended."""
        raise NotImplementedError


class SnapshotObserver(WorkspaceObserver):
    """lstat every entry at start and at finish, and compare (no hashing)."""

    method = "snapshot"

    def __init__(self, workspace: Path, ignore: tuple[str, ...] = DEFAULT_IGNORE) -> None:
        super().__init__(workspace, ignore)
        self._before: dict[str, Stamp] | None = None

    def start(self) -> None:
        self._before = snapshot(str(self.workspace), self.ignored)

    def finish(self) -> Changes:
        if self._before is None:
            raise RuntimeError("finish() without start()")
        before, self._before = self._before, None
        return compare(before, snapshot(str(self.workspace), self.ignored), self.method)


class CtimeObserver(WorkspaceObserver):
    """For folders outside the workspace a mutating act may write (package caches, often
    large): at finish, one walk for every entry whose ctime moved since start. Created and
    modified are not told apart (both are listed as modified) and deletions are not seen."""

    method = "ctime"

    def __init__(self, workspace: Path, ignore: tuple[str, ...] = ()) -> None:
        super().__init__(workspace, ignore)
        self._since = 0

    def start(self) -> None:
        self._since = coarse_now()

    def finish(self) -> Changes:
        changed = changed_since(str(self.workspace), self.ignored, self._since)
        return Changes.of(set(), changed, set(), self.method, complete=False)


def coarse_now() -> int:
    """A time no later than any file time the kernel will stamp from now on."""
    try:
        return time.clock_gettime_ns(CLOCK_REALTIME_COARSE)
    except OSError:
        return time.time_ns() - 20_000_000


def snapshot(root: str, ignored: frozenset[str]) -> dict[str, Stamp]:
    """Every entry under root (not root itself): relative path → what a change would alter."""
    return {rel: _stamp(info) for rel, info in _walk(root, ignored) if info is not None}


def _stamp(info: os.stat_result) -> Stamp:
    """Directories: identity and mode only (their times move with every entry added)."""
    if stat.S_ISDIR(info.st_mode):
        return (0, 0, info.st_ino, info.st_mode, info.st_uid, info.st_gid)
    return (
        info.st_mtime_ns,
        info.st_size,
        info.st_ino,
        info.st_mode,
        info.st_uid,
        info.st_gid,
    )


def compare(before: dict[str, Stamp], after: dict[str, Stamp], method: str) -> Changes:
    created = after.keys() - before.keys()
    deleted = before.keys() - after.keys()
    modified = {path for path in before.keys() & after.keys() if before[path] != after[path]}
    return Changes.of(created, modified, deleted, method)


def walk_names(root: str, ignored: frozenset[str]) -> list[str]:
    """Relative paths of everything under root, without stat calls (symlinks not followed)."""
    return [rel for rel, _ in _walk(root, ignored, with_stat=False)]


def changed_since(root: str, ignored: frozenset[str], since_ns: int) -> set[str]:
    """Entries whose ctime is at or after since_ns (a ctime cannot be set back by a user)."""
    return {
        rel
        for rel, info in _walk(root, ignored)
        if info is not None and info.st_ctime_ns >= since_ns
    }


def _walk(
    root: str, ignored: frozenset[str], with_stat: bool = True
) -> Iterator[tuple[str, os.stat_result | None]]:
    """Every entry under root as (relative path, lstat or None), depth first, never following
    symlinks and never entering an ignored name. Without `with_stat`, only directories are
    asked what they are (from the d_type, no stat call). An entry gone since it was listed is
    left out when its stat was wanted."""
    pending = [(root, "")]
    while pending:
        directory, prefix = pending.pop()
        for entry in _entries(directory):
            if entry.name in ignored:
                continue
            rel = prefix + entry.name
            try:
                if with_stat:
                    found = entry.stat(follow_symlinks=False)
                    info: os.stat_result | None = found
                    is_dir = stat.S_ISDIR(found.st_mode)
                else:
                    info, is_dir = None, entry.is_dir(follow_symlinks=False)
            except OSError:  # gone since it was listed
                if with_stat:
                    continue
                info, is_dir = None, False
            yield rel, info
            if is_dir:
                pending.append((entry.path, rel + "/"))


def _entries(directory: str) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(directory) as found:
            return list(found)
    except OSError:  # removed or unreadable: nothing to list
        return []
