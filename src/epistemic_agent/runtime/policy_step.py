"""The policy's part of a session: deciding each call, asking a human, recording the answer,
and firing alerts. A mixin of `Session`, kept apart so each concern has its own file."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING

from ..core.clock import now
from ..gate.check import Call, Rejected
from ..journal.log import Record
from ..journal.records import outcome_record
from .guard import ALLOW
from .results import CallResult

if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from ..core.cancel import Cancel
    from ..effects.classify import Effect
    from ..journal.writer import JournalWriter
    from ..policy.rules import Decision
    from ..reports.rationale.report import Report
    from .approval import Answer
    from .guard import Guard


class PolicyCalls:
    """Decide, ask, record and alert; `Session` supplies the journal, report and guard."""

    if TYPE_CHECKING:
        guard: Guard
        journal: JournalWriter
        report: Report
        workspace: Path

        @property
        def session_id(self) -> str: ...
        def reject(self, rejected: Rejected, policy: Decision | None = None) -> CallResult: ...
        def _record(self, record: Record) -> None: ...
        def _publish(self) -> None: ...

    def _decide(self, call: Call, effect: Effect | None) -> Decision:
        if self.guard.trivial:
            return ALLOW
        totals = self.report.totals
        seq = self.journal.position.last_seq + 1
        rejections = sum(totals.rejected.values())
        ran = totals.counts - totals.denied  # a call a human denied did not happen
        return self.guard.decide(call, effect, ran, rejections, seq)

    def _deny(self, call: Call, decision: Decision) -> CallResult:
        """A policy rule denies the call: journaled as a rejection citing the rule."""
        rule = decision.rule or "default"
        message = f"the policy denies this call (rule {rule}): {decision.message}"
        return self.reject(Rejected("policy", message, call.tool, call.act, call.args), decision)

    def _ask(
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
        import time as clock

        request = self.guard.request(seq, self.session_id, call, effect, decision)
        request = request.bound(declared, partial(self._answer_rejected, seq))
        started = clock.monotonic()
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
            "waited": round(clock.monotonic() - started, 3),
        }
        if answer.timed_out:
            record["timed_out"] = True
        record.update(answer.extra)
        record, _ = self.guard.scrub(record)
        with self.journal.locked():
            self.journal.append(record, durable=True)
            self._publish()
        return answer

    def _answer_rejected(self, seq: int, why: dict[str, Any]) -> None:
        """An answer that does not count is journaled, and the call goes on waiting."""
        record: Record = {"kind": "approval-rejected", "seq": seq, "t": now(), **why}
        record, _ = self.guard.scrub(record)
        with self.journal.locked():
            self.journal.append(record, durable=True)
            self._publish()

    def _denied(self, seq: int, call: Call, decision: Decision, answer: Answer) -> CallResult:
        who = answer.by or ("timeout" if answer.timed_out else "nobody")
        comment = self.guard.scrub(answer.comment)[0]
        outcome = f"denied by {who} ({answer.channel})" + (f": {comment}" if comment else "")
        self._record(outcome_record(seq, False, outcome, 0.0, {}, denied=True, act=call.act))
        message = f"{outcome}. The call did not run (policy rule {decision.rule or 'default'})."
        self._alert(
            "denial",
            seq,
            {"tool": call.tool, "act": call.act, "reason": call.reason},
            rule=decision.rule,
            by=answer.by,
            comment=comment,
            message=message,
        )
        return CallResult("denied", seq, call.tool, call.act, decision.rule, message)

    def _cancelled(self, seq: int, call: Call, why: str, by: str | None, ran: bool) -> CallResult:
        """The caller gave up on the call before it ran: it never will."""
        outcome = f"{why}; the call did not run"
        extra = {"cancelled": True, "cancelled_by": by, "act": call.act}
        self._record(outcome_record(seq, False, outcome, 0.0, {}, **extra))
        return CallResult("cancelled", seq, call.tool, call.act, None, outcome)

    def _alert(self, event: str, seq: int, call: Record, **fields: Any) -> None:
        """Fire the hooks on an event, and journal that they fired."""
        if not self.guard.alerts.listening(event):
            return
        payload: dict[str, Any] = {
            "session": self.session_id,
            "workspace": str(self.workspace),
            "seq": seq,
            "tool": call.get("tool"),
            "act": call.get("act"),
            "reason": call.get("reason") or _given(call, "reason"),
            "command": call.get("command") or _given(call, "command"),
            **fields,
        }
        payload = self.guard.scrub(payload)[0]
        fired = self.guard.alerts.fire(event, payload)
        self._record({"kind": "alert", "t": now(), "seq": seq, "event": event, "hooks": fired})

    def _after(self, seq: int, call: Call, flags: list[dict[str, Any]], outcome: str) -> None:
        """Alerts on what a call that ran came to: a revert (the first one), a flag."""
        if not self.guard.alerts.hooks:
            return
        base = {"tool": call.tool, "act": call.act, "reason": call.reason}
        base["command"] = call.describe()
        base = self.guard.scrub(base)[0]
        if call.act == "revert":
            totals = self.report.totals
            if totals.counts["revert"] - totals.denied["revert"] <= 1:
                self._alert("first-revert", seq, base, outcome=outcome)
            self._alert("revert", seq, base, outcome=outcome)
        if flags:
            names = ", ".join(str(flag.get("flag")) for flag in flags)
            message = f"declared {call.act}, flagged {names}: {flags[0].get('message')}"
            self._alert("flag", seq, base, flags=flags, message=message)


def decision_json(decision: Decision) -> dict[str, Any]:
    return {"decision": decision.decision, "rule": decision.rule, "message": decision.message}


def _given(record: Record, key: str) -> Any:
    given = record.get("given")
    return given.get(key) if isinstance(given, dict) else None
