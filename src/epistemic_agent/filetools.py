"""The file tools' I/O: the checks that need the disk, and the reads, writes and edits."""

from __future__ import annotations

import os
from pathlib import Path

from .fsutil import atomic_write
from .gate import Call, Rejected
from .layout import is_guarded, is_protected
from .structs import struct


@struct
class FileOutcome:
    """What a file tool did: success, a one-line outcome, text for the caller, bytes to keep."""

    ok: bool
    outcome: str
    text: str
    evidence: bytes


def precheck(call: Call, workspace: Path) -> Rejected | None:
    """Checks the pure gate cannot make: symlinks that leave the workspace, edit preconditions."""
    assert call.path is not None
    target = workspace / call.path
    real = Path(os.path.realpath(target))
    root = Path(os.path.realpath(workspace))
    if real != root and root not in real.parents:
        return _refuse(
            call,
            "path-outside-workspace",
            f"{call.path!r} resolves to {str(real)!r}, outside the workspace.",
        )
    rel = real.relative_to(root).as_posix()
    if is_protected(rel) or (call.tool != "read_file" and is_guarded(rel)):
        return _refuse(
            call,
            "path-protected",
            f"{call.path!r} leads into the session's record; it is not yours to touch.",
        )
    if call.tool != "str_replace_edit":
        return None
    try:
        if not target.is_file():
            return _refuse(
                call, "file-missing", f"{call.path!r} does not exist; create it with write_file."
            )
        count = _read_text(target).count(call.args["old"])
    except OSError:  # a name the file system refuses, a file it cannot read: the edit says so
        return None
    if count != 1:
        where = "does not occur" if count == 0 else f"occurs {count} times"
        return _refuse(
            call,
            "old-not-unique",
            f"`old` {where} in {call.path!r}; it must occur exactly once. "
            "Include more surrounding lines to make it unique.",
        )
    return None


def _refuse(call: Call, rule: str, message: str) -> Rejected:
    return Rejected(rule, message, call.tool, call.act, call.args)


def run_file_tool(call: Call, workspace: Path, limit: int) -> FileOutcome:
    """Run a file tool; what the file system refuses (a name too long for it, a folder where
    a file should be, no permission) is a failed outcome, never an exception."""
    assert call.path is not None
    target = workspace / call.path
    verb = {"read_file": "read", "write_file": "write"}.get(call.tool, "edit")
    try:
        if call.tool == "read_file":
            return _read(call, target, limit)
        if call.tool == "write_file":
            return _write(call.path, target, str(call.args["content"]))
        return _edit(call, target)
    except OSError as error:
        reason = error.strerror or str(error)
        return FileOutcome(False, f"{verb} failed: {reason}", f"{verb} failed: {reason}", b"")


def _read(call: Call, target: Path, limit: int) -> FileOutcome:
    try:
        data = target.read_bytes()
    except FileNotFoundError:
        return FileOutcome(False, f"no such file: {call.path}", f"no such file: {call.path}", b"")
    except (IsADirectoryError, PermissionError) as error:
        return FileOutcome(False, error.strerror or str(error), str(error), b"")
    if b"\x00" in data[:8192]:
        note = f"binary file, {len(data)} bytes; not shown"
        return FileOutcome(True, note, note, b"")
    lines = data.decode("utf-8", "replace").splitlines(keepends=True)
    start = int(call.args.get("start_line", 1))
    end = int(call.args.get("end_line", len(lines)))
    if lines and start > len(lines):
        note = f"{call.path} has only {len(lines)} line(s); nothing from line {start} on"
        return FileOutcome(False, note, note, b"")
    chosen = "".join(lines[start - 1 : end])
    text = chosen if len(chosen) <= limit else _cut(chosen, limit)
    shown = f"lines {start}-{min(end, len(lines))} of {len(lines)}"
    return FileOutcome(True, f"read {call.path}: {shown}", text, chosen.encode("utf-8"))


def _cut(text: str, limit: int) -> str:
    half = limit // 2
    return (
        text[:half] + f"\n[... {len(text) - 2 * half} characters cut; read a line range "
        "...]\n" + text[-half:]
    )


def _write(path: str, target: Path, content: str) -> FileOutcome:
    before = _read_text(target) if target.is_file() else None
    try:
        _atomic_write(target, content)
    except OSError as error:
        return FileOutcome(False, f"write failed: {error.strerror}", str(error), b"")
    verb = "created" if before is None else "replaced"
    size = len(content.encode("utf-8", "surrogateescape"))
    diff = _diff(path, before or "", content)
    return FileOutcome(True, f"{verb} {path} ({size} bytes)", f"{verb} {path}", diff)


def _edit(call: Call, target: Path) -> FileOutcome:
    assert call.path is not None
    before = _read_text(target)
    after = before.replace(str(call.args["old"]), str(call.args["new"]), 1)
    try:
        _atomic_write(target, after)
    except OSError as error:
        return FileOutcome(False, f"edit failed: {error.strerror}", str(error), b"")
    diff = _diff(call.path, before, after)
    lines = diff.splitlines()[2:]
    added = sum(1 for line in lines if line.startswith(b"+"))
    removed = sum(1 for line in lines if line.startswith(b"-"))
    return FileOutcome(
        True, f"edited {call.path} (+{added} -{removed} lines)", f"edited {call.path}", diff
    )


def _read_text(target: Path) -> str:
    return target.read_bytes().decode("utf-8", "surrogateescape")


def _atomic_write(target: Path, content: str) -> None:
    """Replace the file atomically, keeping an existing file's mode."""
    mode = target.stat().st_mode & 0o7777 if target.exists() else 0o644
    atomic_write(target, content.encode("utf-8", "surrogateescape"), mode)


def _diff(path: str, before: str, after: str) -> bytes:
    import difflib  # only edits pay for it

    lines = difflib.unified_diff(
        before.splitlines(keepends=True), after.splitlines(keepends=True), f"a/{path}", f"b/{path}"
    )
    return "".join(lines).encode("utf-8", "surrogateescape")
