"""`epistemic lint`: the declared-versus-done checks re-run on a journal after the fact.

For journals written by older versions or by other tools writing the same format. Each accepted
call is re-checked against the gate's rules that apply to a recorded call, the history rules
(revert, cleanup) and the outcome flags recomputed from what was observed; the record's own
structure is checked too (seq numbers, outcomes). Whatever `epistemic verify` finds wrong with
the record (the chain, the evidence, the seals) is an `integrity/ID` finding, and the records
are linted as they are all the same. Check ids are stable (docs/audit-bundle.md).
"""

from __future__ import annotations

import os
from collections import Counter
from typing import TYPE_CHECKING

from ..journal import FORMAT_VERSION, PROBLEMS, newer_note, newer_version, versions_text
from . import consistency
from .findings import Finding, LintResult
from .linter import Linter
from .trace import CHECKS as TRACE_CHECKS
from .trace import trace_findings

if TYPE_CHECKING:
    from ..journal import Loaded

#: Stable check ids and what each finding means. `gate/RULE` uses the gate's rule ids.
CHECKS: dict[str, str] = {
    "header-missing": "line 1 is not a session header",
    "record-malformed": "a call, rejected or outcome record without an integer seq",
    "seq-duplicate": "two calls (or rejections) share a seq",
    "seq-order": "a seq lower than one recorded before it",
    "seq-gap": "seq numbers skip: calls are missing from the journal",
    "outcome-missing": "a call without an outcome (still running, or its process was killed)",
    "outcome-orphan": "an outcome for a seq that no earlier call declared",
    "outcome-duplicate": "a second outcome for the same call",
    "act-mismatch": "a file tool's act is not the one the tool fixes",
    "mutating-mismatch": "the record's `mutating` disagrees with the act vocabulary",
    "gate/RULE": "the gate would have rejected the call with rule RULE (`epistemic rules`)",
    **{f"flag/{name}": meaning for name, meaning in consistency.FLAGS.items()},
    "flag-unknown": "the outcome records a flag id this version does not know",
    "flag-not-recorded": "recomputing from what was observed raises a flag the outcome lacks",
    "flag-not-reproduced": "the outcome records a flag that recomputation does not raise",
    "approval-unsigned": "a human's approval that no signature vouches for (signatures optional)",
    **{f"integrity/{name}": meaning for name, meaning in PROBLEMS.items()},
    **TRACE_CHECKS,
}


def lint(session: Loaded, temp: str | None = None, traced: bool = False) -> LintResult:
    """Re-run the checks on one loaded session (`temp`: the system temp dir the gate allows).
    Lines without a format version, or of an older one, are checked as the current version
    (the reader notes them); lines of a newer version are not re-checked (one note says so).
    `traced` adds the traceability checks (checks/trace.py)."""
    workspace = str(session.header.get("workspace") or session.workspace)
    linter = Linter(workspace, temp or _temp(), session.journal.parent / "evidence")
    numbered = session.numbered()
    reading = newer_note(numbered)  # replaced by what it means for lint
    result = LintResult(notes=[note for note in session.notes if note != reading])
    if session.records and session.records[0].get("kind") != "session":
        result.findings.append(Finding("header-missing", "line 1 is not a session header", None, 1))
    linter.run(session.records)
    result.findings.extend(linter.findings)
    if traced:
        result.findings.extend(trace_findings(session))
    result.findings.sort(key=lambda f: (f.line is None, f.line or 0))  # journal order
    newer = [(line, version) for line, r in numbered if (version := newer_version(r))]
    result.unchecked = dict(Counter(version for _, version in newer))
    result.notes += [_unchecked_note(newer)] if newer else []
    result.notes.extend(linter.notes)
    result.calls = len(linter.calls)
    integrity = session.integrity
    if integrity is not None and (integrity.damaged or integrity.status == "torn"):
        result.notes.append(
            f"the hash chain does not verify ({integrity.status}: {integrity.problem}); lint "
            "checked the records as they are: run `epistemic verify` for the chain"
        )
    if integrity is not None and integrity.status == "tampered":  # the record, as verify sees it
        result.findings[:0] = [
            Finding(f"integrity/{problem.check}", problem.message, None, problem.line)
            for problem in integrity.problems
        ]
    return result


def _unchecked_note(newer: list[tuple[int, int]]) -> str:
    """How many lines of which newer versions were not re-checked, and the first of them."""
    which = versions_text([version for _, version in newer])
    reader = f"(newer than this reader's {FORMAT_VERSION})"
    first = newer[0][0]
    if len(newer) == 1:
        where = f"1 line of format {which} {reader} was not re-checked (line {first})"
    else:
        where = f"{len(newer)} lines of format {which} {reader} were not re-checked"
        where += f" (the first is line {first})"
    return f"{where}: this result is incomplete"


def _temp() -> str:
    return os.path.realpath(os.environ.get("TMPDIR") or "/tmp")
