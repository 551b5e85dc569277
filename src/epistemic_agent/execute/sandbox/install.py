"""The tool as installed now: what a session runs, and which of its layouts no act's view can
keep read-only.

A session runs more than its package: the console script that started it, the interpreter and
its standard library, `pyvenv.cfg`, the site folders whose `.pth` files run at every start,
the folders on `sys.path`, the shared libraries it has loaded, the programs it runs itself,
and uv's cache where the tool runs from it or shares files with it by hard link.
`tool_paths()` lists them as real paths; a confinement binds those lying inside a writable area
read-only and pins the folders above them (confinement.pins). Some layouts defeat that, and
`exposures()` names them with what to do instead:

- a path the tool is reached through that holds a symlink inside a writable area: a symlink
  cannot be bound, and an act can replace it (the folder holding it is bound read-only instead
  where that folder is not itself a writable root);
- a path the tool reads at start that does not exist yet (a `sys.path` entry, the user
  site-packages) inside a writable area: an act could create it, and nothing is there to bind;
- a folder of the tool that is itself writable (`python -m` run in the workspace puts it on
  sys.path), or lies in one writable folder and holds another (it cannot be bound without
  making the inner one read-only too), or is on sys.path above a writable folder whose name
  could be imported (a workspace `json/` would shadow the standard library's). A folder above
  the workspace is otherwise harmless: outside the writable folders nothing is writable (a
  whole prefix such as `/usr` over a workspace in `/usr/src/app` is not bound, its precise
  folders are where they are writable).
"""

from __future__ import annotations

import os
import site
import sys
from pathlib import Path

from ...core import struct, system_program

#: Programs the session runs itself (to confine, to check signatures, hooks): read-only for
#: every act wherever they lie, like the tool's own installation.
SESSION_PROGRAMS = ("bwrap", "ssh-keygen", "bash", "sh")


@struct(frozen=True)
class Exposure:
    """A path of the tool (or the record) that no act's view can keep read-only here."""

    path: str
    why: str
    instead: str
    guarantee: str = "tool-protected"  # the one it breaks

    def line(self) -> str:
        return f"{self.path}: {self.why}; {self.instead}"

    def to_json(self) -> dict[str, str]:
        return {"path": self.path, "why": self.why, "instead": self.instead,
                "guarantee": self.guarantee}  # fmt: skip


def tool_paths() -> tuple[str, ...]:
    """The tool's own installation as real paths: its environment, the interpreter and what it
    loads, the console script, the folders it imports from, and the programs it runs itself
    (an act that could replace ssh-keygen could forge the check of an approval's signature)."""
    found = [*tool_prefixes(), *_interpreter(), *_site_folders(), _package()]
    found += [entry for entry in sys.path if entry and os.path.isdir(entry)]
    found += [path for path in _loaded_files()]
    found += [path for path in map(system_program, SESSION_PROGRAMS) if path]
    named = os.environ.get("EPISTEMIC_SSH_KEYGEN")
    if named and os.path.isabs(named):
        found.append(named)
    found += uv_cache()
    real = (os.path.realpath(path) for path in found)
    return tuple(dict.fromkeys(path for path in real if os.path.exists(path)))


def tool_prefixes() -> tuple[str, ...]:
    """The interpreter's whole prefixes (a venv's, the base install's), as real paths: bound
    whole where they can be, left to the precise folders of `tool_paths` where one holds a
    writable folder (`/usr` over a workspace in `/usr/src/app`)."""
    found = (sys.prefix, sys.exec_prefix, sys.base_prefix, sys.base_exec_prefix)
    return tuple(dict.fromkeys(os.path.realpath(path) for path in found))


def tool_routes() -> tuple[str, ...]:
    """The paths the session was reached through, as given (not resolved): where a symlink on
    the way could be replaced by an act."""
    script = sys.argv[0] if sys.argv and os.path.lexists(sys.argv[0]) else ""
    found = [script, sys.executable, sys.prefix]
    found += [entry for entry in sys.path if entry]
    found += [path for path in _site_folders()]
    return tuple(dict.fromkeys(os.path.abspath(path) for path in found if path))


def tool_wanted() -> tuple[str, ...]:
    """Paths the interpreter reads at every start, whether or not they exist (a missing one in
    a writable area could be created with content of an act's own)."""
    found = [entry for entry in sys.path if entry]
    if site.ENABLE_USER_SITE:
        found.append(site.getusersitepackages())
    return tuple(dict.fromkeys(os.path.abspath(path) for path in found))


def uv_cache() -> tuple[str, ...]:
    """uv's cache, where the tool runs from it (`uvx`) or shares files with it by hard link (uv
    links installed files from its cache): writing the cache would change the tool."""
    prefix = os.path.realpath(sys.prefix)
    parent = os.path.dirname(prefix)
    if os.path.basename(parent).startswith("archive-v"):
        return (os.path.dirname(parent),)
    try:
        linked = os.stat(os.path.join(_package(), "epistemic_agent", "__init__.py")).st_nlink > 1
    except OSError:
        linked = False
    if not linked:
        return ()
    home = os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache")
    named = os.environ.get("UV_CACHE_DIR") or os.path.join(home, "uv")
    return (named,) if os.path.isdir(named) else ()


