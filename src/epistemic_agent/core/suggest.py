""" "Did you mean": the closest known names to a mistyped one (difflib), as a phrase."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def did_you_mean(given: object, known: Iterable[str]) -> str:
    """` Did you mean 'log'?` (or two), or '' when nothing is close."""
    if not isinstance(given, str) or not given:
        return ""
    close = difflib.get_close_matches(given, list(known), n=2, cutoff=0.6)
    if not close:
        return ""
    return " Did you mean " + " or ".join(repr(name) for name in close) + "?"
