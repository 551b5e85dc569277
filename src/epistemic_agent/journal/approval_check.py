"""Checking the journal's signed approvals after the fact: each statement must be the one
its record describes (this session, this call's line, this decision, time and comment), and,
given an allowed-signers file, carry a good signature by the principal the record names.

A journal whose chain verifies can still hold an approval copied from elsewhere by someone
who could rewrite the whole file (on a platform where the record is not protected): the
chain only proves the lines are as they were when written. The statement binds an approval
to its call by the call line's hash, so a copied one no longer fits.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from ..core import field, struct
from ..gate import Statement, parse
from ..gate import check_signature as check
from .verify import Problem

if TYPE_CHECKING:
    from typing import Any

MISMATCH, UNTRUSTED = "approval-mismatch", "approval-untrusted"
#: A call line's seq, read without parsing the line (`"kind":"call","seq":N` leads it).
CALL_SEQ = re.compile(rb'"kind":"call","seq":(\d+)')


@struct(frozen=False)
class Approvals:
    """What the journal walk collects for this check: each call line's hash by its seq, and
    the signed approval records with their line numbers."""

    calls: dict[int, str] = field(default_factory=dict)
    signed: list[tuple[int, dict[str, Any]]] = field(default_factory=list)


def check_approvals(
    found: Approvals, session: str | None, allowed: Path | None
) -> tuple[list[Problem], list[str]]:
    """Problems with the signed approvals, and notes on what was (not) checked."""
    problems: list[Problem] = []
    checked = 0
    for line, record in found.signed:
        statement = parse(record.get("statement"))
        if isinstance(statement, str):
            problems.append(Problem(MISMATCH, f"line {line}: approval statement {statement}", line))
            continue
        wrong = _differences(statement, record, session, found.calls)
        if wrong:
            message = f"line {line}: the signed statement does not match its record: {wrong}"
            problems.append(Problem(MISMATCH, message, line))
            continue
        if allowed is not None:
            problem = _signature(line, statement, record, allowed)
            if problem is not None:
                problems.append(problem)
            checked += 1
    return problems, _notes(len(found.signed), checked, allowed)


def _differences(
    statement: Statement, record: dict[str, Any], session: str | None, calls: dict[int, str]
) -> str:
    seq = record.get("seq")
    wanted = {
        "session": session,
        "seq": seq,
        "call": calls.get(seq) if isinstance(seq, int) else None,
        "decision": record.get("decision"),
        "answered": record.get("answered"),
    }
    comment = record.get("comment")
    if isinstance(comment, str) and "[REDACTED:" not in comment:  # scrubbed: not comparable
        wanted["comment"] = comment
    said = {name: getattr(statement, name) for name in wanted}
    wrong = [name for name, value in wanted.items() if said[name] != value]
    if "call" in wrong and wanted["call"] is None:
        return f"no call {seq} precedes it"
    return ", ".join(f"{name} {said[name]!r} (the record: {wanted[name]!r})" for name in wrong)


def _signature(
    line: int, statement: Statement, record: dict[str, Any], allowed: Path
) -> Problem | None:
    signer = record.get("signer")
    checked = check(str(record["statement"]), record.get("signature"), allowed, None)
    if checked.problem is not None:
        return Problem(UNTRUSTED, f"line {line}: approval of call {statement.seq}: "
                       f"{checked.problem}", line)  # fmt: skip
    if checked.signer != signer:
        return Problem(
            UNTRUSTED,
            f"line {line}: approval of call {statement.seq} is signed by {checked.signer} "
            f"under {allowed.name}, but its record names {signer!r}",
            line,
        )
    return None


def _notes(signed: int, checked: int, allowed: Path | None) -> list[str]:
    if not signed:
        return []
    if allowed is None:
        return [
            f"{signed} signed approval(s) match their calls; their signatures were not checked "
            "(pass --allowed-signers FILE to check who signed)"
        ]
    return [f"{checked} signed approval(s) checked against {allowed}"]
