"""The journal's records, typed: every record kind with its fields (type, whether required,
closed values, meaning), shared by the writer, which checks each record against it before
anything is written, by readers, which parse through it, and by docs/journal-format.md, whose
field tables are generated from it (`python -m epistemic_agent.cli.journal_docs`).

`check` (writers: a violation is a programming error) and `parse` (readers: a typed view, or
`Unknown`, never an exception) live in parse.py; the kinds in header.py, calls.py,
approvals.py and agent.py, gathered in registry.py; the closed value sets in values.py."""

from __future__ import annotations

from .parse import Known, RecordError, Unknown, check, parse, problems
from .registry import CHAIN, KINDS, NESTED
from .types import Field, Kind
from .values import RecordKind

__all__ = [
    "CHAIN",
    "KINDS",
    "NESTED",
    "Field",
    "Kind",
    "Known",
    "RecordError",
    "RecordKind",
    "Unknown",
    "check",
    "parse",
    "problems",
]
