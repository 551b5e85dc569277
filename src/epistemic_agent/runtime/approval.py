"""Human approval of a call a policy `ask`s about: at a terminal, or through files
(approval_files.py: `epistemic approve` / `deny` from another shell).

A wait for an answer ends with the answer, with the timeout (a denial), or with a `Cancel`
(an MCP client that gave up on the call): then the decision is `cancelled` and the call
never runs.
"""

from __future__ import annotations

import os
import select
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from ..core.clock import now
from ..core.identity import user
from ..core.safetext import visible as visible  # cli_approval imports it from here
from ..core.sshsig import SealError
from ..core.structs import field, replace, struct
from ..gate.signing import Signed, Statement, check, sign

if TYPE_CHECKING:
    from typing import Any, TextIO

    from ..core.cancel import Cancel
    from ..gate.signing import Statement


@runtime_checkable
class Approver(Protocol):
    """Whoever answers a call a policy asks about (registered by name in approvers.py)."""

    def ask(self, request: Request, cancel: Cancel | None = None) -> Answer:
        """The answer to `request`: approved, denied (a timeout too) or cancelled."""
        ...


POLL_SECONDS = 0.1
ANSWER_CAP = 64 << 10
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
        }

    def bound(self, call: str, rejected: Callable[[dict[str, Any]], None]) -> Request:
        """This request, naming its call's journal line and who hears of rejected answers."""
        return replace(self, call=call, rejected=rejected)

    def statement(self, decision: str, answered: str, comment: str) -> Statement:
        """What an approver signs for this request (approval_signing.py)."""
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


# -- the terminal ---------------------------------------------------------------------------


class TerminalApprover:
    """Asks at a terminal: shows the call, reads y or n, then an optional comment."""

    def __init__(self, timeout: float, stdin: TextIO, out: TextIO, user: str | None = None):
        self.timeout, self.stdin, self.out, self.user = timeout, stdin, out, user

    @classmethod
    def for_channel(cls, channel: Channel) -> TerminalApprover:
        return cls(channel.timeout, channel.stdin, channel.out)

    def ask(self, request: Request, cancel: Cancel | None = None) -> Answer:
        self._show(request)
        deadline = time.monotonic() + self.timeout
        while True:
            line = self._read(f"approve call {request.seq}? [y/n] ", deadline, cancel)
            if cancel is not None and cancel.is_set():
                self._say(f"\nwithdrawn: {cancel.describe()}")
                return Answer("cancelled", cancel.by, "terminal", cancel.describe())
            if line is None:
                return self._denied(f"no answer within {self.timeout:g} s", timed_out=True)
            if line == "":
                return self._denied("no answer: the terminal closed its input")
            word = line.strip().lower()
            if word in ("y", "yes", "n", "no"):
                break
            self._say("answer y (approve) or n (deny)")
        comment = self._read("comment (optional, Enter to skip): ", deadline, cancel) or ""
        decision = "approved" if word.startswith("y") else "denied"
        answer = Answer(decision, who(self.user), "terminal", comment.strip()[:COMMENT_CAP])
        if request.signatures != "required":
            answer.extra["signed"] = False
            return answer
        return self._signed(request, answer)

    def _signed(self, request: Request, answer: Answer) -> Answer:
        """Sign the answer with the operator's SSH key, and check it as a file answer is
        checked: an answer the allowed signers do not vouch for is a denial."""
        statement = request.statement(answer.decision, answer.at, answer.comment)
        self._say("signing the answer with your SSH key (ssh-agent, or ~/.ssh/id_ed25519)...")
        try:
            signature, _ = sign(statement, None)
        except SealError as error:
            return self._denied(f"the answer could not be signed: {error}")
        if request.signers is None:
            checked = Signed("the policy names no allowed_signers")
        else:
            checked = check(statement.text(), signature, Path(request.signers), None)
        if checked.problem is not None:
            return self._denied(f"the signed answer does not count: {checked.problem}")
        signed = {
            "signed": True,
            "signer": checked.signer,
            "key": checked.key,
            "statement": statement.text(),
            "signature": signature,
        }
        return replace(answer, by=checked.signer, extra={**answer.extra, **signed})

    def _denied(self, why: str, timed_out: bool = False) -> Answer:
        self._say(f"denied: {why}")
        return Answer("denied", None, "terminal", why, timed_out=timed_out)

    def _show(self, request: Request) -> None:
        rule = f"rule `{request.rule}`" if request.rule else "the policy's default"
        effect = request.effect + (f"; writes {', '.join(request.paths)}" if request.paths else "")
        lines = [
            "",
            f"── approval needed: call {request.seq}, asked by {visible(rule)} ──",
            f"  act      {visible(request.act)}",
            f"  reason   {visible(' '.join(request.reason.split()))}",
            f"  command  {visible(request.command)}",
            f"  effect   {visible(effect)}",
            f"  rule     {visible(request.message)}",
        ]
        self._say("\n".join(lines))

    def _say(self, text: str) -> None:
        print(text, file=self.out, flush=True)

    def _read(self, prompt: str, deadline: float, cancel: Cancel | None = None) -> str | None:
        """A line; "" at end of input; None when the deadline passes (or a cancel comes)."""
        print(prompt, end="", file=self.out, flush=True)
        remaining = deadline - time.monotonic()
        watched: list[Any] = [self.stdin] + ([cancel] if cancel is not None else [])
        try:
            ready, _, _ = select.select(watched, [], [], max(0.0, remaining))
        except (OSError, ValueError):
            return ""
        if not ready or (cancel is not None and cancel in ready):
            print(file=self.out, flush=True)
            return None
        return self.stdin.readline()
