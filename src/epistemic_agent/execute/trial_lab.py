"""A throwaway layout shaped like a real workspace, for trying the guarantees on this machine
(trials.py): a record folder, a report, a policy in a subfolder, a protected file a few levels
deep, a tool installed inside the workspace, a program the session runs inside a grant, the
operator's secrets under a home of its own, and a folder outside everything.

Every file an act must not read holds a token drawn afresh for each lab, so a trial that prints
it has read it; every path an act must not change is fingerprinted (its content, inode, mode,
owner and times, and the inode of each folder above it), so a trial that moved a parent aside
and rebuilt the path is caught as surely as one that wrote the file.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

SITE = "app/.venv/lib/python3/site-packages"
SIGNERS = "deep/a/b/signers"  # a protected file a few levels deep

#: Files of the lab, relative to its root, each holding the lab's token (or, for the tool,
#: code): what the trials try to read, change or replace.
FILES = (
    "ws/.epistemic/journal.jsonl",
    "ws/.epistemic/head.json",
    "ws/.epistemic/pending/1.request",
    "ws/.epistemic/evidence/ab/cdef",
    "ws/.epistemic/tmp/call-1.out",
    "ws/RATIONALE.md",
    "ws/config/policy.toml",
    f"ws/{SIGNERS}",
    "ws/src/app.py",
    f"ws/{SITE}/epistemic_agent/__init__.py",
    "ws/app/.venv/bin/epistemic",
    "ws/app/.venv/pyvenv.cfg",
    "grant/bin/ssh-keygen",
    "home/.ssh/id_ed25519",
    "home/.netrc",
    "outside/secret",
)
FOLDERS = ("scratch", "captures", "home/.cache")

Print = dict[str, tuple[object, ...]]


class Lab:
    """The layout, under `root` (a fresh folder of the system's temp dir)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.token = os.urandom(12).hex()
        self.ws = root / "ws"
        self.record = self.ws / ".epistemic"
        self.home = root / "home"
        self.grant = root / "grant"
        self.scratch = root / "scratch"
        self.captures = root / "captures"
        self.outside = root / "outside"

    def build(self) -> None:
        """Lay the lab out afresh (after a trial broke it, too)."""
        for name in ("ws", "home", "grant", "outside"):
            shutil.rmtree(self.root / name, ignore_errors=True)
        for name in FOLDERS:
            (self.root / name).mkdir(parents=True, exist_ok=True)
        for name in FILES:
            path = self.root / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f"{self.token}\n")
        (self.ws / "app/.venv/bin/epistemic").chmod(0o755)
        (self.grant / "bin/ssh-keygen").chmod(0o755)

    @property
    def guarded(self) -> tuple[Path, ...]:
        """What a session guards in its workspace: the report, the policy, a signers file."""
        return (
            self.ws / "RATIONALE.md",
            self.ws / "config/policy.toml",
            self.ws / "deep/a/b/signers",
        )

    @property
    def tool(self) -> tuple[Path, ...]:
        """The tool's installation: a virtualenv in the workspace, a program in a grant."""
        return (self.ws / "app/.venv", self.grant / "bin/ssh-keygen")

    @property
    def secrets(self) -> tuple[str, ...]:
        return (str(self.home / ".ssh"), str(self.home / ".netrc"))

    def fingerprint(self, names: tuple[str, ...]) -> Print:
        """The state of each named path (relative to the root; a folder with all beneath it)
        and the inode of each folder above it up to the root."""
        found: Print = {}
        for name in names:
            path = self.root / name
            for parent in path.relative_to(self.root).parents:
                found[f"{parent}/"] = _state(self.root / parent, content=False)
            found[name] = _state(path, content=True)
            if path.is_dir() and not path.is_symlink():
                for below in sorted(path.rglob("*")):
                    found[str(below.relative_to(self.root))] = _state(below, content=True)
        return found


def changed(before: Print, after: Print) -> list[str]:
    """The paths whose state differs (appeared, vanished, replaced or changed)."""
    names = sorted(set(before) | set(after))
    return [name.rstrip("/") or "." for name in names if before.get(name) != after.get(name)]


def _state(path: Path, content: bool) -> tuple[object, ...]:
    try:
        info = path.lstat()
    except OSError:
        return ("absent",)
    if not content:
        return (info.st_ino,)
    digest = ""
    if path.is_file() and not path.is_symlink():
        try:
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
        except OSError as error:
            digest = f"unreadable: {error.strerror}"
    mtime = info.st_mtime_ns if not path.is_dir() else 0  # a folder's changes are its entries
    return (info.st_ino, info.st_mode, info.st_uid, info.st_gid, mtime, info.st_nlink, digest)
