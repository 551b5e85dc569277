"""How one session asks a human about a call its policy `ask`s about: the channel, the
deadline, the approver, who may sign, and the request the human is shown."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .approvers import choose
from .request import Request

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from pathlib import Path

    from ..gate import Call
    from ..policy import Decision, Policy
    from .request import Approver
    from .signers import Signers

DEFAULT_APPROVAL_TIMEOUT = 600.0  # seconds


class Asking:
    """The approval channel of one session. `approver` None: the one the channel means, made
    when first needed; `key`: the SSH key a terminal answer is signed with (None: find one)."""

    def __init__(
        self,
        policy: Policy,
        workspace: Path,
        pending: Path,
        signers: Signers,
        timeout: float | None = None,
        channel: str | None = None,
        approver: Approver | None = None,
        key: str | None = None,
    ) -> None:
        self.policy = policy
        self.workspace = workspace
        self.pending = pending
        self.signers = signers
        self.timeout = timeout or policy.approval_timeout or DEFAULT_APPROVAL_TIMEOUT
        self.channel = channel or policy.approval_channel or "auto"
        self.key = key
        self._approver = approver
        self._given = approver is not None

    def request(
        self,
        seq: int,
        session: str,
        call: Call,
        decision: Decision,
        paths: Sequence[str],
        effect: str,
        shown: Callable[[str], str],
    ) -> Request:
        """What the human is shown: `shown` makes each text fit to be shown (secrets out)."""
        return Request(
            seq=seq,
            session=session,
            tool=call.tool,
            act=call.act,
            reason=shown(call.reason),
            command=shown(call.describe()),
            paths=tuple(shown(path) for path in paths),
            effect=effect,
            rule=decision.rule,
            message=decision.message,
            timeout=self.timeout,
            signatures=self.policy.signatures,
            signers=self.signers.for_rule(decision.rule),
        )

    def approver(self) -> Approver:
        if self._approver is None:
            workspace = str(self.workspace)
            self._approver = choose(self.channel, self.pending, self.timeout, workspace, self.key)
        return self._approver

    def unsigned_notice(self) -> str | None:
        """Said when the session opens: approvals the policy requires to be signed that cannot
        be signed where they will be asked (no SSH key at the terminal)."""
        if self.policy.signatures != "required" or not self._asks() or self._given:
            return None  # an approver the caller gave answers for itself
        problem = self.approver().cannot_sign()
        if problem is None:
            return None
        return (
            f"approvals at this terminal cannot be signed ({problem}). The policy requires "
            "signed approvals: a y here is recorded unsigned and does not run the call, which "
            "waits for `epistemic approve SEQ --key KEY` from another shell. Pass --key FILE, "
            "or load a key into ssh-agent, to answer here."
        )

    def _asks(self) -> bool:
        """Whether the policy can ask at all (a rule or the default says `ask`)."""
        return self.policy.default == "ask" or any(r.decision == "ask" for r in self.policy.rules)
