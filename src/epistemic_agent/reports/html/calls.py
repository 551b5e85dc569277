"""The HTML page's parts of a narrative entry that RATIONALE.md shows too: the model's words
before a call and the call's diff. What they show is worked out once, in reports/rationale
(words.py, diffs.py); here it is only escaped (`esc`) and laid out."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...core import esc
from ..rationale.diffs import CHANGING_ACTS, Diff, read, show_hint, size_text
from ..rationale.mdsafe import visible
from ..rationale.words import shown

if TYPE_CHECKING:
    from pathlib import Path

    from ...journal import CallView


def words_html(said: list[str]) -> str:
    """The words for the HTML page, escaped (`esc`; control characters but line breaks and
    tabs as `\\x1b`-style escapes), line breaks kept by the stylesheet."""
    return "".join(
        f'<div class="said"><span class="muted">The model said:</span> {esc(shown(w))}</div>'
        for w in said
    )


def diff_html_for(view: CallView, ref: object, evidence: Path, session: str | None) -> str:
    """The HTML page's diff part of a narrative entry (see `diffs.markdown_for`)."""
    if not isinstance(ref, dict) and view.status != "ran":
        return ""
    diff = read(evidence, ref) if isinstance(ref, dict) else None
    return diff_html(diff, view.act, show_hint(view.seq, session))


def diff_html(diff: Diff | None, act: str | None, hint: str) -> str:
    """The diff for the HTML page: collapsed in a `<details>`, escaped."""
    if diff is None:
        missing = '<p class="muted">No diff was recorded for this call.</p>'
        return missing if act in CHANGING_ACTS else ""
    if diff.shown is None:
        return (
            f'<p class="flag"><b>Diff:</b> cannot be shown: {esc(diff.problem)} '
            f"(<code>{esc(hint)}</code>).</p>"
        )
    summary = f"Diff ({size_text(diff)}"
    if diff.cut:
        summary += f"; the whole diff: <code>{esc(hint)}</code>"
    if diff.stored_part:
        summary += f"; the evidence store {esc(diff.stored_part)}"
    body = esc(visible(diff.shown, keep="\n\t"))
    return (
        f'<details class="diff"><summary>{summary})</summary>'
        f"<pre><code>{body}</code></pre></details>"
    )
