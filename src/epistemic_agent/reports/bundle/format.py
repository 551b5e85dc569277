"""The audit bundle's format: its member names, and the helpers that read and hash them
(docs/audit-bundle.md)."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import TYPE_CHECKING

from ...core import struct

if TYPE_CHECKING:
    from typing import BinaryIO

FORMAT = "epistemic-audit-bundle"
FORMAT_VERSION = 1
MANIFEST = "manifest.json"
JOURNAL = ".epistemic/journal.jsonl"
ANCHOR = ".epistemic/head.json"
EVIDENCE = ".epistemic/evidence/"
SEALS = ".epistemic/seals/"
PAGES = ".epistemic/report/"
REPORT = "RATIONALE.md"
HTML = "report.html"
POLICY = "policy/"
BLOCK = 1 << 20
POLICY_CAP = 1 << 20  # policy files are small (policy_file.MAX_BYTES); a bigger one is not it
HEX64 = re.compile(r"[0-9a-f]{64}")


@struct
class Entry:
    """A file to put in the bundle: its name there, its role, and where its bytes come from."""

    path: str
    role: str
    source: Path | None = None
    data: bytes | None = None


def small_file(path: Path, cap: int = POLICY_CAP) -> bytes | None:
    try:
        with path.open("rb") as handle:
            data = handle.read(cap + 1)
    except OSError:
        return None
    return data if len(data) <= cap else None


def sha256_stream(stream: BinaryIO, limit: int, sink: BinaryIO | None = None) -> tuple[str, int]:
    """Hash a stream, reading at most `limit + 1` bytes (so a lying size is seen, not obeyed)."""
    digest, count = hashlib.sha256(), 0
    while count <= limit:
        block = stream.read(min(BLOCK, limit + 1 - count))
        if not block:
            break
        digest.update(block)
        count += len(block)
        if sink is not None:
            sink.write(block)
    return digest.hexdigest(), count
