"""What every reader says first when the record it reads does not verify.

The readers (`log`, `report`, `stats`, `diff`, `html`, `lint`, `export`) show what a journal
holds; a journal whose hash chain is broken may hold an edited act. Each of them checks the
chain (verify.py, the same check as `epistemic verify`) and, when it is not intact, says so
before anything else: the verdict, the first problem, and which lines and calls are not
covered by the chain (what they say may not be what was recorded). See docs/cli.md ("Exit
statuses") for the commands whose exit status follows the verdict.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from ..core import one_line
from .records import seq_of
from .verify import INTACT, Problem, Verification, verify_journal

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from pathlib import Path
    from typing import Any

    from .log import Record
    from .verify import Verification

#: The exit status of a reader whose purpose is a verdict (`report`, `export`) when the journal
#: itself is damaged (edited, cut, its anchor contradicted): `verify`'s for TAMPERED.
EXIT_DAMAGED = 1


def exit_status(result: Verification | None) -> int:
    """1 when the journal file itself does not verify, else 0. A torn last line is a crash's
    doing (announced, and the readers skip it); a missing evidence blob or a bad seal is
    announced too, but only `verify` and `lint` fail on it."""
    return EXIT_DAMAGED if result is not None and result.damaged else 0


def unverified_lines(result: Verification, numbered: Sequence[tuple[int, Record]]) -> range:
    """The journal lines the chain does not cover: after the last line that verifies."""
    last = max([result.lines, result.line or 0, *(line for line, _ in numbered)])
    return range(result.good + 1, last + 1)


def unverified_calls(lines: range, numbered: Iterable[tuple[int, Record]]) -> list[int]:
    """The calls (by seq) with a record on one of those lines, in order, each once."""
    seqs = (seq_of(record) for line, record in numbered if line in lines)
    return sorted({seq for seq in seqs if seq is not None})


def spans(numbers: Sequence[int]) -> str:
    """`1-3, 5, 7-9` from a sorted list of numbers."""
    parts: list[str] = []
    start = previous = None
    for number in [*numbers, None]:
        if previous is not None and number == previous + 1:
            previous = number
            continue
        if start is not None:
            parts.append(str(start) if start == previous else f"{start}-{previous}")
        start = previous = number
    return ", ".join(parts)


def notice(result: Verification | None, numbered: Sequence[tuple[int, Record]]) -> list[str]:
    """The lines to show first (no markup, one line each), or none when the record verifies."""
    if result is None or result.status == INTACT:
        return []
    problems = result.problems
    more = f" (and {len(problems) - 1} more problem(s))" if len(problems) > 1 else ""
    lines = [
        f"WARNING: the journal does not verify ({result.status.upper()}): "
        f"{one_line(result.problem or '?')}{more}"
    ]
    unverified = unverified_lines(result, numbered)
    if unverified:
        verified = f"lines 1-{result.good} verify" if result.good else "no line verifies"
        calls = unverified_calls(unverified, numbered)
        which = f"calls {spans(calls)}" if calls else "no call"
        named, verb = _lines(unverified)
        lines.append(
            f"UNVERIFIED: {named} ({which}) {verb} not covered by the chain ({verified}): "
            "what they show may not be what was recorded"
        )
    else:
        where = sorted({p.line for p in problems if p.line is not None})
        at = f" (journal line(s) {spans(where)})" if where else ""
        lines.append(f"UNVERIFIED: the chain holds, but the record around it does not{at}")
    lines.append("run `epistemic verify` for the whole verdict")
    return lines


def _lines(lines: range) -> tuple[str, str]:
    first, last = lines[0], lines[-1]
    return (f"line {first}", "is") if first == last else (f"lines {first}-{last}", "are")


def check_journal(journal: Path) -> Verification:
    """The chain and the head anchor beside the journal, as `epistemic verify` checks them."""
    anchor = journal.parent / "head.json"
    return verify_journal(journal, anchor if anchor.is_file() else None)


def announce(
    result: Verification | None, numbered: Sequence[tuple[int, Record]], label: str = ""
) -> None:
    """Print the notice on stderr, each line marked as epistemic's (before any other output);
    `label` names the journal when a command reads several."""
    named = f"{one_line(label)}: " if label else ""
    for line in notice(result, numbered):
        print(f"epistemic: {named}{line}", file=sys.stderr, flush=True)


def verdict_of(data: dict[str, Any]) -> Verification:
    """A verdict back from its JSON (`Verification.to_json`, as an export's manifest holds)."""
    problems = [
        Problem(str(p.get("check")), str(p.get("message")), p.get("line"))
        for p in data.get("problems") or []
        if isinstance(p, dict)
    ]
    verified = data.get("verified") or {}
    result = Verification(
        str(data.get("status")), int(data.get("lines") or 0), str(data.get("head") or "")
    )
    result.good = int(verified.get("lines") or 0)
    for problem in problems:
        result.add(problem)
    result.status = str(data.get("status"))
    return result
