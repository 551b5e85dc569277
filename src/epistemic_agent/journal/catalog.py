"""The sessions of a workspace: which there are, what each was, and which a command means.

Listing is cheap on purpose (it runs at every `exec`): each session's header line, its head
anchor's call count and the tail of its journal, never the whole file. A session is

- `open` until the process that owns it (`run`, `repl`, `mcp`) closes it with a `closed`
  record; sessions that `exec` and `tool` start are never closed, and a `run` that was
  killed leaves its session open (whoever continues it closes its calls);
- `finished`, `interrupted`, `max-steps`, `rejections`, `provider-error`: closed, after the
  agent loop last stopped for that reason; `closed` when it never ran one (`mcp`);
- `torn` when its journal ends inside a line (a crash mid-write): still open, and the next
  writer that continues it closes the torn line.
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from ..core import (
    ANCHOR_NAME,
    JOURNAL_NAME,
    RECORD_DIR,
    SESSIONS_DIR,
    Layout,
    UsageError,
    discover,
    is_session_id,
    one_line,
    struct,
    workspace_of,
)
from .log import decode

if TYPE_CHECKING:
    from typing import Any

TAIL = 64 * 1024  # how much of a journal's end is read for its status
NEW = "new"  # `--session new`: start a new session


class UnknownSession(UsageError):
    """`--session` names no session of the workspace, or more than one."""


@struct
class Entry:
    """One session of a workspace, as the listing sees it."""

    layout: Layout
    header: dict[str, Any]
    calls: int
    status: str

    @property
    def id(self) -> str:
        found = self.header.get("session")
        folder = self.layout.session_folder_id
        return folder or (found if isinstance(found, str) else "")

    @property
    def owned(self) -> bool:
        """Whether a process owns the session (`run`, `repl`, `mcp`, the demo): it ends it,
        and nothing else continues it unless named (an agent's session is not a human's)."""
        return "model" in self.header or self.header.get("mode") in ("mcp", "repl")

    @property
    def started(self) -> str:
        started = self.header.get("started")
        return started if isinstance(started, str) else ""

    def describe(self) -> str:
        """The session in a few words, on one line: its id's first 12 digits, when it started,
        and its task, else its client or model, else what started it."""
        row = self.to_json()
        if row["task"]:
            task = " ".join(row["task"].split())
            what = f"task {task[:57] + '…' if len(task) > 60 else task!r}"
        elif row["client"] or row["model"]:
            what = f"client {row['client']}" if row["client"] else f"model {row['model']}"
        else:
            what = "exec/tool"
        calls = f"{self.calls} call" + ("" if self.calls == 1 else "s")
        return one_line(f"{self.id[:12]} (started {self.started or '?'}, {what}, {calls})")

    def to_json(self) -> dict[str, Any]:
        """`epistemic sessions --json`: one object per session (keys are only added)."""
        task, model = self.header.get("task"), self.header.get("model")
        client = self.header.get("mcp_client")
        return {
            "id": self.id,
            "started": self.started or None,
            "task": task if isinstance(task, str) else None,
            "model": model if isinstance(model, str) else None,
            "client": _client_name(client),
            "mode": self.header.get("mode") if isinstance(self.header.get("mode"), str) else None,
            "calls": self.calls,
            "status": self.status,
            "journal": str(self.layout.journal),
            "legacy": self.layout.legacy,
        }


def _client_name(client: object) -> str | None:
    if isinstance(client, dict):
        name, version = client.get("name"), client.get("version")
        if isinstance(name, str):
            return f"{name} {version}" if isinstance(version, str) else name
    return None


def listing(workspace: Path) -> list[Entry]:
    """Every session of a workspace, oldest first (the legacy journal counts as one)."""
    layouts = []
    if _has_journal(workspace / RECORD_DIR):
        layouts.append(Layout(workspace))
    folder = workspace / RECORD_DIR / SESSIONS_DIR
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        names = []
    for name in names:
        if is_session_id(name) and _has_journal(folder / name):
            layouts.append(Layout.of_session(workspace, name))
    entries = [_entry(layout) for layout in layouts]
    return sorted(entries, key=lambda entry: (entry.started, entry.id))


def _entry(layout: Layout) -> Entry:
    head, tail, torn = _ends(layout.journal)
    header = head if head.get("kind") == "session" else {}
    status = "torn" if torn else _status(tail)
    return Entry(layout, header, _calls(layout, tail), status)


def _ends(journal: Path) -> tuple[dict[str, Any], list[dict[str, Any]], bool]:
    """The first record, the last complete records (in order), and whether the end is torn."""
    try:
        with open(journal, "rb") as file:
            first = file.readline()
            size = os.fstat(file.fileno()).st_size
            file.seek(max(0, size - TAIL))
            end = file.read()
    except OSError:
        return {}, [], False
    torn = bool(end) and not end.endswith(b"\n")
    lines = end.split(b"\n")[1 if size > TAIL else 0 : -1]
    tail = [record for line in lines if (record := decode(line)) is not None]
    return decode(first.rstrip(b"\n")) or {}, tail, torn


def _status(tail: list[dict[str, Any]]) -> str:
    if not tail or tail[-1].get("kind") != "closed":
        return "open"
    stop = tail[-1].get("stop")
    return stop if isinstance(stop, str) and stop else "closed"


def _calls(layout: Layout, tail: list[dict[str, Any]]) -> int:
    """The session's last call number: from the tail, else its head anchor."""
    seqs = [r.get("seq") for r in tail if r.get("kind") in ("call", "rejected")]
    numbers = [seq for seq in seqs if type(seq) is int]
    if numbers:
        return max(numbers)
    try:
        anchored = json.loads((layout.folder / ANCHOR_NAME).read_bytes()).get("last_seq")
    except (OSError, ValueError, AttributeError):
        anchored = None
    return anchored if type(anchored) is int and anchored >= 0 else 0


