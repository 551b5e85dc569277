"""What passes between the steps of a call: `Declared` (the call as journaled, before it runs)
and `Observed` (what it came to: the outcome record, the flags it raised, the result the caller
gets), and the pieces the shell and the file steps share."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core import excerpt, struct
from ..journal import outcome_record
from .results import CallResult

if TYPE_CHECKING:
    from typing import Any

    from ..effects import Effect
    from ..execute import ConfinementError, Execution
    from ..gate import Call
    from ..journal import Record
    from ..policy import Decision
    from .review_step import Reviewed

OBSERVED_CAP = 200
#: What makes an observation's observed writes someone else's: it could not have made them.
SEALED = frozenset({"observations-write-scratch-only", "observations-keep-metadata"})


@struct
class Declared:
    """A call journaled durably, before it runs: its seq, what the gate made of it, the policy's
    decision, the journal's head just after its line (what a signed approval binds), the other
    calls still running when it was declared, and the supervisor's review."""

    seq: int
    call: Call
    effect: Effect | None
    decision: Decision
    head: str
    running: frozenset[int]
    record: Record  # the call record as journaled
    reviewed: Reviewed | None = None  # the supervisor's review of it, if any


@struct
class Observed:
    """One call's outcome, ready to record and publish. `ran` is False when the command could
    not start (no alert is fired on it); `sink_error` is the caller's output sink's failure,
    raised once the record is complete (the caller's problem must not falsify it)."""

    record: Record
    result: CallResult
    flags: list[dict[str, Any]]
    ran: bool = True
    sink_error: Exception | None = None


def not_confined(seq: int, call: Call, error: ConfinementError, mechanism: str) -> Observed:
    """The sandbox could not be made: the command did not run, and the record says why."""
    outcome = f"not run: {error.strerror or error}"
    record = outcome_record(seq, False, outcome, 0.0, {}, confinement=mechanism, not_run=True)
    # "bash" even for a file tool, as results have always said
    result = CallResult("ran", seq, "bash", call.act, ok=False, outcome=outcome)
    return Observed(record, result, [], ran=False)


def capped(observed: dict[str, Any]) -> dict[str, Any]:
    """An `npm install` creates thousands of files: keep the first OBSERVED_CAP of each list."""
    for key in ("created", "modified", "deleted"):
        paths = observed.get(key, [])
        if len(paths) > OBSERVED_CAP:
            observed[key] = paths[:OBSERVED_CAP]
            observed[f"{key}_total"] = len(paths)
    return observed


def summarise(done: Execution, stdout: str, stderr: str, timeout: float) -> str:
    if done.timed_out:
        text = f"timed out after {timeout:g} s; the command's process group was killed"
    else:
        shown = excerpt(stdout, stderr, failed=done.returncode != 0)  # failed: the last line
        text = f"rc={done.returncode} — {shown or '(no output)'}"
    if done.stopped_background:
        text += " (background processes it left were stopped)"
    return text
