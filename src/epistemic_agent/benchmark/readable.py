"""What a benchmark agent's acts may read: an allow-list (sandbox/readable.py), so that a copy of
the benchmark the runner does not know of (another clone or worktree, a wheel, an sdist, a
package cache) is out of reach wherever it lies.

The list: the system folders the tasks' commands need (/usr, /bin, /sbin, /lib*, /etc, /dev,
/proc; git, sqlite3, the shell tools and their configuration live there), and the Python the
tasks' `python3` is (interpreter.py: the machine's, never this tool's own environment; its
installation prefixes: a version manager's lies under the home folder). Nothing else: no /tmp
but the session's scratch folder, no /work, no /root, no /home. The workspace and the scratch
folder are always readable.

The agent gets a PATH of only the allowed folders (the tasks' Python's own first; never the
tool's own programs) and an empty HOME of its own (git reads ~/.gitconfig and stops when it is
unreadable); its environment is otherwise the runner's, less the variables that point an
interpreter at another installation (interpreter.task_env).

The code an oracle runs (launcher.py) gets the same list and PATH, with its scratch copy and
temp folder instead of the workspace.

Copies of the benchmark inside the allowed folders (the package installed into the tasks'
Python, or the system's) are found by importing it with that Python, and covered by the decoy
like every other known copy (hiding.py).
"""

from __future__ import annotations

import os
from pathlib import Path

from ..core import struct
from ..execute import beneath
from .interpreter import machine_python, task_path

SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/dev", "/proc")


@struct
class Reads:
    """The allow-list (`--readable` paths), the agent's PATH, benchmark copies inside it, and
    the tasks' `python3` (the real interpreter)."""

    paths: tuple[str, ...]
    path_env: str
    copies: tuple[Path, ...]
    python: str

    def argv(self) -> list[str]:
        args: list[str] = []
        for path in self.paths:
            args += ["--readable", path]
        return args


def allow_list(home: Path | None) -> Reads:
    """The agent's allow-list with `home` (its empty HOME) in it; without one, the list the
    code an oracle runs gets (its launcher adds its scratch copy and temp folder). Raises
    interpreter.Unusable when the machine has no `python3` the tasks can use."""
    python = machine_python()
    paths = [path for path in SYSTEM if os.path.lexists(path)]
    paths += [prefix for prefix in python.prefixes if not _beneath(prefix, paths)]
    if home is not None:
        paths.append(str(home))
    entries = [os.path.dirname(python.path)]
    entries += [e for e in task_path() if _beneath(e, paths)]
    path_env = os.pathsep.join(dict.fromkeys(entries)) or "/usr/bin:/bin"
    found = tuple(Path(copy) for copy in python.copies if _beneath(copy, paths))
    return Reads(tuple(paths), path_env, found, python.path)


def _beneath(path: str, folders: list[str]) -> bool:
    return beneath(path, tuple(folders))
