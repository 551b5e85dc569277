"""Evidence: the complete output of each call, content-addressed under `.epistemic/evidence`."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import TYPE_CHECKING

from ..core import make_unique, struct

if TYPE_CHECKING:
    from typing import Any

DEFAULT_CAP = 10 * 1024 * 1024
_BLOCK = 1 << 20


@struct
class EvidenceRef:
    """A stored blob: its SHA-256, the size of the original, and how many bytes were kept."""

    sha256: str
    size: int
    kept: int

    def to_json(self) -> dict[str, Any]:
        return {"sha256": self.sha256, "bytes": self.size, "kept": self.kept}


@struct
class EvidenceStore:
    """A folder of blobs named by their SHA-256 (the first two hex digits are a subfolder)."""

    root: Path
    cap: int = DEFAULT_CAP

    def path_of(self, sha256: str) -> Path:
        return self.root / sha256[:2] / sha256

    def adopt(self, source: Path) -> EvidenceRef | None:
        """Take an output file into the store: the bytes one read of it finds (up to the cap),
        hashed as they are copied to a blob of their own, so the blob is exactly what its
        reference says even if something still writes the file. The file is removed; None
        (and the file left for reuse) when it is empty."""
        try:
            if source.stat().st_size == 0:  # nothing to keep; the caller may reuse the file
                return None
        except FileNotFoundError:  # the command deleted its own capture file
            return None
        copied = copy_of(source, self.cap)
        source.unlink(missing_ok=True)
        if copied is None:
            return None
        if not copied.kept:
            copied.path.unlink(missing_ok=True)
            return None
        self._place(copied.path, copied.sha256)
        size = copied.size if copied.kept >= self.cap else copied.kept  # cut at the cap only
        return EvidenceRef(copied.sha256, size, copied.kept)

    def put(self, data: bytes) -> EvidenceRef | None:
        """Store bytes produced in memory (a diff, a file read); None when empty."""
        if not data:
            return None
        kept = data[: self.cap]
        digest = hashlib.sha256(kept).hexdigest()
        target = self.path_of(digest)
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            handle, name = make_unique(target.parent, prefix=".tmp-", mode=0o644)
            with os.fdopen(handle, "wb") as out:
                out.write(kept)
            os.replace(name, target)
        return EvidenceRef(digest, len(data), len(kept))

    def _place(self, source: Path, digest: str) -> None:
        target = self.path_of(digest)
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.exists():
            source.unlink()
        else:
            os.replace(source, target)


@struct
class Copy:
    """What one read of a file found: a private copy of it, its SHA-256, how many bytes it
    holds, and the file's size when the read ended (larger when something still writes)."""

    path: Path
    sha256: str
    kept: int
    size: int


def copy_of(source: Path, limit: int | None = None) -> Copy | None:
    """Copy what `source` holds now (up to `limit` bytes) to a new file beside it, that no
    one else writes; None when it does not exist."""
    try:
        handle = source.open("rb")
    except FileNotFoundError:
        return None
    digest = hashlib.sha256()
    kept = 0
    with handle:
        fd, name = make_unique(source.parent, prefix=".tmp-", mode=0o644)
        with os.fdopen(fd, "wb") as out:
            while limit is None or kept < limit:
                block = handle.read(_BLOCK if limit is None else min(_BLOCK, limit - kept))
                if not block:
                    break
                digest.update(block)
                out.write(block)
                kept += len(block)
        size = max(kept, os.fstat(handle.fileno()).st_size)
    return Copy(Path(name), digest.hexdigest(), kept, size)
