"""The `python3` the benchmark's tasks get: the machine's, never this tool's own environment.

The agent's acts and the code an oracle runs read only an allow-list (readable.py), and this
tool's installation is not on it; an interpreter inside it (a virtualenv's `python3`, first on
PATH once the venv is activated) could not even read its `pyvenv.cfg` there. So the tasks'
interpreter is the first `python3` on PATH that is not inside the tool's installation:

- the tool's own programs folder (its environment's `bin`: a venv, activated or not, pipx's
  or uvx's) is taken off PATH, and VIRTUAL_ENV, PYTHONHOME, PYTHONPATH and the other variables
  that point an interpreter at another installation are left out of the environment the
  tasks see (`task_env`);
- the first `python3` left on PATH is asked, in that environment, where it really is (a
  version manager's shim names the interpreter it runs; a symlink outside its installation,
  `~/bin/python3`, is followed into it), which installation it is (its prefixes: the
  allow-list) and which copies of the benchmark it can import (the decoys);
- one that reports the tool's own environment as its own is passed over; one that does not run
  or does not answer makes the judging environment unusable: an environment error, never a
  verdict on the agent (`Unusable`).

When the tool runs from an installation's own interpreter (no environment of its own, as with
`pip install --user`), nothing is taken off PATH. Whether the interpreter also runs where the
agent's code runs (confined) is the judge's to find out (judge.judging_environment).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
from functools import cache

from ..core import struct

#: Variables that point an interpreter at another installation than its own: left out of the
#: environment the tasks see.
INSTALL_VARS = (
    "VIRTUAL_ENV",
    "VIRTUAL_ENV_PROMPT",
    "PYTHONHOME",
    "PYTHONPATH",
    "PYTHONUSERBASE",
    "PYTHONEXECUTABLE",
    "__PYVENV_LAUNCHER__",
)
ASK_TIMEOUT = 60.0
#: What a candidate prints: where it is, its prefixes, the benchmark task folders it imports.
ASK = (
    "import json, os, sys, importlib.util as u\n"
    "spec = u.find_spec('epistemic_agent')\n"
    "where = [os.path.join(p, 'benchmark', 'tasks') for p in "
    "(spec.submodule_search_locations or [])] if spec else []\n"
    "print(json.dumps([sys.executable, [sys.base_prefix, sys.base_exec_prefix, sys.prefix, "
    "sys.exec_prefix], where]))\n"
)


class Unusable(Exception):
    """The judging environment has no interpreter the tasks can use: why, in a sentence."""


@struct(frozen=True)
class Interpreter:
    """The tasks' `python3`: the program to run (`path`: the real one behind a shim), the
    installation it reads (`prefixes`, real paths; `environment` is its own `sys.prefix`), and
    the benchmark task folders it can import (`copies`)."""

    path: str
    prefixes: tuple[str, ...]
    environment: str
    copies: tuple[str, ...]


def tool_environment() -> str | None:
    """The tool's own environment (a venv, pipx's, uvx's) as a real path; None when the tool
    runs from an installation's own interpreter."""
    if os.path.realpath(sys.prefix) == os.path.realpath(sys.base_prefix):
        return None
    return os.path.realpath(sys.prefix)


def tool_bins() -> set[str]:
    """The tool environment's programs folders, as real paths (none without one)."""
    if tool_environment() is None:
        return set()
    found = [os.path.dirname(os.path.abspath(sys.executable)), sysconfig.get_path("scripts")]
    found.append(os.path.join(sys.prefix, "bin"))
    return {os.path.realpath(path) for path in found if path}


def task_path(path: str | None = None) -> list[str]:
    """PATH's absolute entries (this process's, or `path`), less the tool's own programs."""
    own = tool_bins()
    given = os.environ.get("PATH", "") if path is None else path
    entries = [entry for entry in given.split(os.pathsep) if os.path.isabs(entry)]
    return [entry for entry in dict.fromkeys(entries) if os.path.realpath(entry) not in own]


def task_env(base: dict[str, str] | None = None) -> dict[str, str]:
    """`base` (this process's environment) as the tasks see it: none of INSTALL_VARS, and PATH
    without the tool's own programs."""
    env = {k: v for k, v in (os.environ if base is None else base).items() if k not in INSTALL_VARS}
    env["PATH"] = os.pathsep.join(task_path(env.get("PATH", "")))
    return env


def machine_python() -> Interpreter:
    """The tasks' interpreter (module docstring), asked once per PATH; Unusable when none."""
    return _find(os.environ.get("PATH", ""))


@cache
def _find(path: str) -> Interpreter:
    env = task_env({**os.environ, "PATH": path})
    own = tool_environment()
    passed_over: list[str] = []
    for entry in task_path(path):
        candidate = os.path.join(entry, "python3")
        if not (os.path.isfile(candidate) and os.access(candidate, os.X_OK)):
            continue
        if own is not None and _inside(candidate, own):
            passed_over.append(candidate)
            continue
        found = _ask(candidate, env)
        if own is not None and (found.environment == own or _inside(found.path, own)):
            passed_over.append(candidate)
            continue
        return found
    where = env["PATH"] or "(empty)"
    if own is None:
        raise Unusable(f"no python3 on PATH; PATH: {where}")
    mine = ", ".join([os.path.join(own, "bin", "python3"), *passed_over])
    raise Unusable(
        f"no python3 on PATH but this tool's own ({mine}), which its tasks cannot read; "
        f"PATH searched: {where}"
    )


def _ask(candidate: str, env: dict[str, str]) -> Interpreter:
    """What `candidate` says it is, run as the tasks will run it."""
    try:
        done = subprocess.run(
            [candidate, "-I", "-c", ASK],
            capture_output=True,
            text=True,
            timeout=ASK_TIMEOUT,
            check=False,
            stdin=subprocess.DEVNULL,
            env=env,
        )
    except subprocess.TimeoutExpired:
        raise Unusable(f"python3 ({candidate}) did not answer within {ASK_TIMEOUT:g} s") from None
    except OSError as error:
        raise Unusable(f"python3 ({candidate}) cannot be run: {error}") from None
    try:
        executable, prefixes, where = json.loads(done.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        said = [line.strip() for line in (done.stderr + done.stdout).splitlines() if line.strip()]
        why = said[-1][:300] if said else f"exit {done.returncode}, nothing printed"
        raise Unusable(f"python3 ({candidate}) does not run: {why}") from None
    real = [os.path.realpath(p) for p in prefixes if isinstance(p, str)]
    copies = tuple(os.path.realpath(p) for p in where if isinstance(p, str) and os.path.isdir(p))
    environment = real[2] if len(real) > 2 else ""  # its sys.prefix
    unique = tuple(dict.fromkeys(real))
    path = executable if isinstance(executable, str) and os.path.isfile(executable) else candidate
    return Interpreter(_within(path, unique), unique, environment, copies)


def _within(path: str, prefixes: tuple[str, ...]) -> str:
    """`path`, or the file it links to when only that lies in the interpreter's installation
    (`~/bin/python3 -> /usr/bin/python3.11`): the tasks read that installation, not ~/bin. A
    venv's `python3` stays as it is: its venv is its installation."""
    folder, name = os.path.split(os.path.abspath(path))
    for candidate in (path, os.path.join(os.path.realpath(folder), name), os.path.realpath(path)):
        if any(_under(candidate, prefix) for prefix in prefixes):
            return candidate
    return path


def _inside(path: str, folder: str) -> bool:
    """Whether `path`, as given or resolved, lies in `folder` (a real path)."""
    return any(_under(p, folder) for p in (os.path.abspath(path), os.path.realpath(path)))


def _under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")
