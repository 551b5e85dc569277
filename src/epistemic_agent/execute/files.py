"""The file tools' I/O: the checks that need the disk, and the reads, writes and edits."""

from __future__ import annotations

import contextlib
import difflib
import errno
import os
from pathlib import Path

from ..core import is_guarded, is_protected, open_beneath, read_open, read_regular, struct, where
from ..gate import Call, Rejected

MOST_BYTES = 64 << 20  # a file the file tools read, edit or replace: larger ones are refused


@struct
class FileOutcome:
    """What a file tool did: success, a one-line outcome, text for the caller, bytes to keep."""

    ok: bool
    outcome: str
    text: str
    evidence: bytes


def precheck(
    call: Call, workspace: Path, protected: tuple[str, ...] = (), hidden: tuple[str, ...] = ()
) -> Rejected | None:
    """Checks the pure gate cannot make: symlinks that leave the workspace, paths the session
    protects (`protected`: no write; `hidden`: no read either, absolute real paths), edit
    preconditions. The kernel holds the same line where it confines file tools; this check
    holds it on every platform, and says why."""
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
    fenced = _fenced(str(real), hidden if call.tool == "read_file" else (*protected, *hidden))
    if fenced is not None:
        return _refuse(
            call,
            "path-protected",
            f"{call.path!r} is or lies in {fenced!r}, which the session protects from every "
            "act (its policy and the files it names, the tool's installation, git's hooks "
            "and config, the client's settings, or a hidden path).",
        )
    if call.tool != "str_replace_edit":
        return None
    try:
        if not (target.is_symlink() or target.exists()):
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


def _fenced(real: str, items: tuple[str, ...]) -> str | None:
    """The item `real` is or lies inside (None: none)."""
    for item in items:
        if real == item or real.startswith(item.rstrip("/") + "/"):
            return item
    return None


def _refuse(call: Call, rule: str, message: str) -> Rejected:
    return Rejected(rule, message, call.tool, call.act, call.args)


def run_file_tool(call: Call, workspace: Path, limit: int) -> FileOutcome:
    """Run a file tool; what the file system refuses (a name too long for it, a folder where
    a file should be, no permission) is a failed outcome, never an exception. Every path is
    opened beneath the workspace (safepath.py), never by name: a symlink swapped in after the
    precheck cannot lead the tool into the record or out of the workspace."""
    assert call.path is not None
    verb = {"read_file": "read", "write_file": "write"}.get(call.tool, "edit")
    try:
        with Tree(workspace) as tree:
            if call.tool == "read_file":
                return _read(call, tree, limit)
            if call.tool == "write_file":
                return _write(call.path, tree, str(call.args["content"]))
            return _edit(call, tree)
    except OSError as error:
        reason = error.strerror or str(error)
        if error.errno == errno.EXDEV:
            reason = "the path leads out of the workspace (or into its record)"
        return FileOutcome(False, f"{verb} failed: {reason}", f"{verb} failed: {reason}", b"")


