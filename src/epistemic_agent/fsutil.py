"""Small file-system helpers shared by the record's writers."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path


def atomic_write(target: Path, data: bytes, mode: int = 0o644) -> None:
    """Write beside the target and rename over it: a reader sees the old file or the new one."""
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, name = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.chmod(name, mode)
        os.replace(name, target)
    except BaseException:
        Path(name).unlink(missing_ok=True)
        raise
