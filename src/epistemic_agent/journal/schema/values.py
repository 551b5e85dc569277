"""The closed sets of values some fields hold, as `Literal` types. Where the vocabulary is
defined elsewhere (the acts, alert events, supervisor settings, policy decisions), a test
checks that these say the same."""

from __future__ import annotations

from typing import Literal

#: Every record kind this reader knows (docs/journal-format.md, "Record kinds").
RecordKind = Literal[
    "session",
    "call",
    "outcome",
    "rejected",
    "approval",
    "approval-rejected",
    "policy",
    "policy-ignored",
    "confinement",
    "relinked",
    "review",
    "alert",
    "run",
    "user",
    "model",
    "thinking",
    "compaction",
    "model-error",
    "text",
    "final",
    "interrupt",
    "stop",
    "closed",
    "recovery",
]
#: core/vocabulary.py's ACT_NAMES.
Act = Literal[
    "collect-info", "test-hypothesis", "verify", "change-state", "setup", "revert", "cleanup"
]
Tool = Literal["bash", "read_file", "write_file", "str_replace_edit"]
Mechanism = Literal["landlock+namespaces", "bwrap", "landlock", "none"]
Namespaces = Literal["root", "user"]
Signals = Literal["landlock-scope", "pid-namespace", "none"]
Enforcement = Literal["landlock", "bwrap", "none"]
ApprovalDecision = Literal["approved", "denied"]
#: policy/supervisor.py's ROLE, ON_ERROR.
Role = Literal["second-opinion"]
OnError = Literal["allow", "deny", "ask"]
Verdict = Literal["ok", "flag", "block"]
ReviewFailure = Literal["provider-error", "malformed", "over-budget"]
#: policy/alerts.py's EVENTS.
AlertEvent = Literal["first-revert", "revert", "rejection", "flag", "denial", "supervisor-flag"]
#: agent/loop.py's EXIT_CODES.
StopReason = Literal["finished", "max-steps", "rejections", "provider-error", "interrupted"]
Trigger = Literal["near-limit", "provider-limit"]
ThinkingBlock = Literal["thinking", "redacted_thinking", "reasoning"]
Mode = Literal["repl", "mcp"]
