"""One call through a session, as a sequence of named steps:

    check → decide → record_call → approve → run → observe → record_outcome → publish

`check` is the gate (pure) with its prechecks; `decide` the policy, then the supervisor;
`record_call` journals the call durably before anything runs; `approve` asks a human when the
policy says so; `run` runs the shell or file step confined; `observe` collects what it did
(output, changes, versions, the consistency flags); `record_outcome` journals that; `publish`
fires the alerts on it and hands back the result. A step that ends the call early (the gate or
the policy refuses it, a human denies it, the caller cancels it) records why and raises
`Settled` with the result."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from ..checks import consistency_precheck
from ..core import now
from ..execute import precheck
from ..gate import Call, Rejected
from ..gate import check_call as check
from ..journal import call_record, rejected_record
from .approval_step import decision_json
from .file_step import FileRan
from .outcomes import Declared, Observed
from .results import CallResult
from .review_step import block_message, flagged_decision
from .shell_step import ShellRan

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from ..core import Cancel
    from ..effects import Effect, EffectCache
    from ..execute import Execution
    from ..gate import GateConfig
    from ..journal import Record
    from ..policy import Decision
    from .alerting import Alerting
    from .approval_step import ApprovalStep
    from .file_step import FileStep
    from .in_force import PolicyInForce
    from .recorder import Recorder
    from .review_step import Reviewed, ReviewStep
    from .shell_step import ShellStep

    OutputSink = Callable[[Execution], None]
    DeclaredSink = Callable[[Record], None]


class Settled(Exception):
    """A step ended the call early; `result` is what it came to (already recorded)."""

    def __init__(self, result: CallResult) -> None:
        super().__init__(result.status)
        self.result = result


class Pipeline:
    """The steps of one call, given the collaborators each step needs."""

    def __init__(
        self,
        gate: GateConfig,
        effects: EffectCache,
        recorder: Recorder,
        in_force: PolicyInForce,
        approval: ApprovalStep,
        review: ReviewStep,
        alerting: Alerting,
        steps: tuple[ShellStep, FileStep],
        ticket: str | None,
    ) -> None:
        self.gate, self.effects, self.recorder = gate, effects, recorder
        self.in_force = in_force
        self.approval, self.review, self.alerting = approval, review, alerting
        self.shell, self.files = steps
        self.ticket = ticket
        self._declaring = threading.local()  # the seq of the call this thread declares

    def call(
        self,
        tool: object,
        args: object,
        on_output: OutputSink | None,
        cancel: Cancel | None,
        on_declared: DeclaredSink | None,
    ) -> CallResult:
        self._declaring.seq = None
        try:
            call, effect = self.check(tool, args)
            decision, reviewed = self.decide(call, effect)
            declared = self.record_call(call, effect, decision, reviewed)
            if on_declared is not None:
                on_declared(dict(declared.record))
            self.approve(declared, cancel)
            ran = self.run(declared, cancel)
            observed = self.observe(declared, ran, on_output, cancel)
            self.record_outcome(observed)
            if isinstance(ran, ShellRan) and ran.interrupt is not None:
                raise ran.interrupt  # recorded with what it printed: now the caller stops
            return self.publish(declared, observed)
        except Settled as settled:
            return settled.result
        except BaseException:
            self.interrupted()
            raise

    def check(self, tool: object, args: object) -> tuple[Call, Effect | None]:
        """The gate's verdict; for a file tool its path checked, for a command its effect
        classified and the consistency prechecks run."""
        verdict = check(tool, args, self.gate)
        effect = None
        if isinstance(verdict, Call) and verdict.path is not None:
            confinement = self.files.confinement
            hidden = tuple(path for path in confinement.hidden if path != self.gate.workspace)
            protected = self.gate.protected
            verdict = precheck(verdict, self._workspace, protected, hidden) or verdict
        elif isinstance(verdict, Call) and verdict.command is not None:
            effect = self.effects.classify(verdict.command)
            state = self.recorder.state
            started = float(state.header.get("started_epoch", 0.0))
            verdict = consistency_precheck(verdict, effect, state.history, started) or verdict
        if isinstance(verdict, Rejected):
            raise Settled(self.reject(verdict))
        return verdict, effect

    def decide(self, call: Call, effect: Effect | None) -> tuple[Decision, Reviewed | None]:
        """The policy's decision, then the supervisor's review (which may block the call, or
        leave it to a human)."""
        state, in_force = self.recorder.state, self.in_force
        decision = in_force.decide(call, effect, state, self.recorder.next_seq)
        if decision.decision == "deny":
            raise Settled(self.reject(in_force.denial(call, decision), decision))
        reviewed = self.review.review(call, effect)
        if reviewed is None:
            return decision, None
        if reviewed.action == "block":
            message = block_message(reviewed)
            blocked = Rejected("supervisor", message, call.tool, call.act, call.args)
            raise Settled(self.reject(blocked, review=reviewed))
        return flagged_decision(decision, reviewed), reviewed

    def record_call(
        self, call: Call, effect: Effect | None, decision: Decision, reviewed: Reviewed | None
    ) -> Declared:
        """Journal the call durably before anything runs. The report shows it at once when
        it waits for a human or may change the workspace (the act's view then guards that
        report: docs/security.md); a read-only act shows in the report when it has run, or
        as running half a second into it (`Recorder.publish_in_flight`): it can write none
        of the workspace, a new report included."""
        record = call_record(0, call, self.files.store_inputs(call))
        if self.ticket is not None:
            record["ticket"] = self.ticket
        if effect is not None:
            record["effect"] = effect.to_json()
        if not self.in_force.trivial or decision.decision == "ask":
            record["policy"] = decision_json(decision)
        belief = self.review.belief_given(call)
        if belief is not None:
            record["belief"] = belief
        record, redacted = self.recorder.scrubber.scrub(record)
        if redacted:
            record["redacted"] = redacted
        journal = self.recorder.journal
        with journal.locked():
            seq = record["seq"] = self._declaring.seq = journal.position.last_seq + 1
            if reviewed is not None:  # the second opinion, durable before the call it is on
                journal.append({**reviewed.record, "seq": seq}, durable=True)
            journal.append(record, durable=True)
            head = journal.position.head  # what a signed approval binds
            if call.mutating or decision.decision == "ask" or reviewed is not None:
                self.recorder.publish()
            running = frozenset(self.recorder.state.history.pending) - {seq}
        if reviewed is not None:
            self.alerting.reviewed(seq, call, reviewed)
        return Declared(seq, call, effect, decision, head, running, record, reviewed)

    def approve(self, declared: Declared, cancel: Cancel | None) -> None:
        """Ask a human when the policy says so; a denial or a cancellation settles the call."""
        seq, call, decision = declared.seq, declared.call, declared.decision
        if decision.decision == "ask":
            answer = self.approval.ask(seq, call, declared.effect, decision, cancel, declared.head)
            if answer.decision == "cancelled":
                result = self.approval.cancelled(seq, call, answer.comment, answer.by)
                raise Settled(_with_review(declared, result))
            if not answer.approved:
                raise Settled(
                    _with_review(declared, self.approval.denied(seq, call, decision, answer))
                )
        if cancel is not None and cancel.is_set():
            result = self.approval.cancelled(seq, call, cancel.describe(), cancel.by)
            raise Settled(_with_review(declared, result))

    def run(self, declared: Declared, cancel: Cancel | None) -> ShellRan | FileRan | Observed:
        """Run the call confined (the shell or the file step). A call whose sandbox could not
        be made did not run: its outcome is already known."""
        if declared.call.tool == "bash":
            return self.shell.run(declared, cancel)
        return self.files.run(declared)

    def observe(
        self,
        declared: Declared,
        ran: ShellRan | FileRan | Observed,
        on_output: OutputSink | None,
        cancel: Cancel | None,
    ) -> Observed:
        """What the call did: output, changes, versions, and the flags they raise."""
        if isinstance(ran, ShellRan):
            return self.shell.observe(declared, ran, on_output, cancel)
        if isinstance(ran, FileRan):
            return self.files.observe(declared, ran)
        return ran  # it did not run

    def record_outcome(self, observed: Observed) -> None:
        self.recorder.record(observed.record)

    def publish(self, declared: Declared, observed: Observed) -> CallResult:
        """The alerts on what the call came to; then its result (or the caller's output sink's
        error, now that the record is complete)."""
        if observed.ran:
            call = declared.call
            self.alerting.after(declared.seq, call, observed.flags, observed.result.outcome)
        if observed.sink_error is not None:
            raise observed.sink_error
        return _with_review(declared, observed.result)

    def interrupted(self) -> None:
        """A call this thread declared that an exception (Ctrl-C, a signal, a crash of ours)
        stops before its outcome is recorded gets one: interrupted. The call is known from
        the moment its seq is taken, so a signal between its declaration and anything after
        it still finds it; one that was never appended has nothing to close."""
        seq = self._declaring.seq
        if seq is None or seq not in self.recorder.state.history.pending:
            return
        if self.recorder.last_outcome != seq:
            self.recorder.record(
                {
                    "kind": "outcome",
                    "seq": seq,
                    "t": now(),
                    "ok": False,
                    "outcome": "interrupted before the call finished",
                    "interrupted": True,
                }
            )

    def reject(
        self, rejected: Rejected, policy: Decision | None = None, review: Reviewed | None = None
    ) -> CallResult:
        """Journal a refused call (it never runs) and return it as a result."""
        record = rejected_record(0, rejected)
        if policy is not None:
            record["policy"] = decision_json(policy)
        record, redacted = self.recorder.scrubber.scrub(record)
        if redacted:
            record["redacted"] = redacted
        journal = self.recorder.journal
        with journal.locked():
            seq = record["seq"] = self._declaring.seq = journal.position.last_seq + 1
            if review is not None:
                journal.append({**review.record, "seq": seq}, durable=True)
            journal.append(record, durable=False)
            self.recorder.publish()
        if review is not None:
            self.alerting.reviewed(seq, rejected, review)
        event = "denial" if policy is not None else "rejection"
        rule = (policy.rule or "default") if policy is not None else record["rule"]
        self.alerting.fire(event, seq, record, rule=rule, message=record["message"])
        result = CallResult(
            "rejected", seq, rejected.tool, rejected.act, record["rule"], record["message"]
        )
        if review is not None:
            result.review = review.summary()
        return result

    @property
    def _workspace(self) -> Path:
        return self.recorder.layout.workspace


def _with_review(declared: Declared, result: CallResult) -> CallResult:
    if declared.reviewed is not None:
        result.review = declared.reviewed.summary()
    return result
