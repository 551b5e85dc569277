"""A session's alerts: the policy's hooks fired on an event (a denial, a revert, a flag, a
supervisor's flag), each firing journaled as an `alert` record."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core import now

if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from ..gate import Call
    from ..journal import Record
    from ..policy import Alerts
    from .recorder import Recorder
    from .review_step import Reviewed
    from .scrub import Scrubber


class Alerting:
    """Fires the policy's hooks and journals that they fired."""

    def __init__(
        self, alerts: Alerts, scrubber: Scrubber, recorder: Recorder, workspace: Path
    ) -> None:
        self.alerts = alerts
        self.scrubber = scrubber
        self.recorder = recorder
        self.workspace = workspace

    def fire(self, event: str, seq: int, call: Record, **fields: Any) -> None:
        """Fire the hooks on an event, and journal that they fired."""
        if not self.alerts.listening(event):
            return
        payload: dict[str, Any] = {
            "session": self.recorder.session_id,
            "workspace": str(self.workspace),
            "seq": seq,
            "tool": call.get("tool"),
            "act": call.get("act"),
            "reason": call.get("reason") or _given(call, "reason"),
            "command": call.get("command") or _given(call, "command"),
            **fields,
        }
        payload = self.scrubber.scrub(payload)[0]
        fired = self.alerts.fire(event, payload)
        record = {"kind": "alert", "t": now(), "seq": seq, "event": event, "hooks": fired}
        self.recorder.record(record)

    def after(self, seq: int, call: Call, flags: list[dict[str, Any]], outcome: str) -> None:
        """Alerts on what a call that ran came to: a revert (the first one), a flag."""
        if not self.alerts.hooks:
            return
        base = {"tool": call.tool, "act": call.act, "reason": call.reason}
        base["command"] = call.describe()
        base = self.scrubber.scrub(base)[0]
        if call.act == "revert":
            if len(self.recorder.state.tally.reverts) <= 1:  # reverts that ran
                self.fire("first-revert", seq, base, outcome=outcome)
            self.fire("revert", seq, base, outcome=outcome)
        if flags:
            names = ", ".join(str(flag.get("flag")) for flag in flags)
            message = f"declared {call.act}, flagged {names}: {flags[0].get('message')}"
            self.fire("flag", seq, base, flags=flags, message=message)

    def reviewed(self, seq: int, call: Any, reviewed: Reviewed) -> None:
        """The `supervisor-flag` alert: a flag, a block, or a failed review."""
        if not reviewed.flagged:
            return
        args = call.args if isinstance(getattr(call, "args", None), dict) else {}
        describe = getattr(call, "describe", None)
        shown = {
            "tool": call.tool,
            "act": call.act,
            "reason": args.get("reason"),
            "command": describe() if describe is not None else args.get("command"),
        }
        verdict = reviewed.record.get("verdict") or "failed"
        self.fire(
            "supervisor-flag",
            seq,
            shown,
            verdict=verdict,
            note=reviewed.note,
            failure=reviewed.record.get("failure"),
            message=f"supervisor: {verdict}: {reviewed.note}",
        )


def _given(record: Record, key: str) -> Any:
    given = record.get("given")
    return given.get(key) if isinstance(given, dict) else None
