"""What a check after the fact finds: one problem at a place in the journal, and a linted
session's findings and notes."""

from __future__ import annotations

from typing import Any

from ..core import field, struct


@struct
class Finding:
    """One problem: the check's id, what it found, and where (call seq, journal line)."""

    check: str
    message: str
    seq: int | None = None
    line: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {"seq": self.seq, "line": self.line, "check": self.check, "message": self.message}


@struct(frozen=False)
class LintResult:
    """Every finding in journal order, the notes, how many calls were read, and how many
    lines of each newer format version could not be re-checked."""

    findings: list[Finding] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    calls: int = 0
    unchecked: dict[int, int] = field(default_factory=dict)  # newer version -> lines

    @property
    def status(self) -> str:
        """findings; else incomplete (lines were not re-checked); else clean."""
        return "findings" if self.findings else "incomplete" if self.unchecked else "clean"
