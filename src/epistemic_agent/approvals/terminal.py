"""Asking at a terminal: the call shown, y or n read with a deadline, then an optional comment;
signed with the operator's SSH key when the policy requires signatures.

Whether an answer can be signed here is known before anyone is asked (`cannot_sign`: the
session says so when it opens). An approval that cannot be signed, or whose signature the
allowed signers do not vouch for, is recorded as given (`approval-rejected`: approved by the
person at the terminal, unsigned, and why), and does not run the call: the request stays open
for a signed answer from another shell (`epistemic approve SEQ --key KEY`) until it times out.
A denial is recorded as given, signed or not: not running a call needs nobody's signature."""

from __future__ import annotations

import select
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

from ..core import SealError, replace, visible
from ..core import ssh_choose_key as choose_key
from ..gate import Signed
from ..gate import check_signature as check
from ..gate import sign_statement as sign
from .files import FileApprover
from .request import COMMENT_CAP, Answer, Channel, Request, who

if TYPE_CHECKING:
    from typing import Any, TextIO

    from ..core import Cancel


class TerminalApprover:
    """Asks at a terminal: shows the call, reads y or n, then an optional comment."""

    def __init__(
        self,
        timeout: float,
        stdin: TextIO,
        out: TextIO,
        user: str | None = None,
        channel: Channel | None = None,
    ):
        self.timeout, self.stdin, self.out, self.user = timeout, stdin, out, user
        self.channel = channel  # where a signed answer can still come from (the file channel)
        self.key = channel.key if channel is not None else None
        self._unsignable: list[str | None] = []  # found once: whether a key is at hand

    @classmethod
    def for_channel(cls, channel: Channel) -> TerminalApprover:
        return cls(channel.timeout, channel.stdin, channel.out, channel=channel)

    def cannot_sign(self) -> str | None:
        """Why an answer given here cannot be signed (no key found), once per approver."""
        if not self._unsignable:
            with tempfile.TemporaryDirectory(prefix="epistemic-key-") as scratch:
                try:
                    choose_key(self.key, Path(scratch))
                    self._unsignable.append(None)
                except SealError as error:
                    self._unsignable.append(str(error))
        return self._unsignable[0]

    def ask(self, request: Request, cancel: Cancel | None = None) -> Answer:
        unsignable = self.cannot_sign() if request.signatures == "required" else None
        self._show(request, unsignable)
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
        signed = self._signed(request, answer) if unsignable is None else unsignable
        if isinstance(signed, Answer):
            return signed
        return self._unsigned(request, answer, signed, deadline, cancel)

    def _unsigned(
        self, request: Request, answer: Answer, problem: str, deadline: float, cancel: Any
    ) -> Answer:
        """An answer that could not be signed, recorded as given. A denial stands; an approval
        does not count, and a signed one may still come from another shell."""
        if not answer.approved:
            self._say(f"denied, unsigned: {problem}")
            return replace(answer, extra={"signed": False, "unsigned": problem})
        if request.rejected is not None:
            given = {"decision": answer.decision, "claimed_by": answer.by, "channel": "terminal"}
            why = f"unsigned where signatures are required: {problem}"
            request.rejected({**given, "comment": answer.comment, "why": why})
        left = deadline - time.monotonic()
        if self.channel is None or left <= 0:
            return self._denied(f"no signed answer within {self.timeout:g} s", timed_out=True)
        self._say(
            f"your approval is recorded, unsigned, and does not run the call: {problem}.\n"
            f"The call waits {left:.0f} s more for a signed answer: `epistemic approve "
            f"{request.seq} --key KEY` (or `epistemic deny {request.seq}`) from another shell."
        )
        files = FileApprover.for_channel(replace(self.channel, timeout=left, out=None))
        return files.ask(request, cancel)

    def _signed(self, request: Request, answer: Answer) -> Answer | str:
        """Sign the answer with the operator's SSH key, and check it as a file answer is
        checked; why it does not count when it cannot be signed, or the allowed signers do
        not vouch for it."""
        statement = request.statement(answer.decision, answer.at, answer.comment)
        self._say("signing the answer with your SSH key...")
        try:
            signature, _ = sign(statement, self.key)
        except SealError as error:
            return f"the answer could not be signed: {error}"
        if request.signers is None:
            checked = Signed("the policy names no allowed_signers")
        else:
            checked = check(statement.text(), signature, Path(request.signers), None)
        if checked.problem is not None:
            return f"the signed answer does not count: {checked.problem}"
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

    def _show(self, request: Request, unsignable: str | None) -> None:
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
        if unsignable is not None:
            lines.append(
                f"  (your answer cannot be signed here: {unsignable}; the policy requires a "
                "signed approval, so a y is recorded unsigned and does not run the call)"
            )
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
