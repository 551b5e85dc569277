"""Applying a view: the steps a spawning thread takes on itself, or the bwrap argv that does it.

`enter` runs in a throwaway thread just before it spawns the command (or runs a file tool), in
this order, each step failing closed (OSError: the call does not run):

1. a private mount namespace (and a PID namespace for the children: for a command, whose
   first process, started here, ends them all when the session dies, reaper.py; for a file
   tool, where Landlock cannot scope signals), with nothing
   propagating back;
2. every mount made read-only, then writable binds of the view's writable folders (no device
   nodes, no setuid), read-only binds over the protected paths inside them (the report and
   its spares all, so the swap that replaces the report keeps a read-only one in view), a
   private /dev/shm, a read-only bind of its decoy over each covered folder, and an empty
   read-only folder over each hidden path (the decoys first: one may lie in a hidden folder);
3. every capability dropped but the few a root act may keep (confine_sys.KEPT_CAPABILITIES):
   none of them can mount, enter another namespace, trace, open files by handle or make
   device nodes;
4. no_new_privs, then Landlock: writes only beneath the writable folders, the private
   /dev/shm, the call's capture files and the harmless devices; signals and abstract sockets
   scoped to the call's own processes (ABI 6); with an allow-list of readable paths, reads,
   listings and executions only beneath those, the writable folders, the devices and (where
   step 2 put the decoys in place) the covered folders;
5. with a tripwire (a shell act's), the seccomp filter that shows the session every rename
   or removal the act attempts (tripwire.py): it changes nothing the act can do.

Without namespaces (mechanism `landlock`), steps 1 and 2 are skipped. Under bwrap, the
spawning thread only arms the tripwire (`watch_bwrap`); bwrap does the rest.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ...core import struct
from . import landlock as confine_landlock
from . import readable as confine_read
from . import syscalls as confine_sys
from .platform import Platform
from .view import View

if TYPE_CHECKING:
    from .tripwire import Tripwire

#: Character devices every act may write: sinks and sources, never storage.
DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/tty", "/dev/random", "/dev/urandom")
SHM = "/dev/shm"
_RO_MOUNT = confine_sys.MS_RDONLY | confine_sys.MS_NOSUID | confine_sys.MS_NODEV
HIDDEN_TMPFS = "size=4k,mode=0555"
_READ_ONLY_ATTRS = (
    confine_sys.MOUNT_ATTR_RDONLY | confine_sys.MOUNT_ATTR_NOSUID | confine_sys.MOUNT_ATTR_NODEV
)


@struct
class Launch:
    """How the executor starts a confined command."""

    confine: Callable[..., None] | None = None  # run by the spawning thread on itself
    argv_prefix: tuple[str, ...] = ()  # bwrap
    #: what `confine` arms to see the renames and removals the act attempts on protected paths
    #: (landlock mechanisms): the executor listens before the spawn, finishes after the call
    tripwire: Tripwire | None = None
    pid_namespace: bool = False  # `confine(init=...)` makes the act's own PID namespace


def enter(
    view: View,
    platform: Platform,
    files: tuple[str, ...],
    tripwire: Tripwire | None = None,
    init: Callable[[], None] | None = None,
) -> None:
    """Confine the calling thread (and what it spawns) to `view`. With namespaces, `init`
    starts the first process of the children's PID namespace (before anything confines it).
    Raises OSError."""
    shm: tuple[Path, ...] = ()
    if platform.namespaces is not None:
        shm = _mounts(view, pid_namespace=platform.pid_scope or init is not None)
        if init is not None:  # before the capabilities go: it mounts the namespace's /proc
            init()
    kept = confine_sys.KEPT_CAPABILITIES if os.geteuid() == 0 else ()
    confine_sys.keep_only_capabilities(kept)
    confine_sys.no_new_privs()
    if platform.landlock_abi is not None:
        grants = (*(Path(path) for path in view.writable), *shm)
        files_ = tuple(Path(path) for path in (*files, *DEVICES))
        readable = _readable(view, covered=platform.namespaces is not None)
        confine_landlock.restrict_thread(grants, files_, platform.landlock_abi, readable)
    if tripwire is not None:  # last: what it watches is what the act itself attempts
        tripwire.install()


def watch_bwrap(tripwire: Tripwire, bwrap: str) -> None:
    """Under bwrap: the tripwire on the spawning thread, whence bwrap and the act inherit it.
    Without CAP_SYS_ADMIN, seccomp needs no_new_privs, which a setuid bwrap cannot run under:
    its acts go unwatched (the tripwire says why)."""
    if not tripwire.listening:  # a confine run no one answers (the benchmark's supervisor)
        return
    if not os.stat(bwrap).st_mode & stat.S_ISUID:
        confine_sys.no_new_privs()  # bwrap sets it for the act anyway
    tripwire.install()


def _readable(view: View, covered: bool) -> tuple[Path, ...] | None:
    """The allow-list for Landlock; the covered folders are in it only where their decoys
    were mounted in place (without the mounts, behind them are the real files)."""
    if view.readable is None:
        return None
    covers = [path for path, _ in view.covers] if covered else []
    return tuple(Path(path) for path in dict.fromkeys((*view.readable, *covers)))


def _mounts(view: View, pid_namespace: bool) -> tuple[Path, ...]:
    # an IPC namespace too: no SysV shared memory, semaphore or message queue of the session's
    # (or of anything else on the machine) can be read, written or removed by the act
    flags = confine_sys.CLONE_NEWNS | confine_sys.CLONE_FS | confine_sys.CLONE_NEWIPC
    if pid_namespace:
        flags |= confine_sys.CLONE_NEWPID
    confine_sys.unshare(flags)
    confine_sys.mount(None, "/", None, confine_sys.MS_REC | confine_sys.MS_PRIVATE)
    confine_sys.mount_setattr("/", confine_sys.MOUNT_ATTR_RDONLY)
    for folder in view.writable:
        _bind(folder, writable=True)
    for folder in view.pinned:  # a mount point of the same rights: it cannot be moved aside
        confine_sys.mount(folder, folder, None, confine_sys.MS_BIND | confine_sys.MS_REC)
    for path in view.protected:  # before the hiding: the report's spares lie in the record
        _bind(path, writable=False)
    shm = _private_shm()
    for path, decoy in view.covers:
        _cover(path, decoy)
    for path in view.hidden:
        _hide(path)
    return shm


def _bind(path: str, writable: bool) -> None:
    confine_sys.mount(path, path, None, confine_sys.MS_BIND | confine_sys.MS_REC)
    if writable:  # this mount only: file systems mounted beneath stay read-only
        no_devices = confine_sys.MOUNT_ATTR_NOSUID | confine_sys.MOUNT_ATTR_NODEV
        confine_sys.mount_setattr(
            path, no_devices, clear=confine_sys.MOUNT_ATTR_RDONLY, recursive=False
        )
    else:
        confine_sys.mount_setattr(path, confine_sys.MOUNT_ATTR_RDONLY)


def _hide(path: str) -> None:
    if os.path.isdir(path):
        flags = _RO_MOUNT | confine_sys.MS_NOEXEC
        confine_sys.mount("tmpfs", path, "tmpfs", flags, HIDDEN_TMPFS)
    else:
        confine_sys.mount("/dev/null", path, None, confine_sys.MS_BIND)
        confine_sys.mount_setattr(path, confine_sys.MOUNT_ATTR_RDONLY, recursive=False)


def _cover(path: str, decoy: str) -> None:
    """`path` shows the decoy folder's tree instead of its own, read-only (a tripwire: what is
    opened there can be watched without anything real behind it)."""
    confine_sys.mount(decoy, path, None, confine_sys.MS_BIND | confine_sys.MS_REC)
    confine_sys.mount_setattr(path, _READ_ONLY_ATTRS)


def _private_shm() -> tuple[Path, ...]:
    """A /dev/shm of the call's own (POSIX semaphores and shared memory), gone after it."""
    if not os.path.isdir(SHM):
        return ()
    flags = confine_sys.MS_NOSUID | confine_sys.MS_NODEV
    confine_sys.mount("tmpfs", SHM, "tmpfs", flags, "mode=1777")
    return (Path(SHM),)


def bwrap_argv(bwrap: str, view: View) -> tuple[str, ...]:
    """The same view through bubblewrap: a read-only root, a private /dev, /proc, PID and IPC
    namespace (killed when the thread that starts bwrap dies: the session's), the writable
    binds, the hidden and protected paths, every capability dropped.
    With an allow-list of readable paths, the root holds those and nothing else."""
    root = ["--ro-bind", "/", "/"]
    if view.readable is not None:  # a root of the allowed paths only
        root = confine_read.bwrap_root(view.readable)
    argv = [bwrap, *root, "--dev", "/dev", "--tmpfs", SHM]
    argv += ["--unshare-pid", "--unshare-ipc", "--proc", "/proc"]
    for folder in view.writable:
        argv += ["--bind", folder, folder]
    for folder in view.pinned:
        argv += ["--bind", folder, folder]
    for path in view.protected:
        argv += ["--ro-bind", path, path]
    for path, decoy in view.covers:
        argv += ["--ro-bind", decoy, path]
    for path in view.hidden:
        if os.path.isdir(path):
            argv += ["--tmpfs", path, "--remount-ro", path]
        else:
            argv += ["--ro-bind", "/dev/null", path]
    argv += ["--cap-drop", "ALL", "--"]
    return tuple(argv)
