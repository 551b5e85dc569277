"""Kernel-enforced read-only workspace for non-mutating acts.

A command that declared itself non-mutating (collect-info, test-hypothesis, verify) runs with
the workspace read-only for it and all its children: no create, write, truncate, delete,
rename, link, mkdir, mknod or symlink under the workspace. Everything outside stays as
writable as before, `writable` paths (a scratch dir, even inside the workspace) stay writable,
and reading or executing is never restricted. Methods, best first:

landlock
    A Landlock ruleset (see enforce_landlock) built in the parent; the forked child calls
    `child_setup` (PR_SET_NO_NEW_PRIVS, landlock_restrict_self) just before exec. Irrevocable:
    root inside cannot lift it, mount is denied, and a later Landlock layer only narrows it.
    Limits:
    - chmod, chown, utime (so `touch existing`), extended attributes and inode flags (chattr)
      are not governed: the static check or observation must catch them;
    - directly inside an ancestor of the workspace (/tmp for /tmp/ws) entries that existed
      when the sandbox was built stay writable, but none can be created, removed or renamed
      there (set TMPDIR to a writable dir), and one another process adds there after the
      build stays read-only for that call;
    - a hard link to a workspace file, or a bind mount of the workspace, reached from outside
      shares the outside rights (rules follow inodes and paths);
    - ABI 1 kernels deny every cross-directory rename or link (REFER); ABI < 3 kernels do not
      govern truncate(2) by path;
    - a command can still ask an unsandboxed process (a daemon, a socket server) to write.
bwrap
    Only if Landlock is unavailable: `bwrap --dev-bind / / --ro-bind WS WS --bind W W
    --cap-drop ALL --`, put before `bash -c command`. Writes fail with EROFS; without caps,
    root inside cannot remount, and bwrap sets no_new_privs. Limits: the capability drop also
    removes root's DAC override (files of other users become read-only too); chmod/chown/utime
    under the workspace are denied (a read-only mount covers them); about 3 ms per call.
none
    No enforcement; the journal records what the command did (observation only).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from functools import cache
from pathlib import Path

from .structs import field, struct

TYPE_CHECKING = False  # typing is not imported at run time: start-up cost
if TYPE_CHECKING:
    import subprocess
    from types import TracebackType
    from typing import Any


@struct
class Sandbox:
    """How to start one command with the workspace read-only.

    Run `argv_prefix + ("bash", "-c", command)`; in the forked child, after setsid/chdir/dup2
    and just before exec, call `child_setup` if set: it raises OSError when it could not
    restrict the process, and the child must then exit without exec'ing. Call `close` in the
    parent once the child is spawned.
    """

    name: str
    argv_prefix: tuple[str, ...] = ()
    child_setup: Callable[[], None] | None = None
    fds: list[int] = field(default_factory=list, compare=False)

    def close(self) -> None:
        """Close the fds kept open for the child; safe to call twice."""
        while self.fds:
            os.close(self.fds.pop())

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


@struct
class Support:
    """What this machine can enforce (build one by hand to force a method)."""

    landlock_abi: int | None
    landlock_error: str | None
    bwrap: str | None  # "path (version)"
    bwrap_error: str | None

    def best(self) -> str:
        if self.landlock_abi is not None:
            return "landlock"
        if self.bwrap is not None and self.bwrap_error is None:
            return "bwrap"
        return "none"

    @property
    def bwrap_path(self) -> str | None:
        return None if self.bwrap is None else self.bwrap.rsplit(" (", 1)[0]

    def to_json(self) -> dict[str, Any]:
        return {
            "best": self.best(),
            "landlock_abi": self.landlock_abi,
            "landlock_error": self.landlock_error,
            "bwrap": self.bwrap,
            "bwrap_error": self.bwrap_error,
        }

    def lines(self) -> list[str]:
        """A human-readable report for `epistemic doctor`."""
        if self.landlock_abi is not None:
            landlock = f"available, kernel ABI {self.landlock_abi}"
        else:
            landlock = f"unavailable ({self.landlock_error})"
        if self.bwrap is None:
            bwrap = f"unavailable ({self.bwrap_error})"
        else:
            bwrap = self.bwrap + (
                "" if self.bwrap_error is None else f", fails: {self.bwrap_error}"
            )
        verdicts = {
            "landlock": "enforced by Landlock (chmod/chown/utime not covered)",
            "bwrap": "enforced by a read-only bind mount (bubblewrap)",
            "none": "NOT enforced: non-mutating acts are only observed",
        }
        return [
            f"read-only workspace for non-mutating acts: {verdicts[self.best()]}",
            f"  landlock: {landlock}",
            f"  bwrap: {bwrap}",
        ]


@cache
def detect(full: bool = False) -> Support:
    """Probe Landlock (one syscall) and, if needed or `full`, bwrap (two short runs). Cached.

    Without `full`, bwrap is not probed when Landlock works (it would not be used): that keeps
    the probe off every non-mutating `epistemic exec`.
    """
    abi, landlock_error = _probe_landlock()
    if abi is not None and not full:
        return Support(abi, landlock_error, None, "not probed: Landlock is used")
    bwrap, bwrap_error = _probe_bwrap()
    return Support(abi, landlock_error, bwrap, bwrap_error)


def _probe_landlock() -> tuple[int | None, str | None]:
    try:
        from . import enforce_landlock

        return enforce_landlock.abi_version(), None
    except (OSError, AttributeError, ImportError) as error:  # AttributeError: no such libc symbol
        return None, str(error)


def _probe_bwrap() -> tuple[str | None, str | None]:
    import shutil
    import subprocess

    path = shutil.which("bwrap")
    if path is None:
        return None, "not installed"
    try:
        version = _run([path, "--version"]).stdout.strip()
        probe = _run([path, "--dev-bind", "/", "/", "--cap-drop", "ALL", "--", "true"])
    except (OSError, subprocess.SubprocessError) as error:
        return path, str(error)
    lines = probe.stderr.strip().splitlines()
    failure = None if probe.returncode == 0 else (lines[-1] if lines else f"rc {probe.returncode}")
    return f"{path} ({version})", failure


def _run(argv: list[str]) -> subprocess.CompletedProcess[str]:
    import subprocess

    return subprocess.run(
        argv, capture_output=True, text=True, timeout=10, stdin=subprocess.DEVNULL, check=False
    )


def read_only_sandbox(
    workspace: Path, writable: tuple[Path, ...] = (), support: Support | None = None
) -> Sandbox:
    """The best sandbox `support` (default: detect()) allows for this workspace.

    Raises FileNotFoundError/NotADirectoryError for a missing workspace or writable path, and
    ValueError for a writable path that contains the workspace (it would void the sandbox).
    """
    method = (support or detect()).best()
    if method == "none":
        return Sandbox("none")
    ws, extra = _resolved(workspace, writable)
    if method == "landlock":
        return _landlock(ws, extra, support or detect())
    return _bwrap(ws, extra, support or detect())


def _resolved(workspace: Path, writable: tuple[Path, ...]) -> tuple[Path, tuple[Path, ...]]:
    ws = workspace.resolve(strict=True)
    if not ws.is_dir():
        raise NotADirectoryError(f"workspace is not a directory: {ws}")
    extra = tuple(path.resolve(strict=True) for path in writable)
    for path in extra:
        if ws.is_relative_to(path):
            raise ValueError(f"writable path {path} contains the workspace {ws}")
    return ws, extra


def _landlock(ws: Path, writable: tuple[Path, ...], support: Support) -> Sandbox:
    from . import enforce_landlock

    assert support.landlock_abi is not None
    ruleset = enforce_landlock.build_ruleset(ws, writable, support.landlock_abi)
    return Sandbox("landlock", (), enforce_landlock.child_setup(ruleset), [ruleset])


def _bwrap(ws: Path, writable: tuple[Path, ...], support: Support) -> Sandbox:
    assert support.bwrap_path is not None
    argv = [support.bwrap_path, "--dev-bind", "/", "/", "--ro-bind", str(ws), str(ws)]
    for path in writable:
        if path.is_relative_to(ws):  # outside the workspace it is writable already
            argv += ["--bind", str(path), str(path)]
    return Sandbox("bwrap", (*argv, "--cap-drop", "ALL", "--"))
