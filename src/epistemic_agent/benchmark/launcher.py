"""The neutral launcher an oracle runs the agent's code through: apart from its judge.

An oracle (through judgelib.run_code) starts this module with two inherited pipes, one it
writes a JSON spec to and one it reads the outcome from:

    python -I -c "...; from epistemic_agent.benchmark.launcher import main; main()" SPEC STATUS

The launcher forks a supervisor and exits at once, so the supervisor (the code's parent) is an
orphan in a session of its own, not a child of the oracle. Where the machine allows, the
supervisor is the first process of a new PID namespace with a /proc of its own (the code sees
no other process), and confines itself as a mutating act would be confined (confinement.py): the
whole file system read-only but the scratch copy and its temp folder, the `hide` paths (the
benchmark's task folders, the judge's folder) covered by empty read-only folders, nothing
readable but the spec's `readable` allow-list (the agent's: system folders and the tasks'
Python), the scratch copy and its temp folder, capabilities dropped, Landlock. The code itself
runs in a nested Landlock domain, so it cannot read the supervisor's memory or descriptors
either. Its environment is the spec's `env` and nothing
else; its descriptors 0, 1 and 2 are the files the oracle opened, and no other.

The status pipe gets JSON lines: `{"supervisor": PID}` first (so the oracle can kill it), then
`{"exit": ..., "signal": ..., "timed_out": ..., "seconds": ..., "confinement": ...}` or
`{"error": "..."}` when the code could not be started.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import signal
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from ..execute import (
    CLONE_NEWNS,
    CLONE_NEWPID,
    DEVICES,
    MS_NODEV,
    MS_NOEXEC,
    MS_NOSUID,
    MS_PRIVATE,
    MS_REC,
    Confinement,
    detect,
    landlock_restrict_thread,
    mount,
    unshare,
)

if TYPE_CHECKING:
    from typing import Any

    from ..execute import Confinement


def main() -> None:
    spec_fd, status_fd = int(sys.argv[1]), int(sys.argv[2])
    with os.fdopen(spec_fd, "rb") as handle:
        spec = json.loads(handle.read())
    status = os.fdopen(status_fd, "w", buffering=1)
    try:
        confinement = _confinement(spec)
        pid_namespace = _new_pid_namespace(confinement)
    except Exception as error:  # the oracle reads this as an oracle error, never a verdict
        _report(status, {"error": f"the launcher cannot start: {error}"})
        os._exit(1)
    supervisor = os.fork()
    if supervisor:
        _report(status, {"supervisor": supervisor})
        os._exit(0)
    try:
        os.setsid()
        result = _supervise(spec, confinement, pid_namespace)
    except Exception as error:
        result = {"error": f"the code could not be started: {type(error).__name__}: {error}"}
    _report(status, result)
    os._exit(0)


def _report(status: Any, data: dict[str, Any]) -> None:
    status.write(json.dumps(data) + "\n")


def _confinement(spec: dict[str, Any]) -> Confinement | None:
    """The confinement of a mutating act in the scratch copy, hiding `hide`; None when the
    spec asks for none. Detected here, while this process is single-threaded."""
    if not spec.get("confine"):
        return None

    platform = detect()
    hide = [Path(path) for path in spec.get("hide", ()) if os.path.lexists(path)]
    record = hide[0] if hide else Path(spec["tmp"]) / ".none"
    grants = {"change-state": tuple(spec.get("writable", ()))}
    readable = spec.get("readable")
    confinement = Confinement(
        platform,
        Path(spec["cwd"]),
        Path(spec["tmp"]),
        record,
        (),
        grants,
        tuple(hide[1:]),
        readable=None if readable is None else tuple(Path(path) for path in readable),
    )
    return confinement


def _new_pid_namespace(confinement: Confinement | None) -> bool:
    """The next child becomes process 1 of a new PID namespace, where namespaces are there."""
    if confinement is None or confinement.mechanism != "landlock+namespaces":
        return False

    try:
        unshare(CLONE_NEWPID)
    except OSError:
        return False
    return True


def _supervise(
    spec: dict[str, Any], confinement: Confinement | None, pid_namespace: bool
) -> dict[str, Any]:
    mechanism = "none" if confinement is None else confinement.mechanism
    prefix: tuple[str, ...] = ()
    if pid_namespace:
        _private_proc()
    if confinement is not None:
        launch = confinement.launch("change-state")
        if launch.confine is not None:
            launch.confine()
        prefix = launch.argv_prefix
    started = time.monotonic()
    child = os.fork()
    if child == 0:
        _exec(spec, confinement, prefix)
    code, sig, timed_out = _wait(child, float(spec["timeout"]))
    seconds = round(time.monotonic() - started, 3)
    if not pid_namespace:  # in a PID namespace, this process's exit kills every other one
        with contextlib.suppress(OSError):
            os.killpg(child, signal.SIGKILL)
    return {
        "exit": code,
        "signal": sig,
        "timed_out": timed_out,
        "seconds": seconds,
        "confinement": mechanism,
        "pid_namespace": pid_namespace,
    }


def _private_proc() -> None:
    """A mount namespace with a /proc of the new PID namespace: no other process in sight."""
    unshare(CLONE_NEWNS)
    mount(None, "/", None, MS_REC | MS_PRIVATE)
    flags = MS_NOSUID | MS_NODEV | MS_NOEXEC
    mount("proc", "/proc", "proc", flags)


def _exec(spec: dict[str, Any], confinement: Confinement | None, prefix: tuple[str, ...]) -> None:
    """The code: its own process group, the given descriptors only, a nested Landlock domain,
    the given environment. Never returns."""
    try:
        os.setpgid(0, 0)
        for target, fd in enumerate((spec["stdin"], spec["stdout"], spec["stderr"])):
            os.dup2(fd, target, inheritable=True)
        os.closerange(3, 65536)
        os.chdir(spec["cwd"])
        fsize = spec.get("fsize")
        if fsize is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (int(fsize), int(fsize)))
        if confinement is not None and confinement.platform.landlock_abi is not None:
            _nest(confinement)
        argv = [*prefix, *spec["argv"]]
        os.execvpe(argv[0], argv, spec["env"])
    except BaseException as error:
        os.write(2, f"launcher: cannot run {spec['argv'][:1]}: {error}\n".encode())
    os._exit(127)


def _nest(confinement: Confinement) -> None:
    """A Landlock domain inside the supervisor's: the code cannot trace it or open its
    /proc entries (memory, descriptors, environment)."""
    view = confinement.view("change-state")
    grants = tuple(Path(path) for path in view.writable)
    devices = tuple(Path(path) for path in DEVICES)
    abi = confinement.platform.landlock_abi
    assert abi is not None
    readable = None if view.readable is None else tuple(Path(path) for path in view.readable)
    landlock_restrict_thread(grants, devices, abi, readable)


def _wait(child: int, timeout: float) -> tuple[int | None, int | None, bool]:
    """Reap every child that ends (as process 1 they are all ours); the code's exit status,
    or a time-out, after which the code's group is killed."""
    deadline = time.monotonic() + timeout
    timed_out = False
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return None, None, timed_out
        if pid == child:
            if os.WIFSIGNALED(status):
                return None, os.WTERMSIG(status), timed_out
            return os.waitstatus_to_exitcode(status), None, timed_out
        if pid == 0:
            if not timed_out and time.monotonic() > deadline:
                timed_out = True
                for target in (-child, child):
                    with contextlib.suppress(OSError):
                        os.kill(target, signal.SIGKILL)
            time.sleep(0.005)


if __name__ == "__main__":
    main()
