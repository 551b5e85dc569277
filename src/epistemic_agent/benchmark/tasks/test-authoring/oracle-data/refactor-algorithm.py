"""Date and time helpers for the shift scheduler.

Durations are whole numbers of seconds (int); dates are ``datetime.date`` objects.
"""

from __future__ import annotations

import re
from datetime import date, timedelta

_UNITS = (("d", 86400), ("h", 3600), ("m", 60), ("s", 1))
_DURATION = re.compile(r"".join(rf"(?:(\d+){unit})?" for unit, _ in _UNITS))


def parse_duration(text: str) -> int:
    """Parse a duration such as ``"1h30m"`` into a number of seconds.

    A duration is one or more ``<number><unit>`` parts written without spaces. The units
    are ``d`` (days), ``h`` (hours), ``m`` (minutes) and ``s`` (seconds); each may appear
    at most once, largest first: ``"1h30m"`` is valid, ``"30m1h"`` and ``"1h1h"`` are not.
    Numbers are non-negative integers, so ``"0s"`` is zero. Units may be upper-case and
    whitespace around the duration is ignored. Anything else, including an empty or blank
    string, raises ValueError.
    """
    cleaned = text.strip().lower()
    match = _DURATION.fullmatch(cleaned)
    if not cleaned or match is None:
        raise ValueError(f"invalid duration {text!r}")
    return sum(int(n) * size for n, (_, size) in zip(match.groups(), _UNITS) if n is not None)


def format_duration(seconds: int) -> str:
    """Format a number of seconds the way parse_duration reads it: ``5400`` gives ``"1h30m"``.

    Largest units first, parts that are zero left out, so ``3601`` gives ``"1h1s"``; zero
    gives ``"0s"``. A negative number raises ValueError.
    """
    if seconds < 0:
        raise ValueError(f"negative duration {seconds}")
    parts = []
    for unit, size in _UNITS:
        if seconds >= size:
            parts.append(f"{seconds // size}{unit}")
            seconds %= size
    return "".join(parts) or "0s"


def add_business_days(start: date, days: int) -> date:
    """The date ``days`` business days after ``start``.

    Business days are Monday to Friday (holidays are not considered). Counting starts the
    day after ``start``: one business day after a Friday, a Saturday or a Sunday is the
    next Monday. ``days=0`` returns ``start`` unchanged, even on a weekend. A negative
    ``days`` raises ValueError.
    """
    if days < 0:
        raise ValueError(f"days must not be negative, got {days}")
    if days == 0:
        return start
    # Counting from a Saturday or a Sunday is counting from the Friday before; from a
    # business day, every five business days are one calendar week.
    anchor = start - timedelta(days=max(0, start.weekday() - 4))
    weeks, rest = divmod(days, 5)
    current = anchor + timedelta(weeks=weeks)
    while rest:
        current += timedelta(days=1)
        if current.weekday() < 5:
            rest -= 1
    return current


def merge_intervals(intervals: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Merge overlapping or touching ``(start, end)`` intervals.

    Each interval needs ``start <= end``, otherwise ValueError. Intervals that overlap, or
    touch (one ends exactly where the next starts), become one interval covering both. The
    input may be in any order and is left unchanged; the result is a new list sorted by
    start in which no two intervals overlap or touch. An empty input gives ``[]``.
    """
    bad = next(((s, e) for s, e in intervals if s > e), None)
    if bad is not None:
        raise ValueError(f"interval ({bad[0]}, {bad[1]}) ends before it starts")
    ordered = sorted(intervals, key=lambda interval: interval[0])
    merged: list[tuple[int, int]] = []
    index = 0
    while index < len(ordered):
        low, high = ordered[index]
        index += 1
        while index < len(ordered) and ordered[index][0] <= high:
            high = max(high, ordered[index][1])
            index += 1
        merged.append((low, high))
    return merged
