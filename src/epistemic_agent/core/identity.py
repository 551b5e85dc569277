"""Who and where: the OS user a record names, and the commit a workspace is at."""

from __future__ import annotations

import contextlib
import os
import pwd
import signal
import subprocess
from pathlib import Path

from .errors import EpistemicError
from .programs import system_program


def user() -> str:
    """The OS user, as `getpass.getuser` finds it."""
    for name in ("LOGNAME", "USER", "LNAME", "USERNAME"):
        if os.environ.get(name):
            return os.environ[name]
    try:
        return pwd.getpwuid(os.getuid()).pw_name
    except KeyError:
        return f"uid {os.getuid()}"


#: git with none of the repository's own programs (its config is the agent's to write): no
#: fsmonitor, no pager, no transport (a partial clone's promisor remote would otherwise be
#: fetched from, through the ssh command the config names, to find a missing object), and
#: the objects as they are, not as replace refs say.
SAFE_GIT = (
    *("-c", "core.fsmonitor=false", "-c", "core.pager=cat", "-c", "protocol.allow=never"),
    "--no-replace-objects",
)
GIT_ENV = {
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_OPTIONAL_LOCKS": "0",
    "GIT_NO_LAZY_FETCH": "1",  # git 2.44 and later; protocol.allow=never covers the older
    "GIT_PAGER": "cat",
}
#: git's heap, in KiB (`ulimit -d`): git reads .git/HEAD or packed-refs whole, so a sparse
#: file of many GB there would fill memory before any timeout. Packs are mapped read-only,
#: which this limit does not count.
GIT_HEAP_KIB = 512 << 10
_LIMITED = f'ulimit -d {GIT_HEAP_KIB} && exec "$@"'


class GitTimeout(EpistemicError):
    """git did not finish in time (a FIFO in .git, say, makes it wait): it was killed."""


def run_git(
    directory: Path, *args: str, timeout: float = 30.0
) -> subprocess.CompletedProcess[str] | None:
    """git in `directory`, never prompting, reading nothing from stdin, its heap bounded;
    None when git cannot run at all. GitTimeout when it runs longer than `timeout` seconds
    (it is killed with whatever it started)."""
    git, shell = system_program("git"), system_program("sh")
    if git is None or shell is None:
        return None
    argv = [shell, "-c", _LIMITED, "git", git, *SAFE_GIT, *args]
    try:
        with subprocess.Popen(
            argv,
            cwd=directory,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, **GIT_ENV},
            start_new_session=True,
        ) as process:
            try:
                out, err = process.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                raise GitTimeout(f"git {args[0]} timed out after {timeout:.3g} s") from None
    except OSError:
        return None
    text = [data.decode("utf-8", "surrogateescape") for data in (out, err)]
    return subprocess.CompletedProcess(argv, process.returncode, *text)


def git_head(workspace: Path) -> str | None:
    """`git rev-parse HEAD` in the workspace, or None outside a repository (or without git);
    GitTimeout when git did not answer in time."""
    done = run_git(workspace, "rev-parse", "HEAD", timeout=5)
    if done is None or done.returncode != 0:
        return None
    return done.stdout.strip() or None
