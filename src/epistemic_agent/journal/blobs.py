"""Reading evidence blobs back for display (`show`, RATIONALE.md's diffs, `run --resume`).

A blob is shown only when it hashes to the SHA-256 its record names: a reader never presents
a swapped blob as the evidence. What cannot be shown is said, in words."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import TYPE_CHECKING

from ..core import struct

if TYPE_CHECKING:
    from typing import Any

_HEX = re.compile(r"[0-9a-f]{64}")


@struct
class Blob:
    """A blob as read: `data` when it could be read and checks out, else `problem`."""

    data: bytes | None
    problem: str | None = None
    truncated: bool = False  # the store kept only the first `kept` of `bytes` bytes

    @property
    def text(self) -> str:
        return (self.data or b"").decode("utf-8", "replace")


def read_blob(evidence: Path, ref: object, limit: int | None = None) -> Blob:
    """The blob an evidence ref names, from a session's evidence folder, checked against its
    hash (`limit`: read at most that many bytes, unchecked, for a preview)."""
    if not isinstance(ref, dict) or not isinstance(ref.get("sha256"), str):
        return Blob(None, "the record names no blob")
    digest = str(ref["sha256"])
    if not _HEX.fullmatch(digest):
        return Blob(None, f"the record's blob name {digest[:80]!r} is not a SHA-256")
    path = evidence / digest[:2] / digest
    try:
        with open(path, "rb") as handle:
            data = handle.read() if limit is None else handle.read(limit + 1)
    except FileNotFoundError:
        return Blob(None, f"blob {digest[:12]}… is missing from the evidence store")
    except OSError as error:
        return Blob(None, f"blob {digest[:12]}… cannot be read: {error.strerror or error}")
    truncated = _kept_less(ref)
    if limit is not None and len(data) > limit:
        return Blob(data[:limit], None, True)
    if hashlib.sha256(data).hexdigest() != digest:
        return Blob(None, f"blob {digest[:12]}… does not match its hash (it was changed)")
    return Blob(data, None, truncated)


def _kept_less(ref: dict[str, Any]) -> bool:
    kept, size = ref.get("kept"), ref.get("bytes")
    return type(kept) is int and type(size) is int and kept < size
