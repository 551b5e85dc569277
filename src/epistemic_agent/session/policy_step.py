"""The policy's step of a call: deciding it, asking a human and recording the answer, and
what a denial or a cancellation records. A collaborator of `Session`: it is given the guard,
the recorder and the alerts, and holds nothing else."""

from __future__ import annotations

import time
from functools import partial
from typing import TYPE_CHECKING

from ..core.clock import now
from ..gate.check import Call, Rejected
from ..journal.records import outcome_record
from .guard import ALLOW
from .results import CallResult

if TYPE_CHECKING:
    from typing import Any

    from ..approvals.request import Answer
    from ..core.cancel import Cancel
    from ..effects.model import Effect
    from ..journal.log import Record
    from ..policy.rules import Decision
    from .alerting import Alerting
    from .guard import Guard
    from .recorder import Recorder


class PolicyStep:
    """Decide, ask, record the answer; alert on a denial."""

    def __init__(self, guard: Guard, recorder: Recorder, alerting: Alerting) -> None:
        self.guard = guard
        self.recorder = recorder
        self.alerting = alerting

    def decide(self, call: Call, effect: Effect | None) -> Decision:
        if self.guard.trivial:
            return ALLOW
        tally = self.recorder.state.tally  # the counts every reader shows
        rejections = tally.fates["rejected"]
        ran = tally.so_far  # a call a human denied, or one that was stopped, did not happen
        return self.guard.decide(call, effect, ran, rejections, self.recorder.next_seq)

    def denial(self, call: Call, decision: Decision) -> Rejected:
        """A policy rule denies the call: journaled as a rejection citing the rule."""
        rule = decision.rule or "default"
        message = f"the policy denies this call (rule {rule}): {decision.message}"
        return Rejected("policy", message, call.tool, call.act, call.args)

    def ask(
        self,
        seq: int,
        call: Call,
        effect: Effect | None,
        decision: Decision,
        cancel: Cancel | None = None,
        declared: str = "",
    ) -> Answer:
        """A human decides; the decision is journaled (durably) before anything runs. A call
        cancelled while it waits gets no approval record: nobody decided. `declared` is the
        hash of the call's journal line, which a signed answer must name."""
        request = self.guard.request(seq, self.recorder.session_id, call, effect, decision)
        request = request.bound(declared, partial(self._answer_rejected, seq))
        started = time.monotonic()
        approver = self.guard.approver()
        answer = approver.ask(request, cancel) if cancel is not None else approver.ask(request)
        if answer.decision == "cancelled":
            return answer
        record: Record = {
            "kind": "approval",
            "seq": seq,
            "t": now(),
            "decision": answer.decision,
            "by": answer.by,
            "channel": answer.channel,
            "rule": decision.rule,
            "comment": answer.comment,
            "requested": request.requested,
            "answered": answer.at,
            "waited": round(time.monotonic() - started, 3),
        }
        if answer.timed_out:
            record["timed_out"] = True
        record.update(answer.extra)
        self.recorder.append(self.guard.scrub(record)[0])
        return answer

    def _answer_rejected(self, seq: int, why: dict[str, Any]) -> None:
        """An answer that does not count is journaled, and the call goes on waiting."""
        record: Record = {"kind": "approval-rejected", "seq": seq, "t": now(), **why}
        self.recorder.append(self.guard.scrub(record)[0])

    def denied(self, seq: int, call: Call, decision: Decision, answer: Answer) -> CallResult:
        who = answer.by or ("timeout" if answer.timed_out else "nobody")
        comment = self.guard.scrub(answer.comment)[0]
        outcome = f"denied by {who} ({answer.channel})" + (f": {comment}" if comment else "")
        record = outcome_record(seq, False, outcome, 0.0, {}, denied=True, act=call.act)
        self.recorder.record(record)
        message = f"{outcome}. The call did not run (policy rule {decision.rule or 'default'})."
        self.alerting.fire(
            "denial",
            seq,
            {"tool": call.tool, "act": call.act, "reason": call.reason},
            rule=decision.rule,
            by=answer.by,
            comment=comment,
            message=message,
        )
        return CallResult("denied", seq, call.tool, call.act, decision.rule, message)

    def cancelled(self, seq: int, call: Call, why: str, by: str | None) -> CallResult:
        """The caller gave up on the call before it ran: it never will."""
        outcome = f"{why}; the call did not run"
        extra = {"cancelled": True, "cancelled_by": by, "act": call.act}
        self.recorder.record(outcome_record(seq, False, outcome, 0.0, {}, **extra))
        return CallResult("cancelled", seq, call.tool, call.act, None, outcome)


def decision_json(decision: Decision) -> dict[str, Any]:
    return {"decision": decision.decision, "rule": decision.rule, "message": decision.message}
