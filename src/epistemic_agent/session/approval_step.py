"""The approval step of a call the policy `ask`s about: asking a human and recording the
answer, and what a denial or a cancellation records. A collaborator of `Session`: it is given
the policy in force, the approval channel, the scrubber, the recorder and the alerts."""

from __future__ import annotations

import time
from functools import partial
from typing import TYPE_CHECKING

from ..core import now
from ..journal import outcome_record
from .in_force import effect_class, written_paths
from .results import CallResult

if TYPE_CHECKING:
    from typing import Any

    from ..approvals import Answer, Asking
    from ..core import Cancel
    from ..effects import Effect
    from ..gate import Call
    from ..journal import Record
    from ..policy import Decision
    from .alerting import Alerting
    from .in_force import PolicyInForce
    from .recorder import Recorder
    from .scrub import Scrubber


class ApprovalStep:
    """Ask, record the answer; alert on a denial."""

    def __init__(
        self,
        in_force: PolicyInForce,
        asking: Asking,
        scrubber: Scrubber,
        recorder: Recorder,
        alerting: Alerting,
    ) -> None:
        self.in_force = in_force
        self.asking = asking
        self.scrubber = scrubber
        self.recorder = recorder
        self.alerting = alerting

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
        paths = written_paths(call, effect, str(self.in_force.workspace))
        session, scrubber = self.recorder.session_id, self.scrubber
        shown = effect_class(call, effect)
        request = self.asking.request(seq, session, call, decision, paths, shown, scrubber.text)
        request = request.bound(declared, partial(self._answer_rejected, seq))
        started = time.monotonic()
        approver = self.asking.approver()
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
        self.recorder.append(self.scrubber.scrub(record)[0])
        return answer

    def _answer_rejected(self, seq: int, why: dict[str, Any]) -> None:
        """An answer that does not count is journaled, and the call goes on waiting."""
        record: Record = {"kind": "approval-rejected", "seq": seq, "t": now(), **why}
        self.recorder.append(self.scrubber.scrub(record)[0])

    def denied(self, seq: int, call: Call, decision: Decision, answer: Answer) -> CallResult:
        who = answer.by or ("timeout" if answer.timed_out else "nobody")
        comment = self.scrubber.scrub(answer.comment)[0]
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
