"""Where the record lives inside a workspace: the one place that computes its paths.

A workspace's record holds one folder per session, `.epistemic/sessions/<id>/`, each with its
own journal, head anchor, evidence, seals, report pages, approval requests and capture files
(a session's folder is a whole record: it can be verified, exported or salvaged on its own).
A workspace written before sessions had folders keeps its one session in `.epistemic/` itself
(the legacy layout): a `Layout` without a session folder names those paths, so every reader
and writer goes on reading and continuing it. What belongs to the workspace rather than to a
session stays in `.epistemic/`: the classifier's cache.
"""

from __future__ import annotations

import contextlib
import os
import re
from pathlib import Path

from .saferead import read_regular

RECORD_DIR = ".epistemic"
SESSIONS_DIR = "sessions"  # .epistemic/sessions/<id>/: one folder per session
JOURNAL_NAME = "journal.jsonl"
ANCHOR_NAME = "head.json"
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
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        handle = os.open(record / ".gitignore", flags, 0o644)
    except (FileExistsError, FileNotFoundError, NotADirectoryError):
        return
    try:
        os.write(handle, GITIGNORE)
    finally:
        os.close(handle)


#: Where older versions kept copies of earlier reports: the report was swapped with one of
#: them and the one it displaced rewritten in place later. Nothing writes them now; a
#: session that opens a workspace removes those an older version left (`drop_old_spares`).
OLD_SPARES = ("RATIONALE.md.previous", "RATIONALE.md.older")


def drop_old_spares(record: Path) -> None:
    """Remove the report copies an older version kept in the record folder: they are not
    the report, and nothing keeps them up to date any more."""
    for name in OLD_SPARES:
        with contextlib.suppress(OSError):  # none there (or not ours to remove): nothing to do
            os.unlink(record / name)


def is_session_id(name: str) -> bool:
    """Whether a folder name can be a session's: lowercase hex, as the header's ids are."""
    return 8 <= len(name) <= 64 and all(c in "0123456789abcdef" for c in name)


def discover(start: Path) -> tuple[Path, str | None]:
    """The workspace a folder belongs to, found as git finds a repository: the nearest folder
    upwards with a record (`.epistemic/`), not above the git repository the folder is in (a
    record above it is another project's); else that repository's root; else the folder
    itself. The search stops at a file system's edge; a folder of a record is taken as it is.
    With it, why it is not `start` (None when it is)."""
    start = Path(os.path.realpath(start))
    if RECORD_DIR in start.parts:  # a record's own folder (a session's): named on purpose
        return start, None
    chain = [start]
    try:
        device = os.stat(start).st_dev
        for parent in start.parents:
            if os.stat(parent).st_dev != device:
                break
            chain.append(parent)
    except OSError:
        return start, None
    root = next((folder for folder in chain if os.path.lexists(folder / ".git")), None)
    if root is not None:
        chain = chain[: chain.index(root) + 1]
    found = next((folder for folder in chain if (folder / RECORD_DIR).is_dir()), None)
    if found is not None and found != start:
        return found, f"its record, {found / RECORD_DIR}, is above {start}"
    if found is None and root is not None and root != start:
        return root, f"the root of the git repository {start} is in"
    return start, None


def workspace_of(folder: Path) -> Path | None:
    """The workspace a record folder belongs to: `.epistemic/` or `.epistemic/sessions/<id>/`
    (None for a folder that is neither: a damaged copy, an unpacked bundle)."""
    if folder.name == RECORD_DIR:
        return folder.parent
    if folder.parent.name == SESSIONS_DIR and folder.parent.parent.name == RECORD_DIR:
        return folder.parent.parent.parent
    return None


