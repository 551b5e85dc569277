"""Date and time helpers for the shift scheduler.

Durations are whole numbers of seconds (int); dates are ``datetime.date`` objects.
"""
from __future__ import annotations

from datetime import date, timedelta
import re


def merge_intervals(intervals: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Merge overlapping or touching ``(start, end)`` intervals.

    Each interval needs ``start <= end``, otherwise ValueError. Intervals that overlap, or
    touch (one ends exactly where the next starts), become one interval covering both. The
    input may be in any order and is left unchanged; the result is a new list sorted by
    start in which no two intervals overlap or touch. An empty input gives ``[]``.
    """
    for start, end in intervals:
        if start > end:
            raise ValueError(f"interval ({start}, {end}) ends before it starts")
    merged: list[tuple[int, int]] = []
    for start, end in sorted(intervals):
        if not merged or start > merged[-1][1]:
            merged.append((start, end))
            continue
        merged[-1] = (merged[-1][0], max(merged[-1][1], end))
    return merged


def add_business_days(start: date, days: int) -> date:
    """The date ``days`` business days after ``start``.

    Business days are Monday to Friday (holidays are not considered). Counting starts the
    day after ``start``: one business day after a Friday, a Saturday or a Sunday is the
    next Monday. ``days=0`` returns ``start`` unchanged, even on a weekend. A negative
    ``days`` raises ValueError.
    """
    if days < 0:
        raise ValueError(f"days must not be negative, got {days}")
    current, remaining = start, days
    while remaining > 0:
        current = current + timedelta(days=1)
        remaining -= current.weekday() < 5
    return current


_UNIT_ORDER = "dhms"
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def format_duration(seconds: int) -> str:
    """Format a number of seconds the way parse_duration reads it: ``5400`` gives ``"1h30m"``.

    Largest units first, parts that are zero left out, so ``3601`` gives ``"1h1s"``; zero
    gives ``"0s"``. A negative number raises ValueError.
    """
    if seconds < 0:
        raise ValueError(f"negative duration {seconds}")
    if seconds == 0:
        return "0s"
    parts = []
    for unit in _UNIT_ORDER:
        count, seconds = divmod(seconds, _UNIT_SECONDS[unit])
        if count:
            parts.append(f"{count}{unit}")
    return "".join(parts)


_PART = re.compile(r"(\d+)([a-z])")


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
    if not cleaned:
        raise ValueError("empty duration")
    total, position, previous = 0, 0, -1
    while position < len(cleaned):
        match = _PART.match(cleaned, position)
        if match is None:
            raise ValueError(f"invalid duration {text!r}")
        number, unit = match.groups()
        if unit not in _UNIT_SECONDS:
            raise ValueError(f"unknown unit {unit!r} in {text!r}")
        rank = _UNIT_ORDER.index(unit)
        if rank <= previous:
            raise ValueError(f"unit {unit!r} repeated or out of order in {text!r}")
        total, position, previous = total + int(number) * _UNIT_SECONDS[unit], match.end(), rank
    return total
