"""Human approval of a call a policy `ask`s about: the request, the answer, and the protocol
every approver satisfies. The approvers are registered by name in approvers.py: at a terminal
(approval_terminal.py), or through files (approval_files.py: `epistemic approve` / `deny` from
another shell).

A wait for an answer ends with the answer, with the timeout (a denial), or with a `Cancel`
(an MCP client that gave up on the call): then the decision is `cancelled` and the call
never runs.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from ..core import field, now, replace, struct, user
from ..core import visible as visible  # cli_approval imports it from here
from ..gate import Statement

if TYPE_CHECKING:
    from typing import Any, TextIO

    from ..core import Cancel


@runtime_checkable
class Approver(Protocol):
    """Whoever answers a call a policy asks about (registered by name in approvers.py)."""

    def ask(self, request: Request, cancel: Cancel | None = None) -> Answer:
        """The answer to `request`: approved, denied (a timeout too) or cancelled."""
        ...

    def cannot_sign(self) -> str | None:
        """Why an answer given through this approver cannot be signed where it is given (no
        SSH key at the terminal); None when it can, or when it is signed elsewhere."""
        ...


COMMENT_CAP = 2000


@struct
class Channel:
    """What an approver is made from: where answer files go, how long to wait, the workspace
    named in a file request, and the terminal's streams."""

    folder: Path
    timeout: float
    workspace: str
    stdin: TextIO
    out: TextIO
    key: str | None = None  # the SSH key a terminal answer is signed with (None: find one)


@struct
class Request:
    """What a human is asked to decide: the call, its static effect, and the rule that asked."""

    seq: int
    session: str
    tool: str
    act: str
    reason: str
    command: str
    paths: tuple[str, ...]
    effect: str
    rule: str | None
    message: str
    timeout: float
    requested: str = field(default_factory=now)
    nonce: str = field(default_factory=lambda: os.urandom(16).hex())  # an answer must repeat it
    call: str = ""  # the SHA-256 of the call's line in the journal: what a signature binds
    signatures: str = "optional"  # required: only an answer signed by an allowed signer counts
    signers: str | None = None  # the allowed_signers file that decides who may approve
    rejected: Callable[[dict[str, Any]], None] | None = field(default=None, compare=False)

    def to_json(self) -> dict[str, Any]:
        return {
            "seq": self.seq,
            "session": self.session,
            "tool": self.tool,
            "act": self.act,
            "reason": self.reason,
            "command": self.command,
            "paths": list(self.paths),
            "effect": self.effect,
            "rule": self.rule,
            "message": self.message,
            "requested": self.requested,
            "timeout": self.timeout,
            "nonce": self.nonce,
            "pid": os.getpid(),
            "call": self.call,
            "signatures": self.signatures,
            "allowed_signers": self.signers is not None,  # whether a signature can be checked
        }

    def bound(self, call: str, rejected: Callable[[dict[str, Any]], None]) -> Request:
        """This request, naming its call's journal line and who hears of rejected answers."""
        return replace(self, call=call, rejected=rejected)

    def statement(self, decision: str, answered: str, comment: str) -> Statement:
        """What an approver signs for this request (gate/statement.py)."""
        return Statement(self.session, self.seq, self.call, decision, answered, comment)


@struct
class Answer:
    """A decision: approved or denied, by whom, when, through which channel, with a comment."""

    decision: str  # approved | denied | cancelled
    by: str | None
    channel: str  # terminal | file
    comment: str = ""
    at: str = field(default_factory=now)
    timed_out: bool = False
    extra: dict[str, Any] = field(default_factory=dict)  # uid, host, pid of the answerer

    @property
    def approved(self) -> bool:
        return self.decision == "approved"


def who(name: str | None) -> str:
    """The approver: the name given, else the OS user."""
    return name.strip() if name and name.strip() else user()
