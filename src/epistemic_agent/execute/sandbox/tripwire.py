"""A tripwire: every rename or removal an act attempts on a protected path, by any route.

The mounts of a view (apply.py) already make these attempts fail: a protected file is a
read-only bind, and each folder leading to it is bound onto itself, so a rename or removal of
either fails (EBUSY, EROFS) whatever program makes it. This module only *sees* them, so the
record can say that an act tried; a parse of the command cannot (`python3 -c` can rename).

How: the confining thread, last of all in `apply.enter` (after no_new_privs and Landlock),
or the spawning thread before it runs bwrap (`apply.watch_bwrap`), installs a seccomp filter
(seccomp.py) that sends rename, renameat, renameat2, rmdir, unlink and unlinkat to a
listener; the act and everything it spawns inherit it. The session's listening thread
(tripwire_hub.py, for every call at once) receives each call, reads its path arguments from
the process's memory, resolves them as that process sees them (its root, working directory or
directory fd, through /proc/PID/...), and records an `Attempt` when a path is a protected,
hidden or covered item, a folder leading to one (a pinned folder, or any folder above), or a
path inside one. Then it answers CONTINUE: the kernel does what it would have done, and the
mounts make it fail.

It decides nothing: every watched call goes on as if unwatched (the filter's one refusal,
io_uring, is explained in seccomp.py). A process can change its path string,
its working directory or a symlink between our look and the kernel's (TOCTOU), so a report can
be wrong or missing, but nothing gets through that the mounts would stop. It never hangs an
act: the listener's fd is closed when the call ends (`finish`) or if the listener fails, and
from then on a watched call fails with ENOSYS instead of waiting. A process whose memory the
session may not read (a session without namespaces, not root, and an act that made itself
non-dumpable) is not taken for an attempt: such calls are counted apart (`unread`). At most
MAX_KEPT attempts are kept per call; the rest are counted.

Under bwrap the filter is ours, not bwrap's: bwrap 0.8 takes compiled filters
(--add-seccomp-fd) but installs them without a listener, so a notifying filter given to it
would only make the calls fail. Installing ours needs CAP_SYS_ADMIN or no_new_privs, which a
setuid bwrap cannot run under: there, as on a host other than x86_64 or aarch64 or a
kernel before 5.5, acts go unwatched and `Attempts.unwatched` says why. File tools are not
watched (`Confinement.run`: their paths are checked before they open anything).
"""

from __future__ import annotations

import errno
import os
import select
import threading
from typing import TYPE_CHECKING

from ...core import open_in_root, struct
from . import seccomp
from .tripwire_hub import HUB

if TYPE_CHECKING:
    from .view import View

MAX_KEPT = 100
STOP_WAIT = 2.0  # seconds `finish` waits for the listener to drain and stop
_OPEN_DIR = os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC


@struct
class Attempt:
    """One watched call on a protected path: the call, the path it named (absolute, as the act
    saw it), and the item that path is, leads to or lies in."""

    syscall: str
    path: str
    target: str

    def to_json(self) -> dict[str, str]:
        return {"syscall": self.syscall, "path": self.path, "target": self.target}


@struct
class Attempts:
    """What one call was seen to try: the first MAX_KEPT attempts, how many more, how many
    watched calls named paths the session could not read, and why the call was not watched,
    or not wholly (None when it was)."""

    kept: tuple[Attempt, ...] = ()
    more: int = 0
    unread: int = 0
    unwatched: str | None = None

    def to_json(self) -> dict[str, object]:
        return {
            "attempts": [attempt.to_json() for attempt in self.kept],
            "more": self.more,
            "unread": self.unread,
            "unwatched": self.unwatched,
        }


