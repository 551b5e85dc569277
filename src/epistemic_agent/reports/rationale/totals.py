"""What RATIONALE.md needs beyond its current page: counts, the session's header, dead ends,
the ledger of beliefs, spend. Small, and saved whole in each checkpoint."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from ...core.structs import field, struct
from ...journal.beliefs import Ledger
from ...journal.spend import Spend
from ...journal.view import Tally
from . import words as model_words

if TYPE_CHECKING:
    from typing import Any

    from ...journal.log import Record


@struct(frozen=False)
class Totals:
    """Everything the report needs that is not the current page: small and serialisable."""

    session: dict[str, Any] = field(default_factory=dict)
    counts: Counter[str] = field(default_factory=Counter)
    shell: int = 0
    rejected: Counter[str] = field(default_factory=Counter)
    dead_ends: dict[int, dict[str, Any]] = field(default_factory=dict)
    page: int = 0
    page_offsets: list[int] = field(default_factory=lambda: [0])
    model: Counter[str] = field(default_factory=Counter)
    ending: dict[str, Any] = field(default_factory=dict)
    flagged: list[dict[str, Any]] = field(default_factory=list)
    approvals: Counter[str] = field(default_factory=Counter)  # approved / denied
    denied: Counter[str] = field(default_factory=Counter)  # calls per act a human denied
    spend: Spend = field(default_factory=Spend)  # tokens and cost, per act
    beliefs: Ledger = field(default_factory=Ledger)  # beliefs tested, the supervisor's reviews
    words: model_words.Words = field(default_factory=model_words.Words)  # not yet a call's
    page_said: list[list[str]] = field(default_factory=lambda: [[]])  # each page's first call's
    tally: Tally = field(default_factory=Tally)  # the calls' counts every reader shares

    def to_json(self) -> dict[str, Any]:
        return {
            "session": self.session,
            "counts": dict(self.counts),
            "shell": self.shell,
            "rejected": dict(self.rejected),
            "dead_ends": list(self.dead_ends.values()),
            "page": self.page,
            "page_offsets": self.page_offsets,
            "model": dict(self.model),
            "ending": self.ending,
            "flagged": self.flagged,
            "approvals": dict(self.approvals),
            "denied": dict(self.denied),
            "spend": self.spend.state(),
            "beliefs": self.beliefs.to_json(),
            "said": self.words.pending,
            "page_said": self.page_said,
            "tally": self.tally.to_json(),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Totals:
        return cls(
            dict(data["session"]),
            Counter(data["counts"]),
            int(data["shell"]),
            Counter(data["rejected"]),
            {int(d["seq"]): d for d in data["dead_ends"]},
            int(data["page"]),
            [int(o) for o in data["page_offsets"]],
            Counter(data.get("model", {})),
            dict(data.get("ending", {})),
            list(data.get("flagged", [])),
            Counter(data.get("approvals", {})),
            Counter(data.get("denied", {})),
            Spend.from_state(data.get("spend", {})),
            Ledger.from_json(data.get("beliefs", {})),
            model_words.Words(data.get("said", ())),
            list(data.get("page_said", [[] for _ in data["page_offsets"]])),
            Tally.from_json(data["tally"]),
        )

    def fold_model(self, record: Record) -> None:
        """Model calls and token usage, summed; the model's name is kept from the latest."""
        self.model["calls"] += 1
        for key in ("prompt_tokens", "completion_tokens", "cached_tokens"):
            value = record.get(key)
            if isinstance(value, int):
                self.model[key] += value
        self.ending["model"] = f"{record.get('provider')}:{record.get('model')}"
