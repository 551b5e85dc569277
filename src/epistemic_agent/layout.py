"""Where the record lives inside a workspace."""

from __future__ import annotations

from pathlib import Path

RECORD_DIR = ".epistemic"
REPORT_NAME = "RATIONALE.md"
#: Where the report goes when the workspace has a RATIONALE.md of its own (report_path).
OWN_REPORT_NAME = "RATIONALE.epistemic.md"
REPORT_NAMES = (REPORT_NAME, OWN_REPORT_NAME)
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
    return first == RECORD_DIR or rel_path in REPORT_NAMES


GITIGNORE = b"# the session's record (epistemic-agent): never committed with the work\n*\n"


def ignore_record(record: Path) -> None:
    """Give the record folder a `.gitignore` holding `*`, unless it has one: `git add -A` in the
    workspace then stages nothing of the journal, its evidence or its captures. The session
    writes it (acts cannot see the record folder); a `.gitignore` already there is left as is."""
    import os

    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        handle = os.open(record / ".gitignore", flags, 0o644)
    except (FileExistsError, FileNotFoundError, NotADirectoryError):
        return
    try:
        os.write(handle, GITIGNORE)
    finally:
        os.close(handle)


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
        self._report: Path | None = None
        self.spare = self.record / "RATIONALE.md.previous"  # see fsutil.exchange_write
        self.older = self.record / "RATIONALE.md.older"  # a second spare: see the same

    @property
    def report(self) -> Path:
        """RATIONALE.md, or RATIONALE.epistemic.md when RATIONALE.md is the workspace's own
        (report_path.py); chosen once per Layout."""
        if self._report is None:
            from .report_path import report_path

            self._report = report_path(self.workspace)
        return self._report

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
