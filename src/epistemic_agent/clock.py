"""The time the record is written in."""

from __future__ import annotations

import time


def now() -> str:
    """UTC time as ISO 8601 with milliseconds, e.g. 2026-11-30T11:27:33.123Z."""
    seconds = time.time()
    millis = int(seconds * 1000) % 1000
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{millis:03d}Z"
