"""A file tool's path, resolved lexically: inside the workspace, outside the record, and short
enough for the file system."""

from __future__ import annotations

import posixpath

from ..core import is_protected
from .verdicts import Rejected


def resolve_path(workspace: str, path: str) -> str | Rejected:
    """A workspace-relative, normalised path, or the rejection that refuses it (lexical only)."""
    if not path.strip() or "\x00" in path:
        return Rejected("missing-argument", "`path` is empty or malformed.", "")
    full = posixpath.normpath(posixpath.join(workspace, path))
    root = posixpath.normpath(workspace)
    if full != root and not full.startswith(root.rstrip("/") + "/"):
        return Rejected(
            "path-outside-workspace",
            f"{path!r} is outside the workspace; file tools only work inside it.",
            "",
        )
    rel = posixpath.relpath(full, root)
    if rel == ".":
        return Rejected("path-outside-workspace", f"{path!r} is the workspace itself.", "")
    too_long = _too_long(full)
    if too_long:
        return Rejected("path-too-long", too_long, "")
    if is_protected(rel):
        return Rejected(
            "path-protected",
            f"{rel!r} is part of the session's record (.epistemic/ and RATIONALE.md); "
            "it is not yours to read or edit through tools.",
            "",
        )
    return rel


NAME_MAX = 255  # bytes in one part of a path (Linux file systems); PATH_MAX counts the NUL
PATH_MAX = 4096


def _too_long(full: str) -> str | None:
    """Why the file system would refuse this path as too long (ENAMETOOLONG), if it would."""
    size = len(full.encode("utf-8", "surrogatepass"))
    if size >= PATH_MAX:
        return f"the path is {size} bytes long; a path may have at most {PATH_MAX - 1}."
    for part in full.split("/"):
        length = len(part.encode("utf-8", "surrogatepass"))
        if length > NAME_MAX:
            shown = part[:24] + "…"
            return (
                f"the path part {shown!r} is {length} bytes long; a file or folder name may "
                f"have at most {NAME_MAX}. Use a shorter name."
            )
    return None
