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


def git_head(workspace: Path) -> str | None:
    """`git rev-parse HEAD` in the workspace, or None outside a repository (or without git)."""
    try:
        done = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=workspace,
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() or None if done.returncode == 0 else None
