"""Where the record lives inside a workspace."""

from __future__ import annotations

from pathlib import Path

from .structs import struct

RECORD_DIR = ".epistemic"
REPORT_NAME = "RATIONALE.md"
PAGES_DIR = "report"


def is_protected(rel_path: str) -> bool:
    """Whether a workspace-relative path is part of the record, which no tool may touch."""
    first = rel_path.split("/", 1)[0]
    return first == RECORD_DIR or rel_path == REPORT_NAME


@struct
class Layout:
    """The files of one workspace's record."""

    workspace: Path

    @property
    def record(self) -> Path:
        return self.workspace / RECORD_DIR

    @property
    def journal(self) -> Path:
        return self.record / "journal.jsonl"

    @property
    def head(self) -> Path:
        return self.record / "head.json"

    @property
    def evidence(self) -> Path:
        return self.record / "evidence"

    @property
    def scratch(self) -> Path:
        return self.record / "tmp"

    @property
    def pages(self) -> Path:
        return self.record / PAGES_DIR

    @property
    def checkpoint(self) -> Path:
        return self.pages / "checkpoint.json"

    @property
    def report(self) -> Path:
        return self.workspace / REPORT_NAME

    @classmethod
    def find(cls, target: Path) -> Layout:
        """Accept a workspace, its `.epistemic` folder or its journal file."""
        target = target.resolve()
        if target.is_file() or target.name == "journal.jsonl":
            target = target.parent
        if target.name == RECORD_DIR:
            target = target.parent
        return cls(target)
