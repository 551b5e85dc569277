"""The statement a human signs to answer a call, and its parser.

What is signed is a small text statement, the same for every way of answering:

    epistemic-approval 1
    session: 3f9c...               the session's id
    seq: 7                         the call's number
    call: 5be1...                  the SHA-256 of the call's line in the journal
    decision: approved             or denied
    answered: 2026-12-01T10:00:00.000Z
    comment: "matches ticket CHG-114"    (a JSON string)

signing.py signs and checks it with ssh-keygen.
"""

from __future__ import annotations

import json
import re

from ..core import struct

NAMESPACE = "epistemic-approval"
FORMAT = "epistemic-approval 1"
MAX_STATEMENT = 8 << 10
_HEX64 = re.compile(r"[0-9a-f]{64}")
_FIELDS = ("session", "seq", "call", "decision", "answered", "comment")


@struct
class Statement:
    """What an approver signs: which call of which session, the decision, when, and why."""

    session: str
    seq: int
    call: str
    decision: str
    answered: str
    comment: str

    def text(self) -> str:
        lines = [
            FORMAT,
            f"session: {self.session}",
            f"seq: {self.seq}",
            f"call: {self.call}",
            f"decision: {self.decision}",
            f"answered: {self.answered}",
            f"comment: {json.dumps(self.comment, ensure_ascii=True)}",
        ]
        return "\n".join(lines) + "\n"


def parse(text: object) -> Statement | str:
    """The statement in `text`, or why it is not one."""
    if not isinstance(text, str) or len(text) > MAX_STATEMENT:
        return "no statement, or one too long"
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    if not lines or lines[0] != FORMAT or len(lines) != len(_FIELDS) + 1:
        return f"not a statement of the form {FORMAT!r}"
    values: dict[str, str] = {}
    for name, line in zip(_FIELDS, lines[1:], strict=True):
        prefix = f"{name}: "
        if not line.startswith(prefix):
            return f"line {name!r} is missing"
        values[name] = line[len(prefix) :]
    try:
        comment = json.loads(values["comment"])
        seq = int(values["seq"])
    except ValueError:
        return "the comment or the seq cannot be read"
    if not isinstance(comment, str) or not _HEX64.fullmatch(values["call"]):
        return "the comment or the call hash is malformed"
    if values["decision"] not in ("approved", "denied"):
        return f"unknown decision {values['decision']!r}"
    return Statement(values["session"], seq, values["call"], values["decision"],
                     values["answered"], comment)  # fmt: skip
