"""Small file-system helpers shared by the record's writers (kept cheap: they run per call)."""

from __future__ import annotations

import os
from pathlib import Path

_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL


def make_unique(
    directory: Path, prefix: str = "", suffix: str = "", mode: int = 0o600
) -> tuple[int, Path]:
    """Create a new empty file (O_EXCL) with a random name; like tempfile.mkstemp, cheaper to
    import (start-up time matters: `epistemic exec` runs once per command)."""
    while True:
        path = directory / f"{prefix}{os.urandom(8).hex()}{suffix}"
        try:
            return os.open(path, _CREATE, mode), path
        except FileExistsError:
            continue


def atomic_write(target: Path, data: bytes, mode: int | None = None) -> None:
    """Write beside the target and rename over it: a reader sees the old file or the new one.

    Without `mode` the file is created 0644 (less the umask); with it, exactly that mode.
    """
    try:
        handle, name = make_unique(target.parent, prefix=f".{target.name}.", mode=0o644)
    except FileNotFoundError:
        target.parent.mkdir(parents=True, exist_ok=True)
        handle, name = make_unique(target.parent, prefix=f".{target.name}.", mode=0o644)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        if mode is not None:
            os.chmod(name, mode)
        os.replace(name, target)
    except BaseException:
        name.unlink(missing_ok=True)
        raise
