"""The classifier through one accessor, for callers that classify only some of the time.

Importing effects.classify loads every program's option tables (effects/families/): about 15 ms,
as much as Python's own start-up. The commands that only read the record, and calls that run no
shell command, never pay it.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

    from .model import Effect


@functools.cache
def classifier() -> Callable[[str], Effect]:
    """`effects.classify.classify`, imported on the first call."""
    from .classify import classify  # lazy: the program tables, ~15 ms, on the first shell call

    return classify
