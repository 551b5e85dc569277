"""A call's diff shown inline, in RATIONALE.md and the HTML page (reports/html/calls.py): the
blob its outcome's `evidence.diff` names (file tools write it; shell acts too where their diffs
are kept), read and checked against its hash (blobs.py), cut at `DIFF_LINES` lines or
`DIFF_CHARS` characters.

What cannot be shown is said: a missing or changed blob, a diff the store kept only the first
part of, a diff cut for length (with its line count and the `epistemic show` that has it all),
and a change-state or revert that recorded no diff at all.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...core import struct
from ...journal import read_blob
from .mdsafe import block, code, text

if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from ...journal import CallView, Record

DIFF_LINES = 200
DIFF_CHARS = 20_000
#: Acts whose missing diff is worth saying (they declared that they change files).
CHANGING_ACTS = ("change-state", "revert")


@struct
class Diff:
    """A diff as shown: `shown` (cut) when it could be read and checks out, else `problem`."""

    shown: str | None
    lines: int = 0  # lines of the whole diff
    shown_lines: int = 0
    problem: str | None = None
    stored_part: str | None = None  # "kept K of N bytes" when the store kept only a part

    @property
    def cut(self) -> bool:
        return self.shown is not None and self.shown_lines < self.lines


def diff_ref(outcome: Record) -> dict[str, Any] | None:
    """The evidence ref of the outcome's diff, if it names one."""
    evidence = outcome.get("evidence")
    ref = evidence.get("diff") if isinstance(evidence, dict) else None
    return ref if isinstance(ref, dict) else None


def read(evidence: Path, ref: dict[str, Any]) -> Diff:
    blob = read_blob(evidence, ref)
    if blob.data is None:
        return Diff(None, problem=blob.problem)
    whole = blob.text
    parts = whole.split("\n")
    if whole.endswith("\n"):
        parts.pop()
    kept, size, partial = [], 0, False
    for line in parts[:DIFF_LINES]:
        if size + len(line) > DIFF_CHARS:
            kept.append(line[: max(0, DIFF_CHARS - size)])
            partial = True
            break
        kept.append(line)
        size += len(line) + 1
    shown_lines = len(kept) - partial
    part = f"kept {ref.get('kept')} of {ref.get('bytes')} bytes" if blob.truncated else None
    return Diff("\n".join(kept), len(parts), shown_lines, None, part)


def markdown_for(view: CallView, ref: object, evidence: Path, session: str | None) -> str:
    """RATIONALE.md's diff part of a narrative entry; the lack of one is said only once the
    call ran."""
    if not isinstance(ref, dict) and view.status != "ran":
        return ""
    diff = read(evidence, ref) if isinstance(ref, dict) else None
    return markdown(diff, view.act, show_hint(view.seq, session))


def show_hint(seq: int, session: str | None) -> str:
    """The command that shows the whole call."""
    return f"epistemic show {seq}" + (f" --session {session}" if session else "")


def size_text(diff: Diff) -> str:
    """How much of the diff is shown, in words."""
    if diff.cut:
        return f"the first {diff.shown_lines} of {diff.lines} lines"
    return f"{diff.lines} line(s)"


def markdown(diff: Diff | None, act: str | None, hint: str) -> str:
    """The diff for RATIONALE.md: a fenced `diff` block no line of it can close."""
    if diff is None:
        return "_No diff was recorded for this call._\n\n" if act in CHANGING_ACTS else ""
    if diff.shown is None:
        return f"**Diff:** cannot be shown: {text(diff.problem)} ({code(hint)}).\n\n"
    notes = []
    if diff.cut:
        notes.append(f"_Diff cut for length: the whole diff is in {code(hint)}._")
    if diff.stored_part:
        notes.append(f"_The evidence store {text(diff.stored_part)} of this diff._")
    head = f"**Diff** ({size_text(diff)}):\n\n{block(diff.shown, 'diff')}\n\n"
    return head + "".join(note + "\n\n" for note in notes)
