"""fanotify observation of one command (semantics and limits: see base.py).

One fanotify group (FAN_CLASS_NOTIF, FAN_REPORT_DFID_NAME | FAN_REPORT_FID |
FAN_REPORT_TARGET_FID) marks the workspace's whole file system from `start()` to `finish()`;
groups come from a pool (fanotify_kernel.py, with the system calls and the events' format).

At `finish()` the mark is removed and the queue read until empty. Events are queued in the
writer's syscall, so once the command has exited all of its events are there. Each event's
directory handle is turned into a path with open_by_handle_at + readlink (cached per call);
a directory that no longer exists is placed by the create/delete/rename events that named it
(`Paths`).

The events are then folded per path into created, modified and deleted (`Fold`, one `Track`
per path). Paths are those at the end of the call. The kernel merges repeated events of one
process on one object, so the fold relies on masks and file handles, not on the count of
events.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from ...core import struct as _struct
from .base import (
    DEFAULT_IGNORE,
    Changes,
    SnapshotObserver,
    WorkspaceObserver,
    changed_since,
    coarse_now,
    walk_names,
)
from .fanotify_kernel import (
    ATTRIB,
    CLOSE_WRITE,
    CREATE,
    DELETE,
    DFID_NAME,
    MARK_ADD,
    MODIFY,
    NEW_DFID_NAME,
    OLD_DFID_NAME,
    ONDIR,
    OVERFLOW,
    RENAME,
    Event,
    acquire,
    drain,
    flush,
    idle,
    mark,
    parse,
    where,
)


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


# -- the fold -------------------------------------------------------------------------------------


class Paths:
    """Directory handles → workspace-relative paths at the end of the call ("" = the root)."""

    def __init__(self, root: str, ignored: frozenset[str], where: Callable[[bytes], str | None]):
        self._root = root
        self._prefix = root.rstrip("/") + "/"
        self._ignored = ignored
        self.absolute = where
        self._cache: dict[bytes, str | None] = {}
        self._links: dict[bytes, tuple[bytes, str]] = {}

    def learn(self, event: Event) -> None:
        """Remember where each directory was last named, to place ones gone by the end."""
        fid = event.fid
        if not event.mask & ONDIR or fid is None:
            return
        kind = NEW_DFID_NAME if event.mask & RENAME else DFID_NAME
        entry = event.record(kind)
        if entry is not None and event.mask & (CREATE | DELETE | RENAME):
            self._links[fid] = entry

    def entry(self, handle: bytes, name: str) -> str | None:
        """The path an event names; None if outside the workspace, ignored, or the root."""
        base = self.directory(handle)
        if base is None or name in self._ignored:
            return None
        path = _join(base, name)
        return path or None

    def directory(self, handle: bytes) -> str | None:
        if handle in self._cache:
            return self._cache[handle]
        self._cache[handle] = None  # a cycle of links ends here
        found = self.absolute(handle)
        if found is not None:
            path = self._relative(found)
        elif handle in self._links:
            parent, name = self._links[handle]
            base = self.directory(parent)
            path = None if base is None or name in self._ignored else _join(base, name)
        else:
            path = None
        self._cache[handle] = path
        return path

    def _relative(self, found: str) -> str | None:
        if found == self._root:
            return ""
        if not found.startswith(self._prefix):
            return None
        path = found[len(self._prefix) :]
        return None if self._ignored.intersection(path.split("/")) else path


def _join(base: str, name: str) -> str:
    if name in ("", "."):
        return base
    return f"{base}/{name}" if base else name


@_struct(frozen=False)
class Track:
    """One path across the call. `first`/`last`: handles of the object there before/at end."""

    existed: bool
    exists: bool
    first: bytes | None = None
    last: bytes | None = None
    touched: bool = False  # content or attributes changed
    cycled: bool = False  # removed or replaced at least once
    closed: bool = False  # closed after being opened for writing


# after a rename onto a new path: that path, the moved handle, its ONDIR bit, a candidate
Pending = tuple[str, bytes | None, int, bytes | None]


class Fold:
    """Events, in queue order, folded per path into created/modified/deleted."""

    def __init__(self, paths: Paths, root: str, ignored: frozenset[str], since_ns: int) -> None:
        self.paths = paths
        self.root = root
        self.ignored = ignored
        self.since_ns = since_ns
        self.tracks: dict[str, Track] = {}
        self.moves: list[tuple[str | None, str | None, bytes | None]] = []
        self.overflow = False
        self._pending: dict[int, Pending] = {}

    def apply(self, event: Event) -> None:
        if event.mask & OVERFLOW:
            self.overflow = True
        elif self._settle(event):
            return
        elif event.mask & RENAME:
            self._rename(event)
        else:
            self._dirent(event)

    def _dirent(self, event: Event) -> None:
        entry = event.record(DFID_NAME)
        if entry is None:
            return  # a link count changed (only meaningful right after a rename)
        path = self.paths.entry(*entry)
        if path is None:
            return
        mask, fid = event.mask, event.fid
        if mask & CREATE:
            self._add(path, fid)
        if mask & (MODIFY | ATTRIB):
            self._touch(path, fid).touched = True
        if mask & CLOSE_WRITE:
            self._touch(path, fid).closed = True
        if mask & DELETE:
            self._remove(path, fid)

    def _rename(self, event: Event) -> None:
        fid = event.fid
        old, new = event.record(OLD_DFID_NAME), event.record(NEW_DFID_NAME)
        old_path = None if old is None else self.paths.entry(*old)
        new_path = None if new is None else self.paths.entry(*new)
        if old_path is not None:
            self._remove(old_path, fid)
        if new_path is not None:
            if new_path not in self.tracks:  # did it replace something? The next event says.
                self._pending[event.pid] = (new_path, fid, event.mask & ONDIR, None)
            self._add(new_path, fid)
        if event.mask & ONDIR:
            self.moves.append((old_path, new_path, fid))

    def _settle(self, event: Event) -> bool:
        """A rename over an existing entry is followed by a nameless ATTRIB (its link count)
        from the same process, of a directory if a directory was moved; a link or unlink also
        makes one, followed by its own create or delete of that object. True when the event
        was used up here."""
        state = self._pending.pop(event.pid, None)
        if state is None:
            return False
        path, moved, ondir, candidate = state
        if candidate is None:
            nameless = event.nameless_attrib()
            if nameless is not None and nameless != moved and event.mask & ONDIR == ondir:
                self._pending[event.pid] = (path, moved, ondir, nameless)
                return True
            return False
        if not (event.mask & (CREATE | DELETE) and event.fid == candidate):
            self._replaced(path)
        return False

    def _replaced(self, path: str) -> None:
        track = self.tracks.get(path)
        if track is not None and not track.existed:
            track.existed, track.first, track.cycled = True, None, True

    def _add(self, path: str, fid: bytes | None) -> None:
        track = self.tracks.get(path)
        if track is None:
            self.tracks[path] = Track(existed=False, exists=True, last=fid)
        else:
            track.exists, track.last, track.cycled = True, fid, True

    def _remove(self, path: str, fid: bytes | None) -> None:
        track = self.tracks.get(path)
        if track is None:
            self.tracks[path] = Track(existed=True, exists=False, first=fid, cycled=True)
        else:
            track.exists, track.cycled = False, True

    def _touch(self, path: str, fid: bytes | None) -> Track:
        track = self.tracks.get(path)
        if track is None:
            track = self.tracks[path] = Track(existed=True, exists=True, first=fid, last=fid)
        return track

    def changes(self, method: str) -> Changes:
        return Changes.of(*self.sets(), method)

    def sets(self) -> tuple[set[str], set[str], set[str]]:
        for path, _moved, _ondir, candidate in self._pending.values():
            if candidate is not None:
                self._replaced(path)
        self._pending.clear()
        created: set[str] = set()
        modified: set[str] = set()
        deleted: set[str] = set()
        for path, track in self.tracks.items():
            if track.existed and not track.exists:
                deleted.add(path)
            elif track.exists and not track.existed:
                created.add(path)
            elif track.exists and self._changed(path, track):
                modified.add(path)
        for old, new, handle in self.moves:
            self._expand(old, new, handle, (created, modified, deleted))
        both = created & deleted
        return created - both, (modified | both) - created - deleted, deleted - both

    def _changed(self, path: str, track: Track) -> bool:
        if track.touched or (track.cycled and (track.first is None or track.first != track.last)):
            return True
        if not track.closed or track.cycled:
            return False
        try:  # written through a shared mmap, or only opened for writing?
            return os.lstat(os.path.join(self.root, path)).st_mtime_ns >= self.since_ns
        except OSError:
            return False

    def _expand(
        self,
        old: str | None,
        new: str | None,
        handle: bytes | None,
        sets: tuple[set[str], set[str], set[str]],
    ) -> None:
        """A moved directory brings its contents: list them (as they are at the end)."""
        created, modified, deleted = sets
        gone = old is not None and old in deleted
        fresh = new is not None and new in created  # nothing was there before the call
        replacing = new in modified and self._before(new) != handle  # over an empty dir
        if not (gone or fresh or replacing) or handle is None:
            return
        location = self.paths.absolute(handle)
        if location is None:
            return
        names = set(walk_names(location, self.ignored))
        before = set(names)  # what the directory held when it left `old`
        if new is not None and (fresh or replacing):
            inside = new + "/"
            before -= {_under(path, inside) for path in created if self._new(path)}
            created |= {inside + name for name in names}
            if fresh:  # changes beneath it were made to this directory: relocate them
                lost = {path for path in deleted if path.startswith(inside)}
                deleted -= lost
                modified -= {path for path in modified if path.startswith(inside)}
                before |= {_under(path, inside) for path in lost}
        if gone:
            deleted |= {f"{old}/{name}" for name in before if name}

    def _new(self, path: str) -> bool:
        track = self.tracks.get(path)
        return track is not None and not track.existed

    def _before(self, path: str | None) -> bytes | None:
        track = None if path is None else self.tracks.get(path)
        return None if track is None else track.first


def _under(path: str, prefix: str) -> str:
    """The part of path below prefix ("" when path is not below it)."""
    return path[len(prefix) :] if path.startswith(prefix) else ""
