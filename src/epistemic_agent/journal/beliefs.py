"""The ledger of beliefs: every test-hypothesis is a belief (its reason), tested by its call,
settled (or not) by a verdict, and acted on by the change-states and reverts that later touched
the files it names. Folded from the journal like the report, and saved in its checkpoint.

A verdict comes from the supervisor (a `review` record's `beliefs`), or from the agent: the
tool result of a test-hypothesis asks the model to open its next reason with whether the
belief held, and the session records that opening in the next call's record (`belief`). The
supervisor's latest verdict counts over the agent's; without either a belief is unsettled.
"""

from __future__ import annotations

import posixpath
import re
from bisect import bisect_left, insort
from collections import Counter
from itertools import count, islice
from typing import TYPE_CHECKING

from ..core import field, struct

if TYPE_CHECKING:
    from typing import Any

    from ..journal.log import Record

ACTING = ("change-state", "revert")
#: How a reason may open to say whether the belief before it held (case does not matter).
_OPENING = re.compile(
    r"\s*[\"'(*_]*\s*(?:the\s+belief\s+)?"
    r"(?P<word>held|confirmed|did\s+not\s+hold|didn't\s+hold|refuted|unsettled|not\s+settled)"
    r"\b",
    re.IGNORECASE,
)
_WORDS = {"held": "confirmed", "confirmed": "confirmed", "refuted": "refuted"}
ASK = (
    "This tested a belief. Open your next reason with whether it held: 'Held: ...', "
    "'Did not hold: ...' or 'Unsettled: ...'."
)
MAX_DIGEST = 20  # beliefs in a supervisor's digest (the latest)
LINK_WINDOW = 200  # a change is linked to one of the latest beliefs only: folding stays O(1)
_REVISIONS = count(1)  # one clock for every ledger of the process: a revision is never reused


def agent_verdict(reason: str) -> str | None:
    """What the opening of a reason says about the belief tested just before; None: nothing."""
    match = _OPENING.match(reason)
    if match is None:
        return None
    word = " ".join(match["word"].lower().split())
    if word in _WORDS:
        return _WORDS[word]
    return "unsettled" if word in ("unsettled", "not settled") else "refuted"


def _mentions(text: str, path: str) -> bool:
    """Whether a belief's words name a file: its path, its name, or (4+ letters) its stem."""
    name = posixpath.basename(path)
    stem = name.rsplit(".", 1)[0]
    names = {path, name} | ({stem} if len(stem) >= 4 else set())
    return any(re.search(rf"(?<![\w.-]){re.escape(n)}(?![\w-])", text) for n in names if n)