class Tripwire:
    """The watch over one call: `listen` (session thread, before the spawn), `install` (the
    confining thread, from `apply.enter`), `finish` (once the call and its leftovers ended)."""

    def __init__(self, view: View) -> None:
        self.machine = seccomp.host()
        ends = (*view.protected, *view.hidden, *(path for path, _ in view.covers))
        self._items = tuple(sorted(set(ends)))
        self._insides = tuple(item.rstrip("/") + "/" for item in self._items)
        self._leads: dict[str, str] = {}  # each item and every folder above it -> the item
        for item in sorted(ends):
            path = item
            while True:
                self._leads.setdefault(path, item)
                if path == os.path.dirname(path):
                    break
                path = os.path.dirname(path)
        self._listener: int | None = None
        self._served: seccomp.Listener | None = None  # the listener's end, in the hub
        self._handed = False  # the hub listens for this call
        self._done = threading.Event()  # ... and has stopped (its listener fd closed)
        self._lock = threading.Lock()
        self._kept: list[Attempt] = []
        self._more = self._unread = 0
        self._unwatched: str | None = None
        self._stop: tuple[int, int] | None = None
        self._result: Attempts | None = None

    # -- the session's side --------------------------------------------------------------------

    @property
    def listening(self) -> bool:
        return self._stop is not None

    def listen(self) -> None:
        """Be ready to listen: `install` then hands the filter's fd to the session's listening
        thread (`_Hub`). Without a `listen` first, `install` installs nothing (a confine run
        where no one would answer)."""
        if self.machine is None or self._stop is not None:
            return
        HUB.start()
        self._stop = os.pipe2(os.O_CLOEXEC)

    def finish(self) -> Attempts:
        """Stop listening (after answering what is pending) and say what was seen. Any process
        of the call still alive then gets ENOSYS from a watched call."""
        if self._result is not None:
            return self._result
        if self.machine is None:
            machine, release = os.uname().machine, os.uname().release
            why = f"no seccomp filter for {machine} (Linux {release}; x86_64 or aarch64, 5.5+)"
            self._result = Attempts(unwatched=why)
            return self._result
        if self._stop is None:
            self._result = Attempts(unwatched="no listener was started")
            return self._result
        if self._handed:
            os.write(self._stop[1], b"x")
            if not self._done.wait(STOP_WAIT):
                self._note("the listener did not stop in time: what it saw last may be missing")
        if self._done.is_set() or not self._handed:
            for fd in self._stop:
                os.close(fd)
        with self._lock:
            kept, more, unread = tuple(self._kept), self._more, self._unread
            unwatched = self._unwatched
        if self._listener is None and unwatched is None:
            unwatched = "the filter was not installed"
        self._result = Attempts(kept, more, unread, unwatched)
        return self._result

    # -- the confining thread's side -----------------------------------------------------------

    def install(self) -> None:
        """Filter the calling thread and what it spawns (after no_new_privs). A filter the
        kernel refuses leaves the call unwatched, never unrun: watching decides nothing."""
        if self._stop is None or self.machine is None:
            return
        try:
            self._listener = seccomp.install(self.machine)
        except OSError as error:  # EACCES: neither CAP_SYS_ADMIN nor no_new_privs
            self._note(f"seccomp refused the filter: {error.strerror}")
            return
        self._handed = True
        HUB.serve(self)

    # -- the listener (in the hub's thread) ----------------------------------------------------

    def _begin(self) -> bool:
        """The hub takes this call: its listener's end; False (closed, done) if it fails."""
        assert self._listener is not None
        try:
            self._served = seccomp.Listener(self._listener, self.machine or "")
        except Exception as error:
            self._note(f"the listener failed: {error}")
            self._close()
            return False
        return True

    def _serve_one(self) -> bool:
        """Answer one pending call; False (closed, done) if the listener failed."""
        assert self._served is not None
        try:
            self._answer(self._served)
        except Exception as error:  # closing the fd turns every waiting call into ENOSYS
            self._note(f"the listener failed: {error}")
            self._close()
            return False
        return True

    def _drain(self) -> None:
        """Stopped, or no process is left that could make a call: answer what came before,
        then close."""
        assert self._listener is not None
        poller = select.poll()
        poller.register(self._listener, select.POLLIN)
        while any(got & select.POLLIN for _, got in poller.poll(0)):
            if not self._serve_one():
                return
        self._close()

    def _close(self) -> None:
        if self._listener is not None and not self._done.is_set():
            os.close(self._listener)
            self._done.set()

    def _answer(self, listener: seccomp.Listener) -> None:
        call = listener.receive()
        if call is None:
            return
        try:
            found = self._examine(listener, call)
            if found is None:
                with self._lock:
                    self._unread += 1
            elif found and listener.still_blocked(call):
                self._keep(found)
        finally:
            listener.carry_on(call)

    def _examine(self, listener: seccomp.Listener, call: seccomp.Call) -> list[Attempt] | None:
        """The attempts one call makes on protected paths; None if its memory is closed to
        us (a process that made itself non-dumpable, where we lack CAP_SYS_PTRACE)."""
        found: list[Attempt] = []
        for dirfd_at, path_at in seccomp.PATH_ARGS.get(call.name, ()):
            try:
                raw = listener.read_string(call.pid, call.args[path_at])
            except PermissionError:
                return None
            if not raw:
                continue  # a bad address or an empty path: the call fails on its own
            dirfd = seccomp.AT_FDCWD if dirfd_at is None else seccomp.as_fd(call.args[dirfd_at])
            path = resolve(call.pid, dirfd, os.fsdecode(raw))
            target = None if path is None else self._target(path)
            if path is not None and target is not None:
                found.append(Attempt(call.name, path, target))
        return found

    def _target(self, path: str) -> str | None:
        """The item `path` is, leads to or lies in; None for any other path."""
        item = self._leads.get(path)
        if item is not None or not path.startswith(self._insides):
            return item
        return next(item for item in self._items if path.startswith(item.rstrip("/") + "/"))

    def _keep(self, found: list[Attempt]) -> None:
        with self._lock:
            room = max(MAX_KEPT - len(self._kept), 0)
            self._kept += found[:room]
            self._more += len(found[room:])

    def _note(self, why: str) -> None:
        with self._lock:
            self._unwatched = self._unwatched or why


