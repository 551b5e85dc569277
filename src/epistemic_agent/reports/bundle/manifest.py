"""A bundle's member names and its manifest, read as untrusted input (docs/audit-bundle.md,
"Verifying a bundle", steps 1 and 2): UsageError when the manifest is not one."""

from __future__ import annotations

import io
import json
from typing import TYPE_CHECKING

from ...core import UsageError, struct
from .format import FORMAT, HEX64, JOURNAL, MANIFEST, sha256_stream

if TYPE_CHECKING:
    from typing import Any

MAX_MANIFEST = 64 << 20
MAX_FILE = 8 << 30
MAX_TOTAL = 64 << 30


@struct
class Listed:
    """One manifest entry."""

    path: str
    size: int
    sha256: str
    role: str


def folder_entry(info: Any) -> bool:
    """A directory entry (`zip -r` adds one per folder): a name ending in `/`, no content.
    It is not a file: not extracted, not in the manifest, not an extra member."""
    name: str = info.filename
    return name.endswith("/") and info.file_size == 0 and len(name) > 1


def _safe(name: str) -> bool:
    return unsafe(name) is None


def unsafe(name: str) -> str | None:
    """Why a member name is not a plain relative path, or None when it is one."""
    if name.startswith("/"):
        return "absolute"
    if name[1:2] == ":":
        return "a drive letter"
    if "\\" in name:
        return "a backslash"
    if "\x00" in name:
        return "a NUL character"
    parts = name.split("/")
    if ".." in parts:
        return "a `..` part"
    if not name or any(part in ("", ".") for part in parts):
        return "an empty or `.` part"
    return None


def read_manifest(archive: Any, info: Any) -> dict[str, Any]:

    if info is None:
        raise UsageError("not an audit bundle: it has no manifest.json")
    if info.file_size > MAX_MANIFEST:
        raise UsageError(f"manifest.json is larger than {MAX_MANIFEST} bytes")
    sink = io.BytesIO()
    try:
        with archive.open(info) as stream:
            sha256_stream(stream, MAX_MANIFEST, sink)
        manifest = json.loads(sink.getvalue())
    except (ValueError, RecursionError) as error:
        raise UsageError(f"manifest.json is not valid JSON ({error})") from None
    except Exception as error:  # zip-level failures: bad CRC, unsupported compression
        raise UsageError(f"manifest.json cannot be read ({error})") from None
    found = manifest.get("format") if isinstance(manifest, dict) else None
    if found != FORMAT:
        raise UsageError(
            f"not an audit bundle: manifest.json's format is {found!r}, not {FORMAT!r}"
        )
    return dict(manifest)


def listed_files(manifest: dict[str, Any]) -> list[Listed]:
    """The manifest's file list, validated (UsageError: there is nothing to check against)."""
    files = manifest.get("files")
    listed = [_entry(item) for item in files] if isinstance(files, list) else [None]
    bad = next((index for index, entry in enumerate(listed) if entry is None), None)
    if bad is not None:
        raise UsageError(
            f"manifest.json: files[{bad}] is not a valid entry"
            if files
            else "manifest.json has no `files` list"
        )
    paths = [entry.path for entry in listed if entry is not None]
    if len(set(paths)) != len(paths) or MANIFEST in paths or JOURNAL not in paths:
        raise UsageError(f"manifest.json: the files must be unique and include {JOURNAL}")
    if sum(entry.size for entry in listed if entry is not None) > MAX_TOTAL:
        raise UsageError(f"the bundle declares more than {MAX_TOTAL} bytes: not checked")
    return [entry for entry in listed if entry is not None]


def _entry(item: object) -> Listed | None:
    if not isinstance(item, dict):
        return None
    path, size, digest = item.get("path"), item.get("size"), item.get("sha256")
    if not isinstance(path, str) or not _safe(path) or not isinstance(digest, str):
        return None
    if not isinstance(size, int) or isinstance(size, bool) or not 0 <= size <= MAX_FILE:
        return None
    return (
        Listed(path, size, digest, str(item.get("role", ""))) if HEX64.fullmatch(digest) else None
    )
