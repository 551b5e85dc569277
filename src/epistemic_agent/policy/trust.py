"""Policies a human put in force: the trust store, a folder outside every act's reach.

A session refuses a policy file (or a file it names: allowed signers, a verdict script) that
an act of this workspace's sessions wrote, or that changed while one could write there
(session/provenance.py). A human who has read such a file puts it in force with `epistemic
policy trust FILE`, which writes an entry here: the file's real path and the SHA-256 of its
bytes, when and by whom. An entry covers those bytes only: a file changed since is checked
again.

The folder is `$XDG_STATE_HOME/epistemic/trusted` (by default `~/.local/state/epistemic/
trusted`). Sessions bind it read-only for every act, with the folders leading to it pinned
(execute/sandbox), wherever it lies: an act can neither write an entry nor move the folder
aside. Where it is missing and an act could write there (a home folder granted, or the
workspace), the session makes it first, so that no act can make it with entries of its own.
Where the platform cannot bind it (no mount namespace), the header says `record-protected`
does not hold; and an entry whose file changed while an act of the workspace was running is
not believed (provenance.py checks entries as it checks policies).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from ..core import EXIT_RECORD, EpistemicError, atomic_write, now, read_regular, struct, user

MAX_ENTRY = 4096  # bytes: an entry is a small JSON object
MAX_FILE = 1 << 20  # bytes hashed at most: a policy is at most 256 KiB, signers files small


class TrustError(EpistemicError, OSError):
    """The trust store, or a file to trust, cannot be read or written."""

    exit_status = EXIT_RECORD


@struct
class Entry:
    """One trusted file, as `epistemic policy trust` wrote it."""

    path: str  # the file's real path
    sha256: str  # of its bytes
    trusted: str  # when (UTC, ISO 8601)
    by: str  # the OS user who ran `epistemic policy trust`
    location: str  # the entry's own file

    def to_json(self) -> dict[str, str]:
        return {"path": self.path, "sha256": self.sha256, "trusted": self.trusted, "by": self.by}


def trust_folder(create: bool = True) -> Path | None:
    """The trust store's folder, made (0700) when missing; None when it cannot be."""
    state = os.environ.get("XDG_STATE_HOME")
    base = Path(state) if state and os.path.isabs(state) else Path.home() / ".local" / "state"
    folder = base / "epistemic" / "trusted"
    if not create:
        return folder
    try:  # every folder made here is private: the store says who put what in force
        for level in reversed([folder, *folder.parents][:3]):
            level.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError:
        return None
    return Path(os.path.realpath(folder)) if folder.is_dir() else None


def file_digest(path: Path) -> str:
    """The SHA-256 of a regular file's bytes (a FIFO, a device or a folder is refused)."""
    try:
        return hashlib.sha256(read_regular(path, MAX_FILE)).hexdigest()
    except OSError as error:
        raise TrustError(error.errno, f"{path}: {error.strerror}") from None


def _entry_name(real: str) -> str:
    return hashlib.sha256(os.fsencode(real)).hexdigest() + ".json"


def trust(path: Path, folder: Path) -> Entry:
    """Record that a human put the file at `path`, as its bytes are now, in force."""
    real = os.path.realpath(path)
    digest = file_digest(Path(real))
    entry = Entry(real, digest, now(), user(), str(folder / _entry_name(real)))
    data = json.dumps(entry.to_json(), ensure_ascii=False, indent=1).encode() + b"\n"
    try:
        atomic_write(folder / _entry_name(real), data, mode=0o600)
    except OSError as error:
        raise TrustError(error.errno, f"{folder}: cannot write: {error.strerror}") from None
    return entry


def trusted(path: str, sha256: str, folder: Path | None) -> Entry | None:
    """The entry that trusts the file at real path `path` with exactly these bytes, if any."""
    if folder is None:
        return None
    location = folder / _entry_name(path)
    try:
        data = json.loads(read_regular(location, MAX_ENTRY))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("path") != path or data.get("sha256") != sha256:
        return None
    when, by = data.get("trusted"), data.get("by")
    if not isinstance(when, str) or not isinstance(by, str):
        return None
    return Entry(path, sha256, when, by, str(location))