def exposures(
    tool: tuple[str, ...],
    roots: tuple[str, ...],
    routes: tuple[str, ...],
    wanted: tuple[str, ...],
) -> tuple[list[Exposure], tuple[str, ...]]:
    """What of the tool (its real paths, the `routes` it was reached through, the `wanted`
    paths it reads at start) no view can keep read-only, given every writable root of any act;
    and the folders holding a symlink on the way, which can be kept read-only instead."""
    found: list[Exposure] = []
    folders: list[str] = []
    imports = {os.path.realpath(path) for path in wanted}
    found += [hit for path in tool if (hit := _holding(path, roots, imports)) is not None]
    for route in routes:
        for link, folder in symlinks_on(route):
            if not any(under(folder, root) for root in roots):
                continue
            if any(under(folder, path) for path in tool):
                continue
            if folder in roots:
                found.append(Exposure(link, "a symlink in a writable folder", _NO_LINK))
            else:
                folders.append(folder)
    for path in wanted:
        real = os.path.realpath(path)
        if os.path.exists(real) or not any(under(real, root) for root in roots):
            continue
        if not any(under(real, kept) for kept in tool):
            found.append(Exposure(path, "missing, and an act could create it", _CREATE))
    return _unique(found), tuple(dict.fromkeys(folders))


def _holding(path: str, roots: tuple[str, ...], imports: set[str]) -> Exposure | None:
    """A path of the tool at or above a writable folder. Outside the writable folders nothing
    is writable, so holding one is harmless, unless the path is a writable folder itself, lies
    in another, or is on sys.path with the writable folder importable from it (a workspace
    `json/` in a folder on sys.path could shadow the standard library's)."""
    below = [root for root in roots if under(root, path)]
    if not below:
        return None
    if path in roots:
        return Exposure(path, "a writable folder the tool runs or imports from", _OWN)
    if any(under(path, root) for root in roots):
        return Exposure(path, "it holds a writable folder and lies in another", _NARROW)
    if path not in imports:
        return None
    for root in below:
        name = Path(root).relative_to(path).parts[0].removesuffix(".py")
        if name.isidentifier():  # a module or package the next start might import
            why = f"importable as `{name}` from {path}, on sys.path"
            return Exposure(root, why, _NARROW)
    return None


def linked_exposures(paths: tuple[str, ...], roots: tuple[str, ...]) -> list[Exposure]:
    """The files among `paths` (the policy, allowed_signers) reached through a symlink that
    lies in a writable folder: an act can point it elsewhere for the next session."""
    found = []
    for path in paths:
        for link, folder in symlinks_on(os.path.abspath(path)):
            if any(under(folder, root) for root in roots):
                why = f"a symlink in a writable folder, to {path}"
                found.append(Exposure(link, why, _COPY, "record-protected"))
    return _unique(found)


def symlinks_on(path: str) -> list[tuple[str, str]]:
    """Each symlink met on the way to `path` (as met, with the real folder it lies in)."""
    found: list[tuple[str, str]] = []
    real = "/"
    for part in Path(path).parts[1:]:
        candidate = os.path.join(real, part)
        if os.path.islink(candidate):
            found.append((candidate, real))
            real = os.path.realpath(candidate)
        else:
            real = os.path.normpath(candidate)
        if len(found) > 40:  # a loop
            break
    return found


def _interpreter() -> list[str]:
    """The interpreter, its standard library, `pyvenv.cfg` and the script that started it."""
    found = [sys.executable, getattr(sys, "_base_executable", sys.executable)]
    found.append(os.path.dirname(os.__file__))  # the standard library
    found.append(os.path.join(sys.prefix, "pyvenv.cfg"))
    script = sys.argv[0] if sys.argv else ""
    if script and os.path.isfile(script):
        found.append(script)
    return found


def _site_folders() -> list[str]:
    """The folders whose `.pth` files run at every start (the user's too, where it is used)."""
    found = list(site.getsitepackages())
    if site.ENABLE_USER_SITE:
        found.append(site.getusersitepackages())
    return found


def _package() -> str:
    """The folder epistemic_agent/ is in (site-packages, or a checkout's src/)."""
    return str(Path(__file__).resolve().parents[3])


def _loaded_files() -> list[str]:
    """The files this process has mapped: the interpreter's shared libraries and extensions."""
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return []
    found = {parts[5] for parts in (line.split(None, 5) for line in lines) if len(parts) == 6}
    return [path for path in found if path.startswith("/") and not path.endswith(")")]


def outermost(paths: list[str]) -> list[str]:
    """The paths not beneath another one of them (a read-only bind covers its subtree)."""
    kept: list[str] = []
    for path in sorted(set(paths), key=len):
        if not any(under(path, outer) for outer in kept):
            kept.append(path)
    return [path for path in paths if path in kept]


def under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _unique(found: list[Exposure]) -> list[Exposure]:
    return list(dict.fromkeys(found))


_NARROW = (
    "install the tool elsewhere (a virtualenv outside the workspace and the grants, pipx), "
    "or take the folder off sys.path"
)
_OWN = (
    "run the installed `epistemic` script (`python -m` puts the current folder on sys.path), "
    "or take the folder off sys.path (PYTHONPATH)"
)
_NO_LINK = "run the tool by its real path, or keep the symlink outside the workspace and grants"
_CREATE = "create it (an empty folder is enough), or run the interpreter without it"
_COPY = "replace the symlink with the file, or keep it outside the workspace and grants"
LANDLOCK_WHY = (
    "inside a writable folder, and Landlock alone (no mount namespace) cannot make part of "
    "a writable tree read-only"
)
LANDLOCK_INSTEAD = (
    "install the tool outside the workspace and the grants, or run where mount namespaces "
    "work (root with CAP_SYS_ADMIN, or unprivileged user namespaces)"
)
