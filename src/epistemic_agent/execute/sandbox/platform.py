"""What this machine lets a session confine its acts with, and what each guarantee needs.

Four mechanisms, best first (docs/security.md says what each holds on which platform):

landlock+namespaces
    Each act is spawned from a thread that first enters a private mount namespace (the whole
    file system read-only, writable binds for what the act may write, the record hidden or
    read-only), drops the capabilities that could undo it, sets no_new_privs and restricts
    itself with Landlock. Needs Landlock and either root (CAP_SYS_ADMIN) or a user namespace
    the process entered before it started threads (`prepare`).
bwrap
    Without Landlock: bubblewrap builds the same view (`--ro-bind / /`, binds, a private /dev,
    /proc and PID namespace, every capability dropped). About 5-8 ms a call.
landlock
    Landlock alone (no namespaces): writes are confined to the workspace, the scratch dir and
    the grants, but a mutating act can write the record, which lies inside the workspace.
none
    No confinement: the journal records what each command did, nothing more.
"""

from __future__ import annotations

import os
import subprocess
import threading
from functools import cache

from ...core import GUARANTEES, struct, system_program
from . import landlock as confine_landlock
from . import syscalls as confine_sys

MECHANISMS = ("landlock+namespaces", "bwrap", "landlock", "none")


@struct
class Platform:
    """What this process can use (build one by hand to force a mechanism in tests)."""

    landlock_abi: int | None
    landlock_error: str | None
    namespaces: str | None  # "root" (CAP_SYS_ADMIN) or "user" (a user namespace it entered)
    namespaces_error: str | None
    bwrap: str | None  # the path of a bwrap that ran a probe
    bwrap_error: str | None

    def mechanism(self) -> str:
        if self.landlock_abi is not None and self.namespaces is not None:
            return "landlock+namespaces"
        if self.bwrap is not None and self.bwrap_error is None:
            return "bwrap"
        if self.landlock_abi is not None:
            return "landlock"
        return "none"

    def not_held(self) -> dict[str, str]:
        """Each guarantee this platform cannot give, with why."""
        mechanism = self.mechanism()
        if mechanism == "none":
            why = _none_why(self)
            return dict.fromkeys(GUARANTEES, why)
        missing: dict[str, str] = {}
        if mechanism == "landlock":
            why = f"no mount namespace ({self.namespaces_error})"
            for key in ("record-protected", "record-private", "observations-keep-metadata"):
                missing[key] = why
            missing["secrets-hidden"] = f"{why}: Landlock alone cannot hide a path"
            missing["tool-protected"] = f"{why}: only outside the workspace"
        if mechanism.startswith("landlock") and not self.scoped_signals and not self.pid_scope:
            missing["processes-isolated"] = (
                f"Landlock ABI {self.landlock_abi} has no signal scoping (needs 6) and no PID "
                "namespace is possible here"
            )
        return missing

    @property
    def scoped_signals(self) -> bool:
        return self.landlock_abi is not None and self.landlock_abi >= 6

    @property
    def pid_scope(self) -> bool:
        """Signals are kept in by a PID namespace (only where Landlock cannot scope them)."""
        return self.namespaces is not None and not self.scoped_signals

    def to_json(self) -> dict[str, object]:
        return {
            "mechanism": self.mechanism(),
            "landlock_abi": self.landlock_abi,
            "landlock_error": self.landlock_error,
            "namespaces": self.namespaces,
            "namespaces_error": self.namespaces_error,
            "bwrap": self.bwrap,
            "bwrap_error": self.bwrap_error,
        }


def _none_why(platform: Platform) -> str:
    parts = [f"Landlock: {platform.landlock_error}"]
    if platform.bwrap_error:
        parts.append(f"bwrap: {platform.bwrap_error}")
    return "nothing to confine with (" + "; ".join(parts) + ")"


def in_user_namespace() -> bool:
    """Whether this process runs in a user namespace other than the machine's (whose uid map
    is the identity over every uid)."""
    try:
        with open("/proc/self/uid_map", "rb") as handle:
            mapping = handle.read().split()
    except OSError:
        return False
    return mapping != [b"0", b"0", b"4294967295"]


def prepare() -> str | None:
    """Give an unprivileged process the namespaces confinement needs: enter a user namespace
    of its own (with a mount namespace) while it is still single-threaded. Idempotent; a no-op
    for root. Returns None on success (or for root), else why it could not."""
    if os.geteuid() == 0 or in_user_namespace():
        return None
    if threading.active_count() > 1:
        return "the process already runs threads: call prepare() before starting any"

    try:
        confine_sys.enter_user_namespace()
    except OSError as error:
        return f"cannot enter a user namespace: {error.strerror or error}"
    return None


@cache
def detect(probe_bwrap: bool = False) -> Platform:
    """Probe Landlock, namespaces and (when needed or asked) bwrap. Cached per process."""
    abi, landlock_error = _probe_landlock()
    namespaces, namespaces_error = _probe_namespaces()
    bwrap: str | None = None
    bwrap_error: str | None = "not probed: Landlock and namespaces are used"
    if abi is None or namespaces is None or probe_bwrap:
        bwrap, bwrap_error = _probe_bwrap()
    return Platform(abi, landlock_error, namespaces, namespaces_error, bwrap, bwrap_error)


def _probe_landlock() -> tuple[int | None, str | None]:
    try:
        return confine_landlock.abi_version(), None
    except (OSError, AttributeError) as error:  # AttributeError: no such libc symbol
        return None, str(error)


def _probe_namespaces() -> tuple[str | None, str | None]:
    """Whether a thread of ours can make a private mount namespace (tried in a throwaway one)."""
    if os.geteuid() != 0:
        why = prepare()
        if why is not None:
            return None, f"not root, and {why}"

    failure: list[str] = []

    def attempt() -> None:
        try:
            confine_sys.unshare(confine_sys.CLONE_NEWNS | confine_sys.CLONE_FS)
            confine_sys.mount(None, "/", None, confine_sys.MS_REC | confine_sys.MS_PRIVATE)
        except OSError as error:
            failure.append(error.strerror or str(error))

    thread = threading.Thread(target=attempt, name="epistemic-namespace-probe")
    thread.start()
    thread.join()
    if failure:
        return None, f"cannot make a mount namespace: {failure[0]}"
    return ("root" if os.geteuid() == 0 else "user"), None


def _probe_bwrap() -> tuple[str | None, str | None]:
    path = system_program("bwrap")
    if path is None:
        return None, "not installed"
    argv = [path, "--ro-bind", "/", "/", "--dev", "/dev", "--unshare-pid", "--unshare-ipc"]
    argv += ["--proc", "/proc"]
    try:
        probe = subprocess.run(
            [*argv, "--cap-drop", "ALL", "--", "true"],
            capture_output=True,
            text=True,
            timeout=10,
            stdin=subprocess.DEVNULL,
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as error:
        return path, str(error)
    lines = probe.stderr.strip().splitlines()
    failure = None if probe.returncode == 0 else (lines[-1] if lines else f"rc {probe.returncode}")
    return path, failure
