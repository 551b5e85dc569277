"""What a benchmark agent's acts may read: an allow-list (sandbox/readable.py), so that a copy of
the benchmark the runner does not know of (another clone or worktree, a wheel, an sdist, a
package cache) is out of reach wherever it lies.

The list: the system folders the tasks' commands need (/usr, /bin, /sbin, /lib*, /etc, /dev,
/proc; git, sqlite3, the shell tools and their configuration live there), and the Python the
tasks' `python3` is (its installation prefix: a version manager's lies under the home
folder). Nothing else: no /tmp but the session's scratch folder, no /work, no /root, no
/home. The workspace and the scratch folder are always readable.

The agent gets a PATH of only the allowed folders (the tasks' Python's own first) and an
empty HOME of its own (git reads ~/.gitconfig and stops when it is unreadable); its
environment is otherwise the runner's.

The code an oracle runs (launcher.py) gets the same list and PATH, with its scratch copy and
temp folder instead of the workspace.

Copies of the benchmark inside the allowed folders (the package installed into the tasks'
Python, or the system's) are found by importing it with that Python, and covered by the decoy
like every other known copy (hiding.py).
"""

from __future__ import annotations

import json
import os
import subprocess
from functools import cache
from pathlib import Path

from ..core.structs import struct
from ..execute.sandbox.readable import beneath
from .judgelib import python3

SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/dev", "/proc")


@struct
class Reads:
    """The allow-list (`--readable` paths), the agent's PATH, and benchmark copies inside it."""

    paths: tuple[str, ...]
    path_env: str
    copies: tuple[Path, ...]

    def argv(self) -> list[str]:
        args: list[str] = []
        for path in self.paths:
            args += ["--readable", path]
        return args


def allow_list(home: Path | None) -> Reads:
    """The agent's allow-list with `home` (its empty HOME) in it; without one, the list the
    code an oracle runs gets (its launcher adds its scratch copy and temp folder)."""
    python, prefixes, copies = python_facts()
    paths = [path for path in SYSTEM if os.path.lexists(path)]
    paths += [prefix for prefix in prefixes if not _beneath(prefix, paths)]
    if home is not None:
        paths.append(str(home))
    entries = [os.path.dirname(python)] if python else []
    entries += [e for e in os.get_exec_path() if os.path.isabs(e) and _beneath(e, paths)]
    path_env = os.pathsep.join(dict.fromkeys(entries)) or "/usr/bin:/bin"
    found = tuple(Path(copy) for copy in copies if _beneath(copy, paths))
    return Reads(tuple(paths), path_env, found)


@cache
def python_facts() -> tuple[str, tuple[str, ...], tuple[str, ...]]:
    """The real interpreter behind the tasks' `python3`, its installation prefixes, and the
    benchmark task folders it can import (asked once, isolated: no user site, no PYTHONPATH)."""
    python = os.path.realpath(python3())
    code = (
        "import json, os, sys, importlib.util as u\n"
        "spec = u.find_spec('epistemic_agent')\n"
        "where = [os.path.join(p, 'benchmark', 'tasks') for p in "
        "(spec.submodule_search_locations or []) if spec] if spec else []\n"
        "print(json.dumps([sys.base_prefix, sys.base_exec_prefix, sys.prefix, where]))\n"
    )
    try:
        done = subprocess.run(
            [python, "-I", "-c", code],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
            stdin=subprocess.DEVNULL,
        )
        *prefixes, where = json.loads(done.stdout.strip().splitlines()[-1])
    except (OSError, ValueError, IndexError, subprocess.SubprocessError):
        return "", (), ()
    real = tuple(dict.fromkeys(os.path.realpath(p) for p in prefixes if isinstance(p, str)))
    copies = tuple(os.path.realpath(p) for p in where if isinstance(p, str) and os.path.isdir(p))
    return python, real, copies


def _beneath(path: str, folders: list[str]) -> bool:
    return beneath(path, tuple(folders))
