"""The workspace's baseline: what each regular file held before the next call changes it.

A shell command's observation says which paths it changed, not what they held before. So the
session keeps a private copy of every small text file of the workspace in
`.epistemic/baseline/` (hidden from every act, like the rest of the record): the copies in
one pack (baseline_pack.py), and `index.json` mapping each path to its copy's SHA-256 and its
stamp (size, mtime, ctime, inode). Taken when a process opens the session (a file whose
stamp is unchanged is not read again: ctime moves on every write, and user space cannot set
it) and kept current after each call for the paths the call changed. `versions.py` turns it
into per-call diffs.

Not copied, and named in the record when a call changes them: files above `file_cap` bytes,
binaries (a NUL byte in the first 8 KiB), anything that is not a regular file, paths under
ignored components (`.git`...), and what would exceed `budget` bytes in all. The copy is
derived working data, never evidence, and redacted like it (the index names paths by their
SHA-256): what a call changed is taken from it into the evidence store.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import stat
import time
from pathlib import Path
from typing import TYPE_CHECKING

from ..core import RECORD_DIR, REPORT_NAME, atomic_write, open_beneath, where
from .baseline_pack import Pack

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator

    Redact = Callable[[bytes], tuple[bytes, int]]

FILE_CAP = 1 << 20  # bytes: a larger file is named, not copied
BUDGET = 512 << 20  # bytes copied in all
SNIFF = 8192  # a NUL byte in the first SNIFF bytes: binary
INDEX = "index.json"
VERSION = 2
DIRECTORY = "it is a directory"
GONE = "it does not exist"

Stamp = list[int]


def stamp_of(info: os.stat_result) -> Stamp:
    return [info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino]


def path_key(rel: str) -> str:
    """How the index names a path: its SHA-256 (a path can hold a secret; the index must not)."""
    return hashlib.sha256(rel.encode("utf-8", "surrogateescape")).hexdigest()


def is_binary(data: bytes) -> bool:
    return b"\0" in data[:SNIFF]


class Baseline:
    """Path -> the content it held when last seen, for the workspace's small text files."""

    def __init__(
        self,
        workspace: Path,
        folder: Path,
        ignore: Iterable[str],
        file_cap: int = FILE_CAP,
        budget: int = BUDGET,
        redact: Redact | None = None,
    ) -> None:
        self.workspace = workspace
        self.folder = folder
        self.ignore = frozenset((*ignore, RECORD_DIR))
        self.file_cap = file_cap
        self.budget = budget
        self.redact = redact  # copies are kept redacted: nothing under .epistemic holds a secret
        self.entries: dict[str, tuple[str, Stamp]] = {}  # path -> (sha256, stamp)
        self.skipped: dict[str, str] = {}  # path -> why it has no copy
        self.used = 0
        self.pack = Pack(folder)
        self.forbidden: frozenset[tuple[int, int]] = frozenset()  # files hidden from acts
        self._root: int | None = None  # the workspace's descriptor during a batch of reads

    @contextlib.contextmanager
    def batch(self) -> Iterator[None]:
        """Hold one descriptor of the workspace for many reads (each opens beneath it)."""
        if self._root is not None:
            yield
            return
        try:
            self._root = os.open(self.workspace, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError:
            self._root = None
        try:
            yield
        finally:
            if self._root is not None:
                os.close(self._root)
            self._root = None

    def refresh(self) -> dict[str, object]:
        """Walk the workspace and bring the copy up to date; what it took, for the record."""
        started = time.monotonic()
        with self.batch():
            return self._refresh(started)

    def _refresh(self, started: float) -> dict[str, object]:
        known = self._load_index()
        present = set(self.pack.blobs)
        self.entries, self.skipped, self.used = {}, {}, 0
        copied = 0
        for rel, info in self._walk():
            old = known.get(path_key(rel))
            if old is not None and old[0] in present and old[1] == stamp_of(info):
                self.entries[rel] = old
                self.used += info.st_size
                continue
            copied += self._take(rel) is not None
        if copied or len(self.entries) != len(known):
            self.save()
        reasons: dict[str, int] = {}
        for why in self.skipped.values():
            reasons[why] = reasons.get(why, 0) + 1
        return {
            "files": len(self.entries),
            "bytes": self.used,
            "copied": copied,
            "skipped": reasons,
            "duration": round(time.monotonic() - started, 4),
        }

    def content(self, rel: str) -> bytes | None:
        """What the path held when last seen; None when there is no copy."""
        entry = self.entries.get(rel)
        if entry is None:
            return None
        return self.pack.get(entry[0])

    def why_not(self, rel: str) -> str:
        """Why a path has no copy."""
        return self.skipped.get(rel, "it was not in the workspace's baseline")

    def update(self, paths: Iterable[str]) -> None:
        """A call changed these paths: copy what they hold now (or forget them)."""
        with self.batch():
            self._update(paths)

    def _update(self, paths: Iterable[str]) -> None:
        for rel in paths:
            old = self.entries.pop(rel, None)
            if old is not None:
                self.used -= old[1][0]
            self.skipped.pop(rel, None)
            self._take(rel)

    def read_now(self, rel: str) -> tuple[bytes | None, str | None]:
        """The path's content now, read beneath the workspace without following any symlink;
        (None, why) when it is gone, not a regular file, too large or unreadable."""
        with self.batch():
            return self._read(rel)

    def _read(self, rel: str) -> tuple[bytes | None, str | None]:
        root = self._root
        if root is None:
            return None, "the workspace cannot be opened"
        try:
            fd = open_beneath(root, rel, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError as error:
            if error.errno == errno.ENOENT:
                return None, GONE
            if error.errno in (errno.ELOOP, errno.EXDEV):
                return None, "it is a symbolic link, or lies behind one"
            return None, f"it cannot be read ({error.strerror})"
        try:
            real = where(fd)
            if real != os.path.join(str(self.workspace), rel):
                return None, "it is a symbolic link, or lies behind one"
            info = os.fstat(fd)
            if stat.S_ISDIR(info.st_mode):
                return None, DIRECTORY
            if not stat.S_ISREG(info.st_mode):
                return None, "it is not a regular file"
            if (info.st_dev, info.st_ino) in self.forbidden:
                return None, "it is hidden from acts"
            if info.st_size > self.file_cap:
                return None, f"it is larger than {self.file_cap} bytes"
            with os.fdopen(os.dup(fd), "rb") as handle:
                data = handle.read(self.file_cap + 1)
        except OSError as error:
            return None, f"it cannot be read ({error.strerror})"
        finally:
            os.close(fd)
        if len(data) > self.file_cap:
            return None, f"it is larger than {self.file_cap} bytes"
        return data, None

    def _take(self, rel: str) -> str | None:
        """Copy one path's current content; its digest, or None (and why, in `skipped`)."""
        try:
            before = os.lstat(self.workspace / rel)
        except OSError:
            return None  # gone: nothing to keep
        data, why = self.read_now(rel)
        if data is None:
            self.skipped[rel] = why or "it cannot be read"
            return None
        if is_binary(data):
            self.skipped[rel] = "it is binary"
            return None
        if self.used + len(data) > self.budget:
            self.skipped[rel] = f"the baseline's budget of {self.budget} bytes was spent"
            return None
        if self.redact is not None:
            data = self.redact(data)[0]
        digest = hashlib.sha256(data).hexdigest()
        self.pack.put(digest, data)
        self.entries[rel] = (digest, stamp_of(before))
        self.used += len(data)
        return digest

    def _walk(self) -> Iterable[tuple[str, os.stat_result]]:
        """Every regular file below the workspace (no symlink followed, ignored names not
        entered), with its lstat; what is not a regular file is skipped silently."""
        base = str(self.workspace)
        stack = [""]
        while stack:
            prefix = stack.pop()
            try:
                entries = list(os.scandir(os.path.join(base, prefix) if prefix else base))
            except OSError:
                continue
            for entry in entries:
                if entry.name in self.ignore:
                    continue
                rel = f"{prefix}{entry.name}"
                if not prefix and entry.name == REPORT_NAME:
                    continue
                try:
                    if entry.is_dir(follow_symlinks=False):
                        stack.append(rel + "/")
                    elif entry.is_file(follow_symlinks=False):
                        info = entry.stat(follow_symlinks=False)
                        if info.st_size > self.file_cap:
                            self.skipped[rel] = f"it is larger than {self.file_cap} bytes"
                        else:
                            yield rel, info
                except OSError:
                    continue

    def _load_index(self) -> dict[str, tuple[str, Stamp]]:
        try:
            data = json.loads((self.folder / INDEX).read_text(encoding="utf-8"))
            files = data["files"]
            if data.get("version") != VERSION:
                return {}
            self.pack.load(data.get("blobs"))
            return {str(k): (str(v[0]), [int(n) for n in v[1]]) for k, v in files.items()}
        except (OSError, ValueError, KeyError, TypeError, IndexError, AttributeError):
            return {}  # derived data: a missing or broken index is rebuilt

    def save(self) -> None:
        """Write the index: each path's copy and stamp, and where each copy lies."""
        self.folder.mkdir(parents=True, exist_ok=True)
        files = {path_key(rel): [d, stamp] for rel, (d, stamp) in self.entries.items()}
        index = {"version": VERSION, "files": files, "blobs": self.pack.to_json()}
        atomic_write(self.folder / INDEX, json.dumps(index, separators=(",", ":")).encode(), 0o600)

    def prune(self) -> None:
        """At close: drop copies nothing names any more, when they are most of the pack."""
        self.pack.compact({digest for digest, _ in self.entries.values()})
        self.save()