class Tree:
    """The workspace, through a descriptor: files are read and replaced beneath it only."""

    def __init__(self, workspace: Path) -> None:
        self.root = os.path.realpath(workspace)
        self.fd = os.open(self.root, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)

    def __enter__(self) -> Tree:
        return self

    def __exit__(self, *exc: object) -> None:
        os.close(self.fd)

    def _checked(self, fd: int, rel: str) -> int:
        """`fd`, once it is sure to stand inside the workspace and outside its record."""
        real = where(fd)
        inside = os.path.relpath(real, self.root) if real != self.root else "."
        if inside.startswith("..") or is_protected(inside) or inside == ".":
            os.close(fd)
            raise OSError(errno.EXDEV, "the path leads into the record", rel)
        return fd

    def read(self, rel: str) -> bytes | None:
        """The file's bytes, or None when there is no such file; NotRegular for a FIFO, a
        device..., TooLarge above MOST_BYTES (saferead.py: nothing an act plants blocks it)."""
        try:
            fd = self._checked(open_beneath(self.fd, rel, os.O_RDONLY | os.O_NONBLOCK), rel)
        except FileNotFoundError:
            return None
        try:
            return read_open(fd, MOST_BYTES, rel)
        finally:
            os.close(fd)

    def mode(self, rel: str) -> int:
        try:
            fd = open_beneath(self.fd, rel, os.O_PATH)
        except FileNotFoundError:
            return 0o644
        try:
            return os.fstat(self._checked(fd, rel)).st_mode & 0o7777
        finally:
            os.close(fd)

    def replace(self, rel: str, data: bytes, mode: int) -> None:
        """Write a new file beside `rel` (in its verified folder) and rename it over."""
        folder, name = os.path.split(rel)
        parent = self._folder(folder)
        temp = f".{name[:200]}.{os.urandom(4).hex()}.tmp"
        try:
            handle = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600,
                             dir_fd=parent)  # fmt: skip
            try:
                with os.fdopen(handle, "wb") as out:
                    out.write(data)
                    os.fchmod(out.fileno(), mode)
                os.replace(temp, name, src_dir_fd=parent, dst_dir_fd=parent)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(temp, dir_fd=parent)
                raise
        finally:
            os.close(parent)

    def _folder(self, folder: str) -> int:
        """The folder, made where missing, each step beneath the workspace and checked."""
        fd = os.dup(self.fd)
        for part in [p for p in folder.split("/") if p and p != "."]:
            try:
                step = open_beneath(fd, part, os.O_PATH | os.O_DIRECTORY)
            except FileNotFoundError:
                os.mkdir(part, dir_fd=fd)
                step = open_beneath(fd, part, os.O_PATH | os.O_DIRECTORY)
            os.close(fd)
            fd = step
            real = where(fd)
            inside = os.path.relpath(real, self.root)
            if inside.startswith("..") or is_protected(inside):
                os.close(fd)
                raise OSError(errno.EXDEV, "the path leads into the record", folder)
        return fd


def _read(call: Call, tree: Tree, limit: int) -> FileOutcome:
    assert call.path is not None
    try:
        found = tree.read(call.path)
    except (IsADirectoryError, PermissionError) as error:
        return FileOutcome(False, error.strerror or str(error), str(error), b"")
    if found is None:
        return FileOutcome(False, f"no such file: {call.path}", f"no such file: {call.path}", b"")
    data = found
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


def _write(path: str, tree: Tree, content: str) -> FileOutcome:
    found = tree.read(path)
    before = None if found is None else found.decode("utf-8", "surrogateescape")
    try:
        tree.replace(path, content.encode("utf-8", "surrogateescape"), tree.mode(path))
    except OSError as error:
        return FileOutcome(False, f"write failed: {error.strerror}", str(error), b"")
    verb = "created" if before is None else "replaced"
    size = len(content.encode("utf-8", "surrogateescape"))
    diff = _diff(path, before or "", content)
    return FileOutcome(True, f"{verb} {path} ({size} bytes)", f"{verb} {path}", diff)


def _edit(call: Call, tree: Tree) -> FileOutcome:
    assert call.path is not None
    found = tree.read(call.path)
    if found is None:
        return FileOutcome(False, f"no such file: {call.path}", f"no such file: {call.path}", b"")
    before = found.decode("utf-8", "surrogateescape")
    if before.count(str(call.args["old"])) != 1:  # changed since the precheck
        return FileOutcome(False, "edit failed: `old` no longer occurs exactly once", "", b"")
    after = before.replace(str(call.args["old"]), str(call.args["new"]), 1)
    try:
        tree.replace(call.path, after.encode("utf-8", "surrogateescape"), tree.mode(call.path))
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
    return read_regular(target, MOST_BYTES).decode("utf-8", "surrogateescape")


def _diff(path: str, before: str, after: str) -> bytes:
    lines = difflib.unified_diff(
        before.splitlines(keepends=True), after.splitlines(keepends=True), f"a/{path}", f"b/{path}"
    )
    return "".join(lines).encode("utf-8", "surrogateescape")
