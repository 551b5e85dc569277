"""One view of a session: what each call came to, and the counts every reader shows.

Every reader of a session (`log`, `show`, `stats`, `sessions`, `diff`, `trace`, `plot`,
RATIONALE.md, the HTML page, the bundle, the `run` and REPL summaries, every `--json`) counts
from this one fold of the journal, and the live session keeps the same `Tally` as it writes
(reports/rationale/report.py folds it first), so that no two of them tell a different story.

A call's *fate* is the one word for what it came to:

- `ran`: it ran and succeeded;
- `failed`: it ran and failed (a non-zero exit, a timeout, a file operation that failed);
- `rejected`: the gate or a policy rule refused it; it never ran;
- `denied`: a human, or an approval that timed out, denied it; it never ran;
- `cancelled`: its caller withdrew it before it ran, or stopped it while it ran;
- `aborted`: it was interrupted before it finished (a second Ctrl-C, a signal, its session
  killed and the call recovered later): its outcome is not known;
- `unknown`: declared, with no outcome yet (still running, waiting for a human, or its
  session died and no one has continued it).

`ran` and `failed` are the calls that *ran*: only they count as acts done (an act a human
denied did not happen), and only a revert that ran is a dead end.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Literal

from ..core import field, struct
from .records import CallView, seq_of

if TYPE_CHECKING:
    from typing import Any

    from .log import Record

Fate = Literal["ran", "failed", "rejected", "denied", "cancelled", "aborted", "unknown"]
FATES: tuple[Fate, ...] = ("ran", "failed", "rejected", "denied", "cancelled", "aborted", "unknown")
RAN: frozenset[str] = frozenset(("ran", "failed"))  # the fates of calls that ran


def fate_of(view: CallView) -> Fate:
    """What a merged call came to (the module's docstring says what each fate means)."""
    for fate in FATES:  # the one word, typed
        if view.fate == fate:
            return fate
    raise AssertionError(view.fate)


def outcome_fate(record: Record) -> Fate:
    """The fate an outcome record gives its call."""
    if record.get("denied") is True:
        return "denied"
    if record.get("cancelled") is True:
        return "cancelled"
    if record.get("interrupted") is True:
        return "aborted"
    return "ran" if record.get("ok") is True else "failed"


@struct(frozen=False)
class Tally:
    """The counts of one session's calls, folded one record at a time (O(1) each): what every
    reader prints, and what the live session's policy facts and summaries are made of."""

    fates: Counter[str] = field(default_factory=Counter)  # fate -> calls (not `unknown`)
    declared: Counter[str] = field(default_factory=Counter)  # act -> calls past the gate
    ran: Counter[str] = field(default_factory=Counter)  # act -> calls that ran
    denied: Counter[str] = field(default_factory=Counter)  # act -> calls a human denied
    rejected: Counter[str] = field(default_factory=Counter)  # rule -> calls refused
    reverts: list[int] = field(default_factory=list)  # seqs of reverts that ran
    approvals: Counter[str] = field(default_factory=Counter)  # decision -> answers
    timeouts: int = 0  # denials no one gave: the approval timed out
    shell: int = 0  # shell calls that ran
    open: dict[int, tuple[str, str]] = field(default_factory=dict)  # seq -> act, tool

    def fold(self, record: Record) -> None:
        kind, seq = record.get("kind"), seq_of(record)
        if seq is None:
            return
        if kind == "call" and seq not in self.open:
            act, tool = record.get("act"), record.get("tool")
            self.open[seq] = (act if isinstance(act, str) else "", str(tool))
            self.declared[self.open[seq][0]] += 1
        elif kind == "rejected":
            self.fates["rejected"] += 1
            rule = record.get("rule")
            self.rejected[rule if isinstance(rule, str) else str(rule)] += 1
        elif kind == "outcome" and seq in self.open:
            (act, tool), fate = self.open.pop(seq), outcome_fate(record)
            self.fates[fate] += 1
            if fate == "denied":
                self.denied[act] += 1
            elif fate in RAN:
                self.ran[act] += 1
                self.shell += tool == "bash"
                if act == "revert":
                    self.reverts.append(seq)
        elif kind == "approval":
            self.approvals[str(record.get("decision"))] += 1
            self.timeouts += record.get("timed_out") is True

    @property
    def calls(self) -> int:
        """Every call number: those with a fate, and those without an outcome yet."""
        return sum(self.fates.values()) + len(self.open)

    @property
    def so_far(self) -> Counter[str]:
        """Act -> calls that ran or are running: what a policy's `counts` fact holds (a call
        still running counts, so that calls at once cannot slip past a limit together)."""
        return self.ran + Counter(act for act, _ in self.open.values())

    @property
    def counted(self) -> dict[str, int]:
        """Calls per fate, `unknown` included, in the fates' order, zeros left out."""
        found = {**self.fates, "unknown": len(self.open)}
        return {fate: found[fate] for fate in FATES if found.get(fate)}

    def sentence(self) -> str:
        """What the counts are, in words: `10 calls: 7 ran (1 failed), 1 rejected, 1 denied`."""
        counted = self.counted
        if not counted:
            return "no calls"
        ran = counted.get("ran", 0) + counted.get("failed", 0)
        parts = []
        if ran:
            failed = counted.get("failed", 0)
            parts.append(f"{ran} ran" + (f" ({failed} failed)" if failed else ""))
        words = {
            "rejected": "rejected",
            "denied": "denied",
            "cancelled": "cancelled",
            "aborted": "aborted",
            "unknown": "without an outcome",
        }
        parts += [f"{counted[fate]} {word}" for fate, word in words.items() if counted.get(fate)]
        total = self.calls
        return f"{total} call{'s' if total != 1 else ''}: " + ", ".join(parts)

    def to_json(self) -> dict[str, Any]:
        return {
            "fates": dict(self.fates),
            "declared": dict(self.declared),
            "ran": dict(self.ran),
            "denied": dict(self.denied),
            "rejected": dict(self.rejected),
            "reverts": list(self.reverts),
            "approvals": dict(self.approvals),
            "timeouts": self.timeouts,
            "shell": self.shell,
            "open": {str(seq): list(call) for seq, call in self.open.items()},
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Tally:
        return cls(
            Counter(data.get("fates", {})),
            Counter(data.get("declared", {})),
            Counter(data.get("ran", {})),
            Counter(data.get("denied", {})),
            Counter(data.get("rejected", {})),
            [int(seq) for seq in data.get("reverts", [])],
            Counter(data.get("approvals", {})),
            int(data.get("timeouts", 0)),
            int(data.get("shell", 0)),
            {int(seq): (str(call[0]), str(call[1])) for seq, call in data.get("open", {}).items()},
        )


def tally_of(records: list[Record]) -> Tally:
    """The tally of a whole journal's records."""
    tally = Tally()
    for record in records:
        tally.fold(record)
    return tally
