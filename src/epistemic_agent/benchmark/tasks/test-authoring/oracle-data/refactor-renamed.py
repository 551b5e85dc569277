"""Date and time helpers for the shift scheduler.

Durations are whole numbers of seconds (int); dates are ``datetime.date`` objects.
"""

from __future__ import annotations

import re
from datetime import date, timedelta

SECONDS_PER_UNIT = {"d": 86400, "h": 3600, "m": 60, "s": 1}
UNITS_LARGEST_FIRST = "dhms"
NUMBER_AND_UNIT = re.compile(r"(\d+)([a-z])")


def parse_duration(text: str) -> int:
    """Parse a duration such as ``"1h30m"`` into a number of seconds.

    A duration is one or more ``<number><unit>`` parts written without spaces. The units
    are ``d`` (days), ``h`` (hours), ``m`` (minutes) and ``s`` (seconds); each may appear
    at most once, largest first: ``"1h30m"`` is valid, ``"30m1h"`` and ``"1h1h"`` are not.
    Numbers are non-negative integers, so ``"0s"`` is zero. Units may be upper-case and
    whitespace around the duration is ignored. Anything else, including an empty or blank
    string, raises ValueError.
    """
    source = text.strip().lower()
    if not source:
        raise ValueError("empty duration")
    seconds = 0
    cursor = 0
    last_rank = -1
    while cursor < len(source):
        found = NUMBER_AND_UNIT.match(source, cursor)
        if found is None:
            raise ValueError(f"invalid duration {text!r}")
        amount, letter = found.groups()
        if letter not in SECONDS_PER_UNIT:
            raise ValueError(f"unknown unit {letter!r} in {text!r}")
        rank_of_letter = UNITS_LARGEST_FIRST.index(letter)
        if rank_of_letter <= last_rank:
            raise ValueError(f"unit {letter!r} repeated or out of order in {text!r}")
        last_rank = rank_of_letter
        seconds += int(amount) * SECONDS_PER_UNIT[letter]
        cursor = found.end()
    return seconds


def format_duration(seconds: int) -> str:
    """Format a number of seconds the way parse_duration reads it: ``5400`` gives ``"1h30m"``.

    Largest units first, parts that are zero left out, so ``3601`` gives ``"1h1s"``; zero
    gives ``"0s"``. A negative number raises ValueError.
    """
    if seconds == 0:
        return "0s"
    if seconds < 0:
        raise ValueError(f"negative duration {seconds}")
    pieces = []
    left = seconds
    for letter in UNITS_LARGEST_FIRST:
        how_many, left = divmod(left, SECONDS_PER_UNIT[letter])
        if how_many:
            pieces.append(f"{how_many}{letter}")
    return "".join(pieces)


def add_business_days(start: date, days: int) -> date:
    """The date ``days`` business days after ``start``.

    Business days are Monday to Friday (holidays are not considered). Counting starts the
    day after ``start``: one business day after a Friday, a Saturday or a Sunday is the
    next Monday. ``days=0`` returns ``start`` unchanged, even on a weekend. A negative
    ``days`` raises ValueError.
    """
    if days < 0:
        raise ValueError(f"days must not be negative, got {days}")
    day = start
    to_go = days
    while to_go > 0:
        day += timedelta(days=1)
        if day.weekday() < 5:
            to_go -= 1
    return day


def merge_intervals(intervals: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Merge overlapping or touching ``(start, end)`` intervals.

    Each interval needs ``start <= end``, otherwise ValueError. Intervals that overlap, or
    touch (one ends exactly where the next starts), become one interval covering both. The
    input may be in any order and is left unchanged; the result is a new list sorted by
    start in which no two intervals overlap or touch. An empty input gives ``[]``.
    """
    for low, high in intervals:
        if low > high:
            raise ValueError(f"interval ({low}, {high}) ends before it starts")
    result: list[tuple[int, int]] = []
    for low, high in sorted(intervals):
        if result and low <= result[-1][1]:
            result[-1] = (result[-1][0], max(result[-1][1], high))
        else:
            result.append((low, high))
    return result
