"""A session's wall time from its records' timestamps, and notes on the timestamps that cannot
be its end: unreadable, in the future, or going back in time."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from .log import Record
from .reading import newer_version

FUTURE_SLACK = 86_400.0  # a writer's clock may run ahead of the reader's, not by a day
BACKWARDS_SLACK = 1.0  # records are stamped before their writer takes the journal's lock

#: Every record kind this version's writers write (docs/journal-format.md): wall time runs to
#: the latest timestamp among them, and a kind not here (a newer writer's) is skipped. A kind
#: missing here would cut the session short (a session's last record is usually `closed`):
#: tests/journal/test_timing_kinds.py collects the kinds the writers' code can write and fails
#: when one is not here.
TIMED_KINDS = frozenset(
    {"session", "call", "outcome", "rejected", "approval", "approval-rejected", "review"}
    | {"policy", "policy-ignored", "confinement", "relinked", "alert", "recovery", "closed"}
    | {"run", "user", "model", "model-error", "compaction", "thinking", "text", "final"}
    | {"interrupt", "stop"}
)


#: What a note says of timestamps that cannot be the session's end, and what came of them.
ODD_TIMES = {
    "unreadable": ("cannot be read", "wall time ignores them"),
    "future": ("lie in the future, after this reader's clock", "wall time ignores them"),
    "backwards": (
        "go back in time, earlier than one before them",
        "wall time runs from the start to the latest timestamp",
    ),
}


def wall_time(numbered: list[tuple[int, Record]]) -> tuple[float | None, list[str]]:
    """Seconds from the session's start (the header's `started`, else the first timestamp) to
    the latest timestamp of a record this reader knows (a known kind, not a newer version),
    never below 0; and notes on timestamps that cannot be read, lie in the future (neither
    counts) or go back in time."""
    limit = datetime.now(UTC) + timedelta(seconds=FUTURE_SLACK)
    start = latest = None
    odd: dict[str, list[int]] = {key: [] for key in ODD_TIMES}
    for line, record in numbered:
        kind = record.get("kind")
        if not isinstance(kind, str) or kind not in TIMED_KINDS or newer_version(record):
            continue
        text = record.get("started" if kind == "session" else "t")
        if text is None:
            continue
        moment = _moment(text)
        if moment is None or moment > limit:
            odd["unreadable" if moment is None else "future"].append(line)
            continue
        if latest is None or start is None:
            start = latest = moment
        elif moment > latest:
            latest = moment
        elif (latest - moment).total_seconds() > BACKWARDS_SLACK:
            odd["backwards"].append(line)
    notes = [
        f"{len(lines)} timestamp(s) {ODD_TIMES[key][0]} (the first is line {lines[0]}); "
        + ODD_TIMES[key][1]
        for key, lines in odd.items()
        if lines
    ]
    if start is None or latest is None:
        return None, notes
    return round(max(0.0, (latest - start).total_seconds()), 3), notes


def _moment(text: object) -> datetime | None:
    """An ISO 8601 timestamp, in UTC (without a zone: taken as UTC); None if it is not one."""
    if not isinstance(text, str):
        return None
    try:
        moment = datetime.fromisoformat(text)
        if moment.tzinfo is None:
            return moment.replace(tzinfo=UTC)
        return moment if moment.utcoffset() == timedelta(0) else moment.astimezone(UTC)
    except (ValueError, OverflowError):
        return None
