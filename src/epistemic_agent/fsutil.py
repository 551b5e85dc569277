"""Small file-system helpers shared by the record's writers."""

from __future__ import annotations

import os
from pathlib import Path


def make_unique(directory: Path, prefix: str = "", suffix: str = "") -> tuple[int, Path]:
    """Create a new empty file (O_EXCL) with a random name; like tempfile.mkstemp, cheaper to
    import (start-up time matters: `epistemic exec` runs once per command)."""
    while True:
        path = directory / f"{prefix}{os.urandom(8).hex()}{suffix}"
        try:
            return os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600), path
        except FileExistsError:
            continue


def atomic_write(target: Path, data: bytes, mode: int = 0o644) -> None:
    """Write beside the target and rename over it: a reader sees the old file or the new one."""
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, name = make_unique(target.parent, prefix=f".{target.name}.")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.chmod(name, mode)
        os.replace(name, target)
    except BaseException:
        Path(name).unlink(missing_ok=True)
        raise
