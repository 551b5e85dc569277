"""Asking at a terminal: the call shown, y or n read with a deadline, then an optional comment;
signed with the operator's SSH key when the policy requires signatures."""

from __future__ import annotations

import select
import time
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.safetext import visible
from ..core.sshsig import SealError
from ..core.structs import replace
from ..gate.signing import Signed, check, sign
from .approval import COMMENT_CAP, Answer, Channel, Request, who

if TYPE_CHECKING:
    from typing import Any, TextIO

    from ..core.cancel import Cancel


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
