"""A live session's one view of itself: `SessionState`, folded from each record as it is written.

The journal writer folds every record into the state first (session/session.py), then the
RATIONALE renderer renders it. The gate, the policy step, the consistency checks, the
supervisor's brief and every end-of-run summary read the state, never the renderer, and the
state's counts are the same `Tally` every reader of a finished journal folds (view.py), so a
live summary and a later `stats` cannot disagree.

Folding one record costs O(1): nothing in the state is re-derived from the whole journal, and
what grows with the session (the history of touched paths, the flags raised) grows by what
the record adds. The state is saved whole in the report's checkpoint, so a new process
resumes it without re-reading the journal.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from ..core import field, struct
from .beliefs import Ledger
from .history import History
from .records import seq_of
from .spend import Spend
from .view import RAN, Tally, outcome_fate

if TYPE_CHECKING:
    from typing import Any

    from .log import Record
    from .view import Fate

HEADER_DROP = ("prev", "n", "v", "kind")  # line fields, not the session's
RECENT = 1024  # how many of the latest calls keep their fate (`fate_of`)
REVERTS_KEPT = 10  # the latest reverts that ran, with their reasons (the supervisor reads them)


@struct(frozen=False)
class SessionState:
    """What the session is so far: its header as later records amend it, the tally of its
    calls, its beliefs, spend, model use, flags, how it ended, and the paths its calls touched."""

    history: History
    header: dict[str, Any] = field(default_factory=dict)
    tally: Tally = field(default_factory=Tally)
    beliefs: Ledger = field(default_factory=Ledger)
    spend: Spend = field(default_factory=Spend)
    model: Counter[str] = field(default_factory=Counter)  # model requests and token sums
    ending: dict[str, Any] = field(default_factory=dict)  # final answer, stop, last model
    flagged: list[dict[str, Any]] = field(default_factory=list)  # declared-vs-done flags
    recent: dict[int, str] = field(default_factory=dict)  # seq -> fate, the latest calls
    reverts: list[dict[str, Any]] = field(default_factory=list)  # the latest that ran
    pending_reverts: dict[int, dict[str, Any]] = field(default_factory=dict)  # no outcome yet

    @classmethod
    def of(cls, workspace: str) -> SessionState:
        return cls(History(workspace))

    # -- folding ---------------------------------------------------------------------------

    def fold(self, record: Record) -> None:
        """Take one journal record into the state (every kind; unknown ones change nothing)."""
        kind = record.get("kind")
        self.tally.fold(record)
        if kind in ("call", "outcome", "review", "user"):
            self.beliefs.fold(record)
        if kind in ("call", "outcome", "approval"):
            self.history.fold(record)
        if kind in ("call", "rejected", "outcome"):
            self._fold_fate(record)
        if kind == "session":
            self.header = {k: v for k, v in record.items() if k not in HEADER_DROP}
        elif kind == "model":
            self._fold_model(record)
            self.spend.fold(record)
        elif kind in ("thinking", "compaction"):
            self.spend.fold(record)
        elif kind in ("final", "stop"):
            self.ending[str(kind)] = record.get("text", record.get("reason"))
            if kind == "stop":
                self.ending["message"] = record.get("message")
        elif kind == "outcome":
            self._fold_flags(record)
        else:
            self._fold_header(kind, record)

    def _fold_header(self, kind: object, record: Record) -> None:
        """Records that amend what the header says: the policy and confinement in force."""
        if kind == "policy":
            self.header["policy"] = {
                k: record[k] for k in ("source", "sha256", "signers") if k in record
            }
        elif kind == "policy-ignored":
            noticed = self.header.setdefault("ignored_policies", [])
            if record.get("sha256") not in noticed:
                noticed.append(record.get("sha256"))
        elif kind == "confinement":
            self.header["confinement"] = {
                k: v for k, v in record.items() if k not in (*HEADER_DROP, "t")
            }

    def _fold_fate(self, record: Record) -> None:
        seq = seq_of(record)
        if seq is None:
            return
        kind = record.get("kind")
        if kind == "outcome":
            fate = outcome_fate(record)
            if seq in self.recent:
                self.recent[seq] = fate
            revert = self.pending_reverts.pop(seq, None)
            if revert is not None and fate in RAN:
                self.reverts = [*self.reverts, revert][-REVERTS_KEPT:]
            return
        self.recent[seq] = "rejected" if kind == "rejected" else "unknown"
        if kind == "call" and record.get("act") == "revert":
            self.pending_reverts[seq] = {
                "seq": seq,
                "reason": record.get("reason"),
                "command": record.get("command"),
            }
        while len(self.recent) > RECENT:
            del self.recent[next(iter(self.recent))]

    def _fold_flags(self, record: Record) -> None:
        seq = record.get("seq")
        for flag in record.get("flags") or ():
            if isinstance(flag, dict):
                self.flagged.append(
                    {"seq": seq, "flag": flag.get("flag"), "message": flag.get("message")}
                )

    def _fold_model(self, record: Record) -> None:
        """Model calls and token usage, summed; the model's name is kept from the latest."""
        self.model["calls"] += 1
        for key in ("prompt_tokens", "completion_tokens", "cached_tokens"):
            value = record.get(key)
            if isinstance(value, int):
                self.model[key] += value
        self.ending["model"] = f"{record.get('provider')}:{record.get('model')}"

    def restore(self, other: SessionState) -> None:
        """Become `other` in place (a resumed checkpoint, or a fresh start): whoever holds this
        state, the journal writer's fold among them, sees the change."""
        vars(self).update(vars(other))

    # -- reading ---------------------------------------------------------------------------

    @property
    def session_id(self) -> str:
        return str(self.header.get("session", ""))

    def fate_of(self, seq: int) -> Fate | str | None:
        """What one of the latest calls came to (None: not among them, or no such call)."""
        return self.recent.get(seq)

    # -- saving ----------------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        return {
            "header": self.header,
            "tally": self.tally.to_json(),
            "beliefs": self.beliefs.to_json(),
            "spend": self.spend.state(),
            "model": dict(self.model),
            "ending": self.ending,
            "flagged": self.flagged,
            "recent": [[seq, fate] for seq, fate in self.recent.items()],
            "reverts": self.reverts,
            "pending_reverts": list(self.pending_reverts.values()),
            "history": self.history.to_json(),
        }

    @classmethod
    def from_json(cls, workspace: str, data: dict[str, Any]) -> SessionState:
        return cls(
            History.from_json(workspace, data["history"]),
            dict(data["header"]),
            Tally.from_json(data["tally"]),
            Ledger.from_json(data["beliefs"]),
            Spend.from_state(data["spend"]),
            Counter(data["model"]),
            dict(data["ending"]),
            list(data["flagged"]),
            {int(seq): str(fate) for seq, fate in data["recent"]},
            list(data["reverts"]),
            {int(r["seq"]): r for r in data["pending_reverts"]},
        )