class Layout:
    """The files of one session's record in a workspace (paths computed once: they are used on
    every call). `folder` is the session's folder; None: the legacy `.epistemic/` itself."""

    def __init__(self, workspace: Path, folder: Path | None = None) -> None:
        self.workspace = workspace
        self.record = workspace / RECORD_DIR
        self.sessions = self.record / SESSIONS_DIR
        self.folder = self.record if folder is None else folder
        self.journal = self.folder / JOURNAL_NAME
        self.head = self.folder / ANCHOR_NAME
        self.evidence = self.folder / "evidence"
        self.seals = self.folder / "seals"
        self.scratch = self.folder / "tmp"
        self.pending = self.folder / "pending"  # approval requests and answers (approval.py)
        self.pages = self.folder / PAGES_DIR
        self.checkpoint = self.pages / "checkpoint.json"
        self._report: Path | None = None
        self.effects_cache = self.record / "effects-cache.json"

    @classmethod
    def of_session(cls, workspace: Path, session_id: str) -> Layout:
        """A session's layout in the folder layout (its folder need not exist yet)."""
        return cls(workspace, workspace / RECORD_DIR / SESSIONS_DIR / session_id)

    @property
    def legacy(self) -> bool:
        """Whether this is a workspace's one session of the legacy layout."""
        return self.folder == self.record

    @property
    def session_folder_id(self) -> str | None:
        """The id the session's folder is named by (None for the legacy layout)."""
        return None if self.legacy else self.folder.name

    def relative(self, path: Path) -> str:
        """A path of the record as a link from the workspace (where RATIONALE.md is)."""
        return path.relative_to(self.workspace).as_posix()

    @property
    def report(self) -> Path:
        """RATIONALE.md, or RATIONALE.epistemic.md when RATIONALE.md is the workspace's own
        (`report_path`); chosen once per Layout."""
        if self._report is None:
            self._report = report_path(self.workspace)
        return self._report

    def client_settings(self) -> tuple[Path, ...]:
        """Where an agent client's own settings live in the workspace (`epistemic init`
        writes them): what gives it back a shell, so no act may change it."""
        return tuple(self.workspace / name for name in CLIENT_SETTINGS)

    def __repr__(self) -> str:
        return f"Layout({self.workspace!r}, {self.folder!r})"


# Where the report is written: RATIONALE.md, unless the workspace already has a RATIONALE.md
# of its own. A user's file is never overwritten (docs/report.md, "Where the report is").
#
# - `RATIONALE.epistemic.md` exists: the report stays there (it was chosen before);
# - no `RATIONALE.md`, or one this renderer wrote: `RATIONALE.md`;
# - a `RATIONALE.md` this renderer did not write (or a link, a folder): `RATIONALE.epistemic.md`.
#
# "Written by this renderer" is read from the file's two marker lines, which `render` writes
# and nothing else does: its title line (`# RATIONALE`) first, and last the footer that names
# the journal's head (`_Journal head: `<hash>` ... `epistemic verify` ..._`).

TITLE = b"# RATIONALE\n"
FOOTER = re.compile(rb"\n_Journal head: `[0-9a-f]{64}` .*`epistemic verify[^\n]*_\n\Z")
PEEK = 4096


def report_path(workspace: Path) -> Path:
    """The file the report of this workspace goes to (see the comment above)."""
    own = workspace / OWN_REPORT_NAME
    if os.path.lexists(own):
        return own
    usual = workspace / REPORT_NAME
    if not os.path.lexists(usual) or is_ours(usual):
        return usual
    return own


def is_ours(path: Path) -> bool:
    """Whether a regular file (not followed through a link) was written by this renderer."""
    try:
        if read_regular(path, len(TITLE), follow=False, whole=False) != TITLE:
            return False  # a folder, a FIFO, a link, someone else's file: not a report
        start = max(os.lstat(path).st_size - PEEK, 0)
        tail = read_regular(path, PEEK, follow=False, whole=False, offset=start)
    except OSError:
        return False
    return FOOTER.search(tail) is not None


def moved_note(workspace: Path) -> str | None:
    """What to tell the user when the report is about to be written beside their own
    RATIONALE.md for the first time; None otherwise."""
    own = workspace / OWN_REPORT_NAME
    if report_path(workspace) != own or os.path.lexists(own):
        return None
    return (
        f"{workspace / REPORT_NAME} is not an epistemic report (the workspace's own file): it "
        f"is left as it is, and the report is written to {own}"
    )
