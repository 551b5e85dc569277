"""What RATIONALE.md needs beyond the session's state and its current page: where the pages
begin, the dead ends shown, the model's words not yet a call's. Small, and saved whole in each
checkpoint (the session's state is saved beside it: journal/state.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...core import field, struct
from . import words as model_words

if TYPE_CHECKING:
    from typing import Any


@struct(frozen=False)
class Totals:
    """The report's own state beyond the current page: small and serialisable."""

    dead_ends: dict[int, dict[str, Any]] = field(default_factory=dict)
    page: int = 0
    page_offsets: list[int] = field(default_factory=lambda: [0])
    words: model_words.Words = field(default_factory=model_words.Words)  # not yet a call's
    page_said: list[list[str]] = field(default_factory=lambda: [[]])  # each page's first call's

    def to_json(self) -> dict[str, Any]:
        return {
            "dead_ends": list(self.dead_ends.values()),
            "page": self.page,
            "page_offsets": self.page_offsets,
            "said": self.words.pending,
            "page_said": self.page_said,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Totals:
        return cls(
            {int(d["seq"]): d for d in data["dead_ends"]},
            int(data["page"]),
            [int(o) for o in data["page_offsets"]],
            model_words.Words(data.get("said", ())),
            list(data.get("page_said", [[] for _ in data["page_offsets"]])),
        )
