"""What a call came to (`CallResult`) and the knobs of a session (`Settings`)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from ..core import field, struct
from ..execute import DEFAULT_IGNORE, DEFAULT_TIMEOUT, Platform
from ..gate import MIN_REASON
from ..journal import ASK, DEFAULT_CAP

if TYPE_CHECKING:
    from typing import Any


@struct
class Settings:
    """Knobs of a session; the defaults suit an agent."""

    timeout: float = DEFAULT_TIMEOUT
    output_limit: int = 16_000
    evidence_cap: int = DEFAULT_CAP
    min_reason: int = MIN_REASON
    enforce: bool = True  # confine every act (confinement.py); False: no confinement at all
    observe: bool = True  # record what each shell call changed in the workspace
    ignore: tuple[str, ...] = DEFAULT_IGNORE  # path components observation treats as noise
    approval_timeout: float | None = None  # seconds an `ask` waits (None: the policy's, or 600)
    approval_channel: str | None = None  # auto, terminal or file (None: the policy's, or auto)
    approval_key: str | None = None  # the SSH key a terminal answer is signed with (--key)
    platform: Platform | None = None  # what to confine with (None: what this machine has)
    hidden: tuple[str, ...] = ()  # paths no act may read (besides the record)
    decoys: tuple[tuple[str, str], ...] = ()  # (folder, decoy): acts see the decoy's tree there
    session: str | None = None  # "new", or a session's id (or unique prefix) to continue
    # Whether this process owns its session (`run`, `repl`, `mcp`): with `session` None it
    # starts a new one rather than continuing the newest open one, and it closes it at the end.
    owns_session: bool = False
    supervisor: str | None = None  # the supervisor's model (None: the policy's [supervisor])
    readable: tuple[str, ...] | None = None  # all acts may read besides their own (None: all)
    baseline: bool = True  # keep before-content of small text files: per-call diffs of shell acts


@struct(frozen=False)
class CallResult:
    """What one call came to. `status` is "ran", "rejected" (by the gate or a policy rule),
    "denied" (by the human asked to approve it, or an approval timeout) or "cancelled" (the
    caller gave up on it: withdrawn before it ran, or stopped while it ran)."""

    status: str
    seq: int
    tool: str
    act: str | None
    rule: str | None = None
    message: str | None = None
    returncode: int | None = None
    ok: bool = False
    stdout: str = ""
    stderr: str = ""
    outcome: str = ""
    duration: float = 0.0
    timed_out: bool = False
    flags: tuple[str, ...] = ()
    evidence: dict[str, Any] = field(default_factory=dict)  # name -> {sha256, bytes, kept}
    review: dict[str, Any] | None = None  # the supervisor's verdict and note, if it reviewed

    def to_json(self) -> dict[str, Any]:
        """The CLI's `--json` contract (fields may be added, never removed)."""
        return {
            "status": self.status,
            "rule": self.rule,
            "message": self.message,
            "returncode": self.returncode,
            "stdout": self.stdout,
            "stderr": self.stderr,
            "seq": self.seq,
            "tool": self.tool,
            "act": self.act,
            "ok": self.ok,
            "outcome": self.outcome,
            "duration": round(self.duration, 6),
            "timed_out": self.timed_out,
            "flags": list(self.flags),
            **({"review": self.review} if self.review is not None else {}),
        }

    def for_model(self) -> str:
        """The tool result text a model sees."""
        if self.status == "rejected":
            return f"REJECTED {self.rule}: {self.message}"
        if self.status == "denied":
            return f"DENIED: {self.message}"
        if self.status == "cancelled":
            return f"CANCELLED: {self.message}"
        if self.tool != "bash":
            return self.stdout if self.ok else f"ERROR: {self.outcome}"
        body: dict[str, Any] = {
            "returncode": self.returncode,
            "stdout": self.stdout,
            "stderr": self.stderr,
        }
        if self.timed_out:
            body["timed_out"] = True
        if self.act == "test-hypothesis" and self.status == "ran":
            body["belief"] = ASK
        return json.dumps(body, ensure_ascii=False)
