"""The system prompt. Short on purpose: it is paid for on every model request.

The act list itself is not repeated here: it reaches the model once, in the `type` argument
of the bash tool (see tools.py), built from the vocabulary table.
"""

from __future__ import annotations

from ..core import RECORD_DIR, REPORT_NAME
from ..gate import MIN_REASON


def system_prompt(min_reason: int = MIN_REASON) -> str:
    return (
        "You are a coding agent working in a repository (the workspace). Every tool call is an "
        "act you declare. For bash, `type` follows your epistemic situation, not the command: "
        "the same `pytest -q` is test-hypothesis when you expect a particular failure and "
        "verify when confirming finished work.\n"
        f"Every call needs a `reason` (at least {min_reason} characters): your intent, why now; "
        "never a restatement of the command. A test-hypothesis reason states the belief under "
        "test and the observation that would refute it.\n"
        "A call that breaks these rules is rejected and does not run: read the error, fix the "
        "call, retry. Non-mutating acts run with the workspace read-only; put scratch files in "
        "$TMPDIR.\n"
        f"`{RECORD_DIR}/` and {REPORT_NAME} are the session's record; never edit them.\n"
        "When the task is done, answer without tool calls."
    )