@struct(frozen=False)
class Ledger:
    beliefs: dict[int, dict[str, Any]] = field(default_factory=dict)
    awaiting: int | None = None  # the belief whose verdict the agent's next reason may give
    reviews: Counter[str] = field(default_factory=Counter)  # ok, flag, block, failed
    notes: list[dict[str, Any]] = field(default_factory=list)  # flags, blocks and failures
    spend: Counter[str] = field(default_factory=Counter)  # the supervisor's tokens
    cost: float = 0.0
    acting: dict[int, str] = field(default_factory=dict)  # change-state/revert seq -> act
    task: str | None = None  # the latest user message (a REPL's task)
    _index: _Index = field(default_factory=lambda: _Index(), compare=False)  # derived

    def __post_init__(self) -> None:
        for belief in self.beliefs.values():
            self._index.update(belief)
        for note in self.notes:
            self._index.note(note)

    def fold(self, record: Record) -> None:
        kind, seq = record.get("kind"), record.get("seq")
        if kind == "user" and isinstance(record.get("text"), str):
            self.task = record["text"]
        if not isinstance(seq, int):
            return
        if kind == "call":
            self._fold_call(seq, record)
        elif kind == "outcome":
            self._fold_outcome(seq, record)
        elif kind == "review":
            self._fold_review(seq, record)

    def _fold_call(self, seq: int, record: Record) -> None:
        given = record.get("belief")
        if isinstance(given, dict) and given.get("seq") in self.beliefs:
            self._settle(int(given["seq"]), str(given.get("verdict")), "agent", seq, "")
        if self.awaiting is not None and seq > self.awaiting:
            self.awaiting = None
        act = record.get("act")
        if act == "test-hypothesis":
            self.beliefs[seq] = {
                "seq": seq,
                "statement": str(record.get("reason", "")),
                "command": str(record.get("command", "")),
                "outcome": None,
                "ok": None,
                "verdicts": [],
                "acted_on": [],
            }
            self._index.update(self.beliefs[seq])
        elif act in ACTING:
            self.acting[seq] = str(act)
            self._link(seq, str(act), _declared(record))

    def _fold_outcome(self, seq: int, record: Record) -> None:
        belief = self.beliefs.get(seq)
        if belief is not None:
            belief["outcome"] = str(record.get("outcome", ""))
            belief["ok"] = record.get("ok") is True
            ran = not any(record.get(k) for k in ("denied", "cancelled", "not_run"))
            if ran:
                self.awaiting = seq
            self._index.update(belief)
        act = self.acting.pop(seq, None)
        observed = record.get("observed")
        if act is not None and isinstance(observed, dict):
            paths = [p for k in ("created", "modified", "deleted") for p in _list(observed, k)]
            self._link(seq, act, paths)

    def _fold_review(self, seq: int, record: Record) -> None:
        verdict = record.get("verdict")
        key = verdict if verdict in ("ok", "flag", "block") else "failed"
        self.reviews[str(key)] += 1
        for name in ("input_tokens", "completion_tokens"):
            value = record.get(name)
            if isinstance(value, int):
                self.spend[name] += value
        if isinstance(record.get("cost"), (int, float)):
            self.cost += float(record["cost"])
        if key != "ok":
            note = record.get("note") if key != "failed" else record.get("error")
            self.notes.append({"seq": seq, "verdict": key, "note": str(note or "")})
            self._index.note(self.notes[-1])
        for item in record.get("beliefs") or ():
            if isinstance(item, dict) and item.get("seq") in self.beliefs:
                why = str(item.get("why", ""))
                self._settle(int(item["seq"]), str(item.get("verdict")), "supervisor", seq, why)

    def _settle(self, seq: int, verdict: str, by: str, at: int, why: str) -> None:
        if verdict in ("confirmed", "refuted", "unsettled"):
            self.beliefs[seq]["verdicts"].append(
                {"verdict": verdict, "by": by, "at": at, "why": why}
            )
            self._index.update(self.beliefs[seq])

    def _link(self, seq: int, act: str, paths: list[str]) -> None:
        """A change or revert acts on the latest earlier belief that names each file it
        touched (a later belief about a file takes over from the ones before it)."""
        recent = islice(reversed(self.beliefs.values()), LINK_WINDOW)
        earlier = sorted((b for b in recent if b["seq"] < seq), key=_seq, reverse=True)
        for path in dict.fromkeys(paths):
            belief = next((b for b in earlier if _mentions(_words(b), path)), None)
            if belief is None:
                continue
            known = {item["seq"]: item for item in belief["acted_on"]}
            if seq in known:
                known[seq]["paths"] = sorted({*known[seq]["paths"], path})
            else:
                belief["acted_on"].append({"seq": seq, "act": act, "paths": [path]})
            self._index.update(belief)

    # -- reading ---------------------------------------------------------------------------

    def note_on(self, seq: int) -> dict[str, Any] | None:
        """The supervisor's flag or block (or failure) on call `seq`, if any."""
        return self._index.notes.get(seq)

    def revision(self, seq: int) -> int:
        """Changes whenever anything shown of belief `seq` (or the note on its call) does."""
        return self._index.revision[seq]

    def counts(self) -> dict[str, int]:
        found = self._index.verdicts
        return {
            "tested": len(self.beliefs),
            **{v: found[v] for v in ("confirmed", "refuted", "unsettled")},
        }

    def ordered(self, limit: int | None = None) -> list[dict[str, Any]]:
        """Refuted beliefs that were acted on first, then the rest, each in call order (the
        first `limit` of them only, if given: reading those costs O(limit))."""
        index = self._index
        shown = index.first[:limit]
        left = None if limit is None else max(0, limit - len(shown))
        shown += islice((s for s in index.order if not index.state[s][1]), left)
        return [self.beliefs[seq] for seq in shown]

    def digest(self) -> list[dict[str, Any]]:
        """The latest beliefs, compact, for a supervisor's request."""
        shown = [self.beliefs[seq] for seq in self._index.order[-MAX_DIGEST:]]
        return [
            {
                "seq": b["seq"],
                "belief": b["statement"][:600],
                "command": b["command"][:300],
                "outcome": (b["outcome"] or "not run yet")[:300],
                "verdict": final(b)["verdict"],
            }
            for b in shown
        ]

    def to_json(self) -> dict[str, Any]:
        return {
            "beliefs": list(self.beliefs.values()),
            "awaiting": self.awaiting,
            "reviews": dict(self.reviews),
            "notes": self.notes,
            "spend": dict(self.spend),
            "cost": self.cost,
            "acting": {str(k): v for k, v in self.acting.items()},
            "task": self.task,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Ledger:
        return cls(
            {int(b["seq"]): b for b in data.get("beliefs", [])},
            data.get("awaiting"),
            Counter(data.get("reviews", {})),
            list(data.get("notes", [])),
            Counter(data.get("spend", {})),
            float(data.get("cost", 0.0)),
            {int(k): str(v) for k, v in data.get("acting", {}).items()},
            data.get("task"),
        )


class _Index:
    """What reading a ledger needs, updated as it folds (derived, never saved): its beliefs
    in call order, the refuted ones acted on (listed first), how many end in each verdict,
    the latest supervisor note on each call, and a revision per belief that moves whenever
    anything shown of it changes. Each update costs O(log n) or so, never a pass over all."""

    def __init__(self) -> None:
        self.order: list[int] = []  # every belief's seq, sorted
        self.first: list[int] = []  # refuted and acted on, sorted
        self.state: dict[int, tuple[str, bool]] = {}  # seq -> (final verdict, in `first`)
        self.verdicts: Counter[str] = Counter()
        self.notes: dict[int, dict[str, Any]] = {}
        self.revision: dict[int, int] = {}

    def update(self, belief: dict[str, Any]) -> None:
        seq = int(belief["seq"])
        verdict = final(belief)["verdict"]
        first = verdict == "refuted" and bool(belief["acted_on"])
        old = self.state.get(seq)
        if old is None:
            insort(self.order, seq)
        else:
            self.verdicts[old[0]] -= 1
        was_first = old is not None and old[1]
        if first and not was_first:
            insort(self.first, seq)
        elif was_first and not first:
            del self.first[bisect_left(self.first, seq)]
        self.verdicts[verdict] += 1
        self.state[seq] = (verdict, first)
        self.revision[seq] = next(_REVISIONS)

    def note(self, note: dict[str, Any]) -> None:
        seq = note["seq"]
        self.notes[seq] = note
        if seq in self.revision:
            self.revision[seq] = next(_REVISIONS)


def final(belief: dict[str, Any]) -> dict[str, Any]:
    """The verdict that counts: the supervisor's latest, else the agent's, else unsettled."""
    verdicts = belief.get("verdicts") or []
    for by in ("supervisor", "agent"):
        given = [v for v in verdicts if v.get("by") == by]
        if given:
            return dict(given[-1])
    return {"verdict": "unsettled", "by": None, "at": None, "why": ""}


def _seq(belief: dict[str, Any]) -> int:
    return int(belief["seq"])


def _words(belief: dict[str, Any]) -> str:
    return f"{belief['statement']}\n{belief['command']}"


def _declared(record: Record) -> list[str]:
    if isinstance(record.get("path"), str):
        return [record["path"]]
    effect = record.get("effect")
    if not isinstance(effect, dict):
        return []
    return [*_list(effect, "writes"), *_list(effect, "deletes")]


def _list(data: dict[str, Any], key: str) -> list[str]:
    value = data.get(key)
    return [str(p) for p in value] if isinstance(value, list) else []
