"""What a session's timeline and shape show: one mark per call, its lane, colour and status,
and the counts per act. Defined here once: `epistemic plot` (plot.py) draws them with
matplotlib, the HTML report (html/) as inline SVG.
"""

from __future__ import annotations

import datetime
from collections import Counter
from typing import TYPE_CHECKING

from ..core import ACT_NAMES, act_order, one_line, struct
from ..journal import seq_of

if TYPE_CHECKING:
    from ..journal import CallView, Loaded

#: One colour per act (the Okabe–Ito palette: tells apart for colour-blind readers too).
ACT_COLOURS: dict[str, str] = {
    "collect-info": "#56B4E9",
    "test-hypothesis": "#CC79A7",
    "verify": "#009E73",
    "change-state": "#0072B2",
    "setup": "#E69F00",
    "revert": "#D55E00",
    "cleanup": "#7F7F7F",
}
OTHER_COLOUR = "#B0B0B0"  # no act (rejected before its act was known), or an unknown act
FLAG_COLOUR = "#C00000"
NO_ACT = "-"  # the lane (and filter value) of calls without a valid act
#: A call's status, as the timeline marks it and the HTML filters it, with its legend text.
STATUSES: dict[str, str] = {
    "ok": "ran ok",
    "failed": "ran, failed",
    "rejected": "rejected (did not run)",
    "denied": "denied by a human (did not run)",
    "cancelled": "cancelled (withdrawn, or stopped by its caller)",
    "aborted": "aborted (stopped while running; outcome not known)",
    "unknown": "outcome unknown",
}


def colour(act: str) -> str:
    """The colour of an act (grey for no act or an act outside the vocabulary)."""
    return ACT_COLOURS.get(act, OTHER_COLOUR)


@struct
class Mark:
    """One call on the timeline."""

    seq: int
    act: str  # an act name, or NO_ACT
    status: str  # a key of STATUSES
    flagged: bool
    start: float | None  # seconds from the session's start to the declaration
    duration: float | None  # seconds the call ran, when an outcome says


def dead_end(mark: Mark) -> bool:
    """A revert that ran (one that was rejected, denied, cancelled or aborted undid nothing
    known, and one without an outcome has not run yet)."""
    return mark.act == "revert" and mark.status in ("ok", "failed")


def status_of(view: CallView) -> str:
    """The call's fate (journal/view.py) as the timeline marks it: `ok` for one that ran."""
    fate = view.fate
    return "ok" if fate == "ran" else fate if fate in STATUSES else "unknown"


def marks(session: Loaded) -> list[Mark]:
    """Every call of the session, in order, as the timeline draws it."""
    origin = _origin(session)
    durations = {
        seq: r["duration"]
        for r in session.of_kind("outcome")
        if isinstance(r.get("duration"), int | float) and (seq := seq_of(r)) is not None
    }
    found = []
    for view in session.views:
        at = seconds(view.t)
        found.append(
            Mark(
                seq=view.seq,
                act=view.act or NO_ACT,
                status=status_of(view),
                flagged=bool(view.flags),
                start=None if at is None or origin is None else round(at - origin, 3),
                duration=durations.get(view.seq),
            )
        )
    return found


def lanes(found: list[Mark]) -> list[str]:
    """The timeline's rows: the seven acts in vocabulary order, then any other act present."""
    extra = sorted({m.act for m in found} - set(ACT_NAMES) - {NO_ACT})
    return [*ACT_NAMES, *extra, *([NO_ACT] if any(m.act == NO_ACT for m in found) else [])]


def shape(session: Loaded) -> list[tuple[str, int]]:
    """Calls that ran, per act, in vocabulary order (every act, even at 0): a rejected, denied,
    cancelled or aborted call did not run, and one without an outcome has not yet."""
    counts: dict[str, int] = dict.fromkeys(ACT_NAMES, 0)
    for act, n in session.tally.ran.items():
        if act:
            counts[act] = counts.get(act, 0) + n
    return sorted(counts.items(), key=lambda item: act_order(item[0]))


def seconds(text: str | None) -> float | None:
    """An ISO 8601 timestamp as seconds since the epoch (None when absent or malformed)."""
    if not isinstance(text, str) or not text:
        return None
    try:
        return datetime.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def _origin(session: Loaded) -> float | None:
    started = seconds(session.header.get("started"))
    if started is not None:
        return started
    return next((s for r in session.records if (s := seconds(r.get("t"))) is not None), None)


def counts(found: list[Mark]) -> Counter[str]:
    """Calls by status (a key of STATUSES), and under `flagged` how many were flagged."""
    tally = Counter(m.status for m in found)
    tally["flagged"] = sum(1 for m in found if m.flagged)
    return tally


def title(session: Loaded) -> str:
    """`NAME: task` (the task cut to one short line; control characters as escapes)."""
    task = " ".join(str(session.header.get("task") or "").split())
    task = task if len(task) <= 90 else task[:87] + "..."
    return one_line(f"{session.name}: {task}" if task else session.name)


def subtitle(session: Loaded, found: list[Mark]) -> str:
    """Counts and the integrity verdict, one line."""
    tally = counts(found)
    parts = [f"{len(found)} call(s)"]
    parts += [f"{tally[s]} {s}" for s in [*STATUSES, "flagged"] if tally[s] and s != "ok"]
    integrity = session.integrity.status if session.integrity else "not verified"
    return " · ".join([*parts, f"journal {integrity}"])
