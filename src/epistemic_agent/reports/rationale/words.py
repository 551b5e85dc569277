"""The model's words: the prose it wrote in a turn (`text` records), shown next to the call it
preceded (`show`, RATIONALE.md, the HTML page).

Words belong to the first call (or rejected call) that follows them. A `final` answer ends the
turn (its text is also written as a `text` record just before it: the report shows it under
"How it ended"), and so does a new `user` message: words left over then belong to no call.
Thinking (`thinking` records) is not the model's words to the user and is not shown here: it
is the provider's partial, often summarised view of its reasoning, and stays in the journal.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .mdsafe import block, text, visible

if TYPE_CHECKING:
    from collections.abc import Iterable

    from ...journal import Record

_DECLARED = ("call", "rejected")
_ENDS_TURN = ("final", "user")


class Words:
    """Folds records one at a time; `fold` returns the words a declaration takes, else None."""

    def __init__(self, pending: Iterable[str] = ()) -> None:
        self.pending: list[str] = list(pending)

    def fold(self, record: Record) -> list[str] | None:
        kind = record.get("kind")
        if kind in _DECLARED and type(record.get("seq")) is int:
            taken, self.pending = self.pending, []
            return taken
        if kind == "text" and isinstance(record.get("text"), str) and record["text"].strip():
            self.pending.append(str(record["text"]))
        elif kind in _ENDS_TURN:
            self.pending = []
        return None


def before_calls(records: Iterable[Record]) -> dict[int, list[str]]:
    """Every call's preceding words, by seq (calls without words are left out)."""
    words = Words()
    found: dict[int, list[str]] = {}
    for record in records:
        taken = words.fold(record)
        if taken:
            found.setdefault(int(record["seq"]), taken)
    return found


def markdown(said: list[str]) -> str:
    """The words for RATIONALE.md: one line as a quote, several as a fenced block (inert)."""
    parts = []
    for words in said:
        body = words.strip()
        multi = "\n" in body or "\r" in body
        parts.append(block(body) if multi else "> " + text(body, line_start=True))
    return "".join(f"_The model said:_\n\n{part}\n\n" for part in parts)


def shown(words: str) -> str:
    """The words as a page shows them: control characters but line breaks and tabs escaped."""
    return visible(words.strip(), keep="\n\t")
