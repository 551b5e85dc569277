"""Evidence: the complete output of each call, content-addressed under `.epistemic/evidence`."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.fsutil import make_unique
from ..core.structs import struct

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
        """Take a finished output file into the store (up to the cap); None when it is empty."""
        try:
            size = source.stat().st_size
        except FileNotFoundError:  # the command deleted its own capture file
            return None
        if size == 0:  # nothing to keep; the caller may reuse the empty file
            return None
        if size <= self.cap:
            digest = _hash_file(source, size)
            self._place(source, digest)
            return EvidenceRef(digest, size, size)
        head = self._copy_head(source)
        source.unlink()
        digest = _hash_file(head, self.cap)
        self._place(head, digest)
        return EvidenceRef(digest, size, self.cap)

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

    def _copy_head(self, source: Path) -> Path:
        handle, name = make_unique(source.parent, prefix=".tmp-", mode=0o644)
        remaining = self.cap
        with source.open("rb") as src, os.fdopen(handle, "wb") as out:
            while remaining:
                block = src.read(min(_BLOCK, remaining))
                if not block:
                    break
                out.write(block)
                remaining -= len(block)
        return Path(name)


def _hash_file(path: Path, size: int) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        remaining = size
        while remaining:
            block = handle.read(min(_BLOCK, remaining))
            if not block:
                break
            digest.update(block)
            remaining -= len(block)
    return digest.hexdigest()
