"""Who and where: the OS user a record names, and the commit a workspace is at."""

from __future__ import annotations

import os
import pwd
import subprocess
from pathlib import Path


def user() -> str:
    """The OS user, as `getpass.getuser` finds it."""
    for name in ("LOGNAME", "USER", "LNAME", "USERNAME"):
        if os.environ.get(name):
            return os.environ[name]
    try:
        return pwd.getpwuid(os.getuid()).pw_name
    except KeyError:
        return f"uid {os.getuid()}"


#: git with none of the repository's own fsmonitor or pager (its config is the agent's to set).
SAFE_GIT = ("-c", "core.fsmonitor=false", "-c", "core.pager=cat")


def run_git(
    directory: Path, *args: str, timeout: float = 30.0
) -> subprocess.CompletedProcess[str] | None:
    """git in `directory`, never prompting; None when git cannot run at all."""
    try:
        return subprocess.run(
            ["git", *SAFE_GIT, *args],
            cwd=directory,
            capture_output=True,
            text=True,
            errors="surrogateescape",
            timeout=timeout,
            check=False,
            env={**os.environ, "GIT_TERMINAL_PROMPT": "0"},
        )
    except (OSError, subprocess.SubprocessError):
        return None


def git_head(workspace: Path) -> str | None:
    """`git rev-parse HEAD` in the workspace, or None outside a repository (or without git)."""
    done = run_git(workspace, "rev-parse", "HEAD", timeout=5)
    if done is None or done.returncode != 0:
        return None
    return done.stdout.strip() or None
