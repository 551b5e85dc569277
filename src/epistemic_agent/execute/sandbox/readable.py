"""An allow-list of what acts may read: with one, an act reads, lists and runs nothing but the
workspace, the scratch folder, its writable grants and the listed paths.

Without an allow-list (the default) an act reads whatever the OS user can, minus the hidden
paths: a deny-list, which only hides what someone thought of. An allow-list is the other way
round, for a caller who knows what its acts need (`epistemic run --readable PATH`; the
benchmark gives its agents the system folders and the tasks' Python, nothing else):

- Landlock (both Landlock mechanisms) handles reading files, listing folders and executing,
  and grants them only beneath the allowed paths; an open elsewhere fails with EACCES.
  Covered folders (decoys) are allowed where the mount namespace put the decoy in place, so
  opening one is seen (benchmark/peek.py) and reads nothing.
- bwrap builds a root holding only the allowed paths (symlinks such as /bin -> usr/bin kept as
  symlinks); anything else is not there (ENOENT).
- With no mechanism (`none`) nothing is enforced: the guarantee `reads-allow-listed` does not
  hold, and the session header says so.

A writable grant outside the allow-list is not given (a folder an act may write, it may read):
it is listed with the header's `missing_grants`.
"""

from __future__ import annotations

import os


def expand(entries: tuple[str, ...] | None) -> tuple[str, ...] | None:
    """The allowed paths that exist, as absolute paths, each followed by its real path when it
    is a symlink (/bin and /usr/bin); None stays None (no allow-list)."""
    if entries is None:
        return None
    found: list[str] = []
    for entry in entries:
        path = os.path.abspath(os.path.expanduser(entry))
        if not os.path.lexists(path):
            continue
        found.append(path)
        real = os.path.realpath(path)
        if real != path and os.path.exists(real):
            found.append(real)
    return tuple(dict.fromkeys(found))


def beneath(path: str, folders: tuple[str, ...]) -> bool:
    real = os.path.realpath(path)
    return any(
        candidate == folder or candidate.startswith(folder.rstrip("/") + "/")
        for candidate in (path, real)
        for folder in folders
    )


def split_grants(
    grants: dict[str, tuple[str, ...]], readable: tuple[str, ...] | None
) -> tuple[dict[str, tuple[str, ...]], dict[str, tuple[str, ...]]]:
    """The grants that lie beneath the allow-list (all, without one), and the others apart."""
    if readable is None:
        return grants, {}
    kept: dict[str, tuple[str, ...]] = {}
    dropped: dict[str, tuple[str, ...]] = {}
    for act, paths in grants.items():
        kept[act] = tuple(path for path in paths if beneath(path, readable))
        outside = tuple(path for path in paths if not beneath(path, readable))
        if outside:
            dropped[act] = outside
    return kept, dropped


def bwrap_root(readable: tuple[str, ...]) -> list[str]:
    """bwrap arguments for a root holding only the allowed paths: a symlink stays a symlink
    (its target is allowed too, `expand`), /dev and /proc are bwrap's own."""
    argv: list[str] = []
    bound: list[str] = []
    for path in sorted(readable, key=len):
        if path in ("/dev", "/proc") or path.startswith(("/dev/", "/proc/")):
            continue
        if os.path.islink(path):
            argv += ["--symlink", os.readlink(path), path]
        elif os.path.exists(path) and not beneath(path, tuple(bound)):
            argv += ["--ro-bind", path, path]
            bound.append(path)
    return argv
