"""Where a call's whole output is, from every view: RATIONALE.md links each of its stdout and
stderr blobs in the evidence store (`.epistemic/evidence/ab/abcd...`, relative to the file
that links it) and names `epistemic show SEQ --output`; the HTML page shows its first lines
in a collapsed `<details>` (one click), with the same command and blob paths.

A blob is named by the SHA-256 its outcome records; a name that is not one (a foreign or
forged record) gets no link and no path. What the page shows is read and checked against that
hash (blobs.py), never shown otherwise.
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING

from ...journal import read_blob
from .mdsafe import code, visible

if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from ...journal import CallView

OUTPUT_LINES = 40  # lines of each output the HTML page shows before "open it with show"
OUTPUT_CHARS = 4000
_HEX = re.compile(r"[0-9a-f]{64}")
_LINKABLE = re.compile(r"[A-Za-z0-9._/-]+")  # what a relative link may hold, unescaped


def hint(seq: int, session: str | None) -> str:
    """The command that prints the call's whole output."""
    return f"epistemic show {seq} --output" + (f" --session {session}" if session else "")


def blob_path(evidence: Path, ref: object) -> Path | None:
    """The blob an evidence ref names, when its name is a SHA-256 (it may be missing)."""
    digest = ref.get("sha256") if isinstance(ref, dict) else None
    if not isinstance(digest, str) or not _HEX.fullmatch(digest):
        return None
    return evidence / digest[:2] / digest


def size(ref: dict[str, Any]) -> str:
    """`37 bytes`, or `10485760 bytes, the first 1048576 kept` when the store kept a part."""
    total, kept = ref.get("bytes"), ref.get("kept")
    said = f"{total} bytes" if type(total) is int else "size not recorded"
    if type(total) is int and type(kept) is int and kept < total:
        said += f", the first {kept} kept"
    return said


def markdown(view: CallView, evidence: Path, base: Path, session: str | None) -> str:
    """RATIONALE.md's **Output:** line: each output's size and a link to its blob, relative to
    `base` (the folder of the file the line is in), and the command that prints it all."""
    if not view.output:
        return ""
    parts = []
    for name, ref in view.output.items():
        path = blob_path(evidence, ref)
        said = f"{name} ({size(ref)})"
        if path is not None:
            link = os.path.relpath(path, base).replace(os.sep, "/")
            shown = code(_short(link))
            said += f" [{shown}]({link})" if _LINKABLE.fullmatch(link) else f" {code(link)}"
        parts.append(said)
    return f"**Output:** {'; '.join(parts)}; all of it: {code(hint(view.seq, session))}.\n\n"


def html(view: CallView, evidence: Path, workspace: Path, session: str | None) -> str:
    """The HTML page's output part of an entry: its first lines, collapsed, each output with
    its size and blob (relative to the workspace), and the command that prints it all."""
    from ...core import esc  # the html module: not on the path of a recorded call

    if not view.output:
        return ""
    names, shown = [], []
    for name, ref in view.output.items():
        path = blob_path(evidence, ref)
        where = ""
        if path is not None:
            whole = os.path.relpath(path, workspace)
            where = f' <code title="{esc(whole)}">{esc(_short(whole))}</code>'
        names.append(f"{esc(name)} ({esc(size(ref))}){where}")
        shown.append(f"── {name} ──\n" + _first_lines(evidence, ref))
    body = esc(visible("\n".join(shown), keep="\n\t"))
    summary = f"Output: {'; '.join(names)}; all of it: <code>{esc(hint(view.seq, session))}</code>"
    return (
        f'<details class="output"><summary>{summary}</summary>'
        f"<pre><code>{body}</code></pre></details>"
    )


def _short(path: str) -> str:
    """A blob's path with its name cut to 12 hex digits (the whole one is the link)."""
    head, _, name = path.rpartition("/")
    return f"{head}/{name[:12]}…" if len(name) > 12 else path


def _first_lines(evidence: Path, ref: object) -> str:
    blob = read_blob(evidence, ref)
    if blob.data is None:
        return f"(cannot be shown: {blob.problem})\n"
    lines = blob.text.split("\n")
    kept = "\n".join(lines[:OUTPUT_LINES])
    cut = len(lines) > OUTPUT_LINES or len(kept) > OUTPUT_CHARS
    kept = kept[:OUTPUT_CHARS]
    return kept + ("\n… (cut: the whole output is in the command above)\n" if cut else "")
