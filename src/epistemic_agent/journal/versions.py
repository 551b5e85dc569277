"""Per-call versions of the files a call changed: before and after, redacted, as evidence.

For every path a call changed (a shell command's observation, or a file tool's path) the
session stores what the file held before (from the baseline, baseline.py) and after (read
beneath the workspace, no symlink followed), each redacted like all evidence, and a unified
diff of the two: the outcome's `evidence.diff` (the key file tools already use) and
`versions` (docs/journal-format.md). A side is an evidence ref, null (the file did not
exist) or "empty" (it existed and held nothing). A path whose content cannot be kept (binary,
too large, not a regular file, no copy from before) has `skipped` instead, which says why.
"""

from __future__ import annotations

import difflib
from typing import TYPE_CHECKING

from ..execute import DIRECTORY, GONE, Baseline, is_binary

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable
    from typing import Any

    from .evidence import EvidenceStore

    Redact = Callable[[bytes], tuple[bytes, int]]

MOST_PATHS = 200  # as many as an observation lists per kind (session.OBSERVED_CAP)
EMPTY = "empty"


class Versions:
    """What one call's versions came to: the record's `versions`, the diff and redactions."""

    def __init__(self) -> None:
        self.entries: list[dict[str, Any]] = []
        self.diff: list[bytes] = []
        self.redacted = 0
        self.cut = 0  # paths beyond MOST_PATHS, not diffed

    def extra(
        self, store: EvidenceStore, with_diff: bool = True
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """(evidence refs, outcome fields) to merge into the outcome record; the diff is
        stored only `with_diff` (a file tool stores its own)."""
        fields: dict[str, Any] = {}
        fields["versions"] = self.entries  # even empty: the baseline was there
        if self.cut:
            fields["versions_cut"] = self.cut
        ref = store.put(b"".join(self.diff)) if self.diff and with_diff else None
        return ({"diff": ref.to_json()} if ref is not None else {}), fields


def record_versions(
    baseline: Baseline,
    store: EvidenceStore,
    redact: Redact,
    paths: Iterable[str],
    before: dict[str, bytes | None] | None = None,
) -> Versions:
    """Each path's before (the baseline's copy, or `before[path]` when given: a file tool
    read it itself) and after (now); the baseline is then brought up to date for them."""
    with baseline.batch():
        return _record(baseline, store, redact, paths, before)


def _record(
    baseline: Baseline,
    store: EvidenceStore,
    redact: Redact,
    paths: Iterable[str],
    before: dict[str, bytes | None] | None,
) -> Versions:
    result = Versions()
    chosen = sorted(set(paths))
    result.cut = max(0, len(chosen) - MOST_PATHS)
    chosen = chosen[:MOST_PATHS]
    for path in chosen:
        if before is not None and path in before:
            old, old_why = before[path], None  # as the file tool found it: redacted below
            if old is not None:
                old, count = redact(old)
                result.redacted += count
        else:
            old, old_why = _before(baseline, path)
        new, new_why = baseline.read_now(path)
        if new_why == DIRECTORY or (new_why == GONE and old is None and old_why is None):
            continue  # a folder, or a path that neither was nor is a file: nothing to diff
        why = old_why or (None if new_why == GONE else new_why)
        for side in (old, new):
            if why is None and side is not None and is_binary(side):
                why = "it is binary"
        if why is not None:
            result.entries.append({"path": path, "skipped": why})
            continue
        result.entries.append(_entry(result, store, redact, path, old, new))
    baseline.update(chosen)
    return result


def _before(baseline: Baseline, path: str) -> tuple[bytes | None, str | None]:
    """The baseline's copy; (None, None) for a path that did not exist before."""
    content = baseline.content(path)
    if content is not None:
        return content, None
    if path in baseline.entries:
        return None, "no copy from before: the baseline's copy could not be read back"
    if path in baseline.skipped:
        return None, f"no copy from before: {baseline.why_not(path)}"
    return None, None  # not seen: created by the call (or by someone before it)


def _entry(
    result: Versions,
    store: EvidenceStore,
    redact: Redact,
    path: str,
    old: bytes | None,
    new: bytes | None,
) -> dict[str, Any]:
    sides: list[bytes | None] = [old]  # redacted already: the baseline keeps it so
    if new is None:
        sides.append(None)
    else:
        clean, count = redact(new)
        result.redacted += count
        sides.append(clean)
    entry: dict[str, Any] = {"path": path}
    for name, side in zip(("before", "after"), sides, strict=True):
        entry[name] = _ref(store, side)
    if sides[0] != sides[1]:
        diff, count = redact(unified(path, sides[0] or b"", sides[1] or b""))  # the path too
        result.redacted += count
        result.diff.append(diff)
    return entry


def _ref(store: EvidenceStore, content: bytes | None) -> object:
    if content is None:
        return None
    ref = store.put(content)
    return ref.to_json() if ref is not None else EMPTY


def unified(path: str, before: bytes, after: bytes) -> bytes:
    """The unified diff of two contents, headed `a/PATH` and `b/PATH` as the file tools'."""

    old = before.decode("utf-8", "surrogateescape").splitlines(keepends=True)
    new = after.decode("utf-8", "surrogateescape").splitlines(keepends=True)
    lines = difflib.unified_diff(old, new, f"a/{path}", f"b/{path}")
    text = "".join(
        line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines
    )
    return text.encode("utf-8", "surrogateescape")