def resolve(pid: int, dirfd: int, name: str) -> str | None:
    """`name` as process `pid` names it (relative to its working directory or `dirfd`), as an
    absolute path: its folder resolved by the kernel through /proc/PID, in the process's own
    mount namespace, symlinks followed, `..` stopping at its root (it may have chrooted), its
    last part kept (a rename or removal does not follow it). None when the folder cannot be
    found (the call then fails on its own)."""
    stripped = name.rstrip("/") or "/"
    folder, _, last = stripped.rpartition("/")
    if last in (".", ".."):  # the whole path names a folder; rmdir or rename of it fails
        folder, last = stripped, ""
    proc = f"/proc/{pid}"
    start = f"{proc}/cwd" if dirfd == seccomp.AT_FDCWD else f"{proc}/fd/{dirfd}"
    try:
        root = os.readlink(f"{proc}/root")
        if not name.startswith("/") and root == "/":  # the usual case: no root to stop at
            base = os.readlink(start) if not folder else _where(f"{start}/{folder}")
        elif name.startswith("/"):  # from its root, wherever it works
            base = _where_in_root(f"{proc}/root", folder.strip("/") or ".")
        else:
            inside = _within(os.readlink(start), root)
            if inside is None:  # it works from outside its root: nothing stops its `..`
                base = _where(f"{start}/{folder}")
            else:
                base = _where_in_root(f"{proc}/root", f"{inside}/{folder}".strip("/") or ".")
    except OSError:
        return None
    if not last:
        return base
    return f"{base.rstrip('/')}/{last}"


def _where(path: str) -> str:
    """Where the folder `path` leads, as an absolute path (the kernel resolves it)."""
    fd = os.open(path, _OPEN_DIR)
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    finally:
        os.close(fd)


def _where_in_root(root: str, path: str) -> str:
    """Where the folder `path` leads for a process whose root is `root`."""
    top = os.open(root, _OPEN_DIR)
    try:
        fd = open_in_root(top, path, _OPEN_DIR)
    except OSError as error:
        if error.errno != errno.ENOSYS:
            raise
        fd = os.open(f"{root}/{path}", _OPEN_DIR)  # before Linux 5.6: `..` may go past it
    finally:
        os.close(top)
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    finally:
        os.close(fd)


def _within(path: str, root: str) -> str | None:
    """`path` as seen from `root` ("" for the root itself); None when it lies outside."""
    if root == "/":
        return path.lstrip("/")
    if path == root:
        return ""
    return path[len(root) + 1 :] if path.startswith(root + "/") else None
