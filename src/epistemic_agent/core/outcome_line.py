"""The excerpt of a call's output that its outcome line shows (RATIONALE.md, `log`, the model).

A call that succeeded is summed up by the first line it printed. A call that failed is
explained by its last meaningful line: the exception after a Python traceback, the assertion
pytest reports, the shell's `command not found`. Lines that explain nothing are skipped: blank
ones, the carets and tildes under a traceback's source line (`^^^^`, `~~~`), a rule of `=` or
`-`, and pytest's closing tally (`=== 1 failed in 0.02s ===`). The whole output stays in the
evidence, its first line too.
"""

from __future__ import annotations

import re

EXCERPT = 100  # characters of the line shown
_DECORATION = re.compile(r"[\s^~=\-_*#.+|]*")  # carets, tildes, rules, bullets: no words
_TALLY = re.compile(
    r"=*\s*(\d+ (failed|passed|errors?|skipped|deselected|xfailed|xpassed|warnings?|rerun)"
    r",?\s*)+(in [\d.]+s( \([\d:]+\))?)?\s*=*",
    re.IGNORECASE,
)


def excerpt(stdout: str, stderr: str, failed: bool) -> str:
    """The line an outcome shows, cut to EXCERPT characters ('' when there is none)."""
    line = (last_meaningful(stderr) or last_meaningful(stdout)) if failed else None
    if line is None:
        line = next((s.strip() for s in (stdout + "\n" + stderr).splitlines() if s.strip()), "")
    return line if len(line) <= EXCERPT else line[: EXCERPT - 3] + "..."


def last_meaningful(text: str) -> str | None:
    """The last line of `text` that says something, stripped; None when no line does."""
    for raw in reversed(text.splitlines()):
        line = raw.strip()
        if line and not _DECORATION.fullmatch(line) and not _TALLY.fullmatch(line):
            return line
    return None
