"""The supervisor's part of a session: asking it about a call the gate accepted, before any
approval and before the call runs; the `review` record; what a block, a flag or a failure does
to the call. A collaborator of `Session`, like approval_step.py."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core import now, struct
from ..journal import agent_verdict
from ..policy import ROLE, Decision

if TYPE_CHECKING:
    from typing import Any

    from ..effects import Effect
    from ..gate import Call
    from ..journal import Record
    from ..supervisor import Review, Supervisor
    from .recorder import Recorder
    from .scrub import Scrubber

CAPPED = 4000  # characters of an edit's text the supervisor sees


@struct
class Reviewed:
    """A review's record (without its seq) and what it does to the call: `run`, `block`
    (the supervisor said so, or it failed under on_error = "deny") or `ask` (it failed under
    on_error = "ask")."""

    record: dict[str, Any]
    action: str
    note: str

    @property
    def flagged(self) -> bool:
        return self.record.get("verdict") != "ok"

    def summary(self) -> dict[str, Any]:
        return {
            "verdict": self.record.get("verdict"),
            "note": self.note,
            "failure": self.record.get("failure"),
        }


class ReviewStep:
    """Review, and say what the verdict does to the call; given the supervisor, the
    scrubber of what it reads and records, and the report it reads the session from."""

    def __init__(
        self, supervisor: Supervisor | None, scrubber: Scrubber, recorder: Recorder
    ) -> None:
        self.supervisor = supervisor
        self.scrubber = scrubber
        self.recorder = recorder

    def review(self, call: Call, effect: Effect | None) -> Reviewed | None:
        """Ask the supervisor about an accepted call, if it reviews this act; None if not."""
        supervisor = self.supervisor
        if supervisor is None or not supervisor.reviews(call.act):
            return None
        ledger = self.recorder.state.beliefs
        spent = ledger.spend["input_tokens"] + ledger.spend["completion_tokens"]
        seq = self.recorder.next_seq
        review = supervisor.review(self._request(seq, call, effect), spent)
        record = review_record(supervisor, call, review)
        record, _ = self.scrubber.scrub(record)
        note = str(record.get("note") or record.get("error") or "")
        if review.verdict is not None:
            action = "block" if review.verdict.verdict == "block" else "run"
        else:
            on_error = supervisor.spec.on_error
            action = {"allow": "run", "deny": "block", "ask": "ask"}[on_error]
        return Reviewed(record, action, note)

    def _request(self, seq: int, call: Call, effect: Effect | None) -> dict[str, Any]:
        """What the supervisor reads: the task, the call, and a digest of the session."""
        state = self.recorder.state
        ledger = state.beliefs
        shown: dict[str, Any] = {
            "seq": seq,
            "tool": call.tool,
            "act": call.act,
            "reason": call.reason,
            "command": call.describe(),
        }
        for key in ("content", "old", "new"):
            value = call.args.get(key)
            if isinstance(value, str):
                shown[key] = value if len(value) <= CAPPED else value[:CAPPED] + "…(cut)"
        if effect is not None:
            shown["effect"] = effect.cls
        reverts = [
            {"seq": end["seq"], "reason": end["reason"], "command": end["command"]}
            for end in state.reverts  # the latest that ran
        ]
        request = {
            "task": state.header.get("task") or ledger.task or "(no task was recorded)",
            "call": shown,
            "session": {
                "calls_so_far": seq - 1,
                "acts": dict(state.tally.ran),  # the acts that ran
                "beliefs": ledger.digest(),
                "files_changed": sorted(state.history.touched)[:100],
                "reverts": reverts,
                "your_earlier_notes": ledger.notes[-5:],
            },
        }
        redacted, _ = self.scrubber.scrub(request)
        return dict(redacted)

    def belief_given(self, call: Call) -> dict[str, Any] | None:
        """The agent's verdict on the belief it tested just before, from its reason's opening."""
        awaiting = self.recorder.state.beliefs.awaiting
        if awaiting is None:
            return None
        verdict = agent_verdict(call.reason or "")
        if verdict is None:
            return None
        return {"seq": awaiting, "verdict": verdict, "by": "agent"}


def review_record(supervisor: Supervisor, call: Call, review: Review) -> Record:
    """The `review` record (docs/journal-format.md): the verdict or the failure, declared as a
    second opinion, with the supervisor's own tokens and cost."""
    usage = review.usage
    record: Record = {
        "kind": "review",
        "t": now(),
        "role": ROLE,
        "provider": supervisor.provider.name,
        "model": supervisor.provider.model,
        "act": call.act,
        "verdict": review.verdict.verdict if review.verdict is not None else None,
    }
    if review.verdict is not None:
        record["note"] = review.verdict.note
        if review.verdict.beliefs:
            record["beliefs"] = [dict(item) for item in review.verdict.beliefs]
    else:
        record.update(failure=review.failure, error=review.error)
        record["on_error"] = supervisor.spec.on_error
        if review.raw is not None:
            record["answer"] = review.raw
    record.update(
        latency=review.latency,
        prompt_tokens=usage.prompt_tokens,
        input_tokens=usage.input_tokens,
        completion_tokens=usage.completion_tokens,
        cached_tokens=usage.cached_tokens,
        cost=review.cost,
        budget=supervisor.spec.budget,
    )
    return record


def flagged_decision(decision: Decision, reviewed: Reviewed) -> Decision:
    """The policy's decision as the human is asked it: with the supervisor's note, and `ask`
    when a failed review leaves the call to a human (on_error = "ask")."""
    if reviewed.action == "ask":
        message = f"the supervisor could not review this call ({reviewed.note}); you decide"
        if decision.decision == "ask":
            message = f"{decision.message}; {message}"
        return Decision("ask", decision.rule or "supervisor", message)
    if reviewed.flagged and decision.decision == "ask":
        return Decision(
            "ask", decision.rule, f"{decision.message}; supervisor flagged: {reviewed.note}"
        )
    return decision


def block_message(reviewed: Reviewed) -> str:
    if reviewed.record.get("verdict") == "block":
        return f"the supervisor blocked this call: {reviewed.note}"
    return (
        f"the supervisor could not review this call ({reviewed.note}), and the policy "
        '([supervisor] on_error = "deny") lets no call of this act run unreviewed'
    )
