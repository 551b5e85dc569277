"""A workspace's record as the journal tests reach it: the journal, its head anchor, and the
SHA-256 (hex) that chains its lines.

Imported as `from journalfiles import ...`; pytest puts tests/ on the path (pyproject's
`pythonpath`)."""

from __future__ import annotations

import hashlib
from pathlib import Path


def sha(body: bytes) -> str:
    return hashlib.sha256(body).hexdigest()


def journal_of(ws: Path) -> Path:
    return ws / ".epistemic" / "journal.jsonl"


def anchor_of(ws: Path) -> Path:
    return ws / ".epistemic" / "head.json"
