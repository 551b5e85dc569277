"""Where the record lives inside a workspace."""

from __future__ import annotations

from pathlib import Path

RECORD_DIR = ".epistemic"
REPORT_NAME = "RATIONALE.md"
POLICY_NAME = "epistemic.toml"  # the workspace's policy: the agent it governs may not change it
PAGES_DIR = "report"
CLIENT_SETTINGS = (".claude", ".codex", ".mcp.json", ".cursor", ".vscode/mcp.json")


def is_guarded(rel_path: str) -> bool:
    """Whether a workspace-relative path may not be written by any act: the record, or the
    policy (which may be read)."""
    return is_protected(rel_path) or rel_path == POLICY_NAME


def is_protected(rel_path: str) -> bool:
    """Whether a workspace-relative path is part of the record, which no tool may touch."""
    first = rel_path.split("/", 1)[0]
    return first == RECORD_DIR or rel_path == REPORT_NAME


class Layout:
    """The files of one workspace's record (paths computed once: they are used on every call)."""

    def __init__(self, workspace: Path) -> None:
        self.workspace = workspace
        self.record = workspace / RECORD_DIR
        self.journal = self.record / "journal.jsonl"
        self.head = self.record / "head.json"
        self.evidence = self.record / "evidence"
        self.scratch = self.record / "tmp"
        self.pending = self.record / "pending"  # approval requests and answers (approval.py)
        self.pages = self.record / PAGES_DIR
        self.checkpoint = self.pages / "checkpoint.json"
        self.report = workspace / REPORT_NAME
        self.spare = self.record / "RATIONALE.md.previous"  # see fsutil.exchange_write
        self.older = self.record / "RATIONALE.md.older"  # a second spare: see the same

    def client_settings(self) -> tuple[Path, ...]:
        """Where an agent client's own settings live in the workspace (`epistemic init`
        writes them): what gives it back a shell, so no act may change it."""
        return tuple(self.workspace / name for name in CLIENT_SETTINGS)

    @property
    def spares(self) -> tuple[Path, Path]:
        return self.spare, self.older

    def __repr__(self) -> str:
        return f"Layout({self.workspace!r})"

    @classmethod
    def find(cls, target: Path) -> Layout:
        """Accept a workspace, its `.epistemic` folder or its journal file."""
        target = target.resolve()
        if target.is_file() or target.name == "journal.jsonl":
            target = target.parent
        if target.name == RECORD_DIR:
            target = target.parent
        return cls(target)
