"""Finding the programs the session runs itself (ssh-keygen, bwrap, bash): from the system's
own folders first, never through a relative PATH entry, which would resolve inside whatever
folder is current (a workspace an agent writes)."""

from __future__ import annotations

import os
import shutil

SYSTEM_DIRS = ("/usr/bin", "/bin", "/usr/local/bin", "/usr/sbin", "/sbin")


def system_program(name: str) -> str | None:
    """A program from the system's folders first, else from PATH's absolute folders."""
    for folder in SYSTEM_DIRS:
        candidate = os.path.join(folder, name)
        if os.access(candidate, os.X_OK):
            return candidate
    absolute = [entry for entry in os.get_exec_path() if os.path.isabs(entry)]
    return shutil.which(name, path=os.pathsep.join(absolute))
