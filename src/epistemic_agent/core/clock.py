"""The time the record is written in."""

from __future__ import annotations

import calendar
import time


def now() -> str:
    """UTC time as ISO 8601 with milliseconds, e.g. 2026-11-30T11:27:33.123Z."""
    seconds = time.time()
    millis = int(seconds * 1000) % 1000
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{millis:03d}Z"


def epoch_of(stamp: str) -> float | None:
    """Seconds since the epoch of a record's `t` (2026-11-30T11:27:33.123Z), or None."""
    try:
        whole = calendar.timegm(time.strptime(stamp[:19], "%Y-%m-%dT%H:%M:%S"))
        millis = int(stamp[20:23]) if len(stamp) >= 23 else 0
    except ValueError:
        return None
    return whole + millis / 1000