def pick(workspace: Path, choice: str | None) -> Entry | None:
    """The session `choice` names (an id, or a prefix only one id has); None: the newest
    session (None when the workspace has none)."""
    entries = listing(workspace)
    if choice is None:
        return entries[-1] if entries else None
    return named(entries, choice, workspace)


def named(entries: list[Entry], choice: str, workspace: Path) -> Entry:
    wanted = choice.strip().lower()
    matches = [entry for entry in entries if wanted and entry.id.startswith(wanted)]
    exact = [entry for entry in matches if entry.id == wanted]
    if len(exact) == 1 or len(matches) == 1:
        return (exact or matches)[0]
    if not matches:
        known = ", ".join(entry.id[:12] for entry in entries[-5:]) or "none"
        raise UnknownSession(
            f"no session {choice!r} in {workspace} (its sessions: {known}; "
            "`epistemic sessions` lists them)"
        )
    ids = ", ".join(entry.id[:12] for entry in matches)
    raise UnknownSession(f"session {choice!r} is ambiguous in {workspace}: {ids}")


def for_writing(workspace: Path, choice: str | None, default_new: bool) -> Layout:
    """The session a writer appends to: `new` (or, with `default_new`, nothing named) starts
    one; an id continues that session; nothing named continues the newest open session that
    `exec` or `tool` started (never one a `run`, `repl` or `mcp` owns, open because it runs
    still or was killed), or starts one when there is none. Call it under `choosing`."""
    wanted = choice.strip().lower() if choice is not None else None
    if wanted == NEW or (wanted is None and default_new):
        return new_layout(workspace)
    entries = listing(workspace)
    if wanted is not None:
        return named(entries, wanted, workspace).layout
    open_ones = [e for e in entries if e.status in ("open", "torn") and not e.owned]
    if open_ones:
        return open_ones[-1].layout
    return new_layout(workspace)


def new_layout(workspace: Path) -> Layout:
    """Where a new session's record goes: `.epistemic/` itself for a workspace's first session
    (where every session was before there were several), `.epistemic/sessions/<id>/` after."""
    if not _has_journal(workspace / RECORD_DIR):
        return Layout(workspace)
    return Layout.of_session(workspace, os.urandom(16).hex())


def _has_journal(folder: Path) -> bool:
    try:
        return (folder / JOURNAL_NAME).stat().st_size > 0
    except OSError:
        return False


@contextmanager
def choosing(workspace: Path) -> Iterator[None]:
    """Hold the workspace's session lock: two processes that both find no open session must
    not both start one (the second continues the first's)."""
    folder = workspace / RECORD_DIR / SESSIONS_DIR
    folder.mkdir(parents=True, exist_ok=True)
    fd = os.open(folder / ".lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def by_default(target: Path, session: str | None) -> list[Entry]:
    """The sessions a reader chooses among by default: every session of the workspace `target`
    names (or of its `.epistemic` folder), oldest first, when there are several and `session`
    names none; else [] (the path or `session` says which). Readers read the last: the
    newest, as `find_layout` does."""
    if session is not None:
        return []
    target = target.resolve()
    if target.is_file() or target.name == JOURNAL_NAME:
        return []
    owner = workspace_of(target)
    if owner is not None and target.name != RECORD_DIR:
        return []  # a session's own folder
    if owner is None and (target / JOURNAL_NAME).is_file():
        return []  # a folder holding one journal: a damaged copy, an unpacked bundle
    entries = listing(owner or target)
    return entries if len(entries) > 1 else []


def find_layout(target: Path, session: str | None = None) -> Layout:
    """Accept a workspace, its `.epistemic` folder, a session's folder or a journal file.
    A workspace names its newest session, or the one `session` names (an id or a unique
    prefix: `UnknownSession` when none or several match)."""
    target = target.resolve()
    journal = target.is_file() or target.name == JOURNAL_NAME
    if journal:
        target = target.parent
    owner = workspace_of(target)
    if owner is not None and (journal or target.name != RECORD_DIR):
        if session is None:  # this very journal (the legacy one, or a session's)
            return Layout(owner, None if target.name == RECORD_DIR else target)
        target = owner
    elif owner is not None:
        target = owner
    elif target.is_dir() and not (target / RECORD_DIR).is_dir():  # a folder of a workspace
        target = discover(target)[0]
    entry = pick(target, session)
    return Layout(target) if entry is None else entry.layout
