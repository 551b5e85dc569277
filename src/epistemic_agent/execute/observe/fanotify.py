"""fanotify observation of one command (semantics and limits: see base.py).

One fanotify group (FAN_CLASS_NOTIF, FAN_REPORT_DFID_NAME | FAN_REPORT_FID |
FAN_REPORT_TARGET_FID) marks the workspace's whole file system from `start()` to `finish()`;
groups come from a pool (fanotify_kernel.py).

At `finish()` the mark is removed and the queue read until empty. Events are queued in the
writer's syscall, so once the command has exited all of its events are there. Each event's
directory handle is turned into a path with open_by_handle_at + readlink (cached per call);
a directory that no longer exists is placed by the create/delete/rename events that named it.
The events are then folded per path (fanotify_fold.py).
"""

from __future__ import annotations

import os
from pathlib import Path

from .base import (
    DEFAULT_IGNORE,
    Changes,
    SnapshotObserver,
    WorkspaceObserver,
    changed_since,
    coarse_now,
)
from .fanotify_events import ONDIR, OVERFLOW, parse
from .fanotify_fold import Fold, Paths
from .fanotify_kernel import MARK_ADD, acquire, drain, flush, idle, mark, where


class FanotifyObserver(WorkspaceObserver):
    """Observe with a file-system-wide fanotify mark held only while the command runs."""

    method = "fanotify"

    def __init__(
        self,
        workspace: Path,
        ignore: tuple[str, ...] = DEFAULT_IGNORE,
        *,
        unlimited_queue: bool = True,
    ) -> None:
        super().__init__(workspace, ignore)
        self.unlimited_queue = unlimited_queue
        self._group: int | None = None
        self._root_fd: int | None = None  # for open_by_handle_at, even if the path goes
        self._fallback: SnapshotObserver | None = None
        self._since = 0

    def start(self) -> None:
        self._release()
        self._fallback = None
        self._since = coarse_now()
        try:
            group = acquire(self.unlimited_queue)
        except (OSError, AttributeError):
            return self._start_fallback()
        try:
            self._root_fd = os.open(self.workspace, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
            mark(group, MARK_ADD, self.workspace)
        except OSError:
            self._group = group
            self._release()
            return self._start_fallback()
        self._group = group

    def finish(self) -> Changes:
        if self._fallback is not None:
            fallback, self._fallback = self._fallback, None
            return fallback.finish()
        if self._group is None:
            raise RuntimeError("finish() without start()")
        root_fd = self._root_fd
        assert root_fd is not None
        self._root_fd = None
        try:
            return self._fold(self._release(), root_fd)
        finally:
            os.close(root_fd)

    def _start_fallback(self) -> None:
        self._fallback = SnapshotObserver(self.workspace, self.ignore)
        self._fallback.start()

    def _release(self) -> bytes:
        """Remove the mark, read what was queued before it went, return the group to the pool."""
        if self._root_fd is not None:
            os.close(self._root_fd)
            self._root_fd = None
        group, self._group = self._group, None
        if group is None:
            return b""
        try:
            flush(group)
        except OSError:  # never seen; a group that may still be marked must not be reused
            data = drain(group)
            os.close(group)
            return data
        data = drain(group)
        idle[self.unlimited_queue].append(group)
        return data

    def _fold(self, data: bytes, root_fd: int) -> Changes:
        """Two passes over the raw buffer (it is the smallest form of the events): where
        directories were named, then the fold."""
        root = str(self.workspace)
        paths = Paths(root, self.ignored, lambda handle: where(root_fd, handle))
        for event in parse(data, ONDIR):
            paths.learn(event)
        fold = Fold(paths, root, self.ignored, self._since)
        mine = os.getpid()  # this process's own writes (a file tool on another thread)
        for event in parse(data):
            if event.pid != mine or event.mask & OVERFLOW:
                fold.apply(event)
        if fold.overflow:
            return self._after_overflow(fold)
        return fold.changes(self.method)

    def _after_overflow(self, fold: Fold) -> Changes:
        """Events were lost: keep what was read, add every path whose ctime moved since start."""
        root = str(self.workspace)
        created, modified, deleted = fold.sets()
        seen = created | modified | deleted
        exists = {path for path in seen if os.path.lexists(os.path.join(root, path))}
        changed = changed_since(root, self.ignored, self._since)
        created &= exists
        modified = (modified & exists) | (deleted & exists) | (changed - created)
        return Changes.of(created, modified, deleted - exists, "fanotify+ctime", complete=False)
