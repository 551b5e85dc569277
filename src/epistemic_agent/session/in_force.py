"""The policy in force in a session, and its decision on a call: the facts of the call (its
act, its command, the paths it writes, the session's tally so far) put to the policy."""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING

from ..effects import classifier
from ..gate import Rejected
from ..policy import Decision, Policy, call_facts, find_policy, load_policy, paths_known, preset

if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from ..approvals import Signers
    from ..effects import Effect
    from ..gate import Call
    from ..journal import SessionState

ALLOW = Decision("allow", None, "no policy rule applies")


def workspace_policy(workspace: Path) -> Policy:
    """The workspace's `epistemic.toml` if it has one, else no policy (approve-none)."""
    path = find_policy(workspace)
    return load_policy(path) if path is not None else preset("approve-none")


class PolicyInForce:
    """A session's policy, who may approve under it, and the `--ticket` it runs under."""

    def __init__(self, policy: Policy, workspace: Path, signers: Signers, ticket: str = ""):
        self.policy = policy
        self.workspace = workspace
        self.signers = signers
        self.ticket = ticket  # the policy fact `ticket`

    @property
    def trivial(self) -> bool:
        """No rules and `allow` by default: nothing to record per call."""
        return not self.policy.rules and self.policy.default == "allow"

    def header(self) -> dict[str, Any]:
        """The policy in force, for the journal: its file and hash, and the hash of every
        allowed_signers file it names (who may approve is part of the policy)."""
        found: dict[str, Any] = {"source": self.policy.source, "sha256": self.policy.sha256}
        if self.policy.signer_files():
            found["signers"] = self.signers.digests()
        return found

    def decide(self, call: Call, effect: Effect | None, state: SessionState, seq: int) -> Decision:
        """The policy's decision on `call`, the `seq`th of a session whose state is `state`."""
        if self.trivial:  # no rule can say anything else: spare the facts (a shlex parse)
            return ALLOW
        tally = state.tally  # the counts every reader shows
        counts = tally.so_far  # a call a human denied, or one that was stopped, did not happen
        effect = self._with_pwd(call, effect)
        facts = call_facts(
            tool=call.tool,
            act=call.act,
            mutating=call.mutating,
            command=call.describe(),
            reason=call.reason,
            paths=written_paths(call, effect, str(self.workspace)),
            effect=effect_class(call, effect),
            seq=seq,
            counts=dict(counts),
            reverts=int(counts.get("revert", 0)),
            rejections=tally.fates["rejected"],
            effect_reasons=effect.reasons if effect is not None else (),
            paths_known=effect is None or paths_known(effect),
            ticket=self.ticket,
        )
        return self.policy.decide(facts)

    def denial(self, call: Call, decision: Decision) -> Rejected:
        """A policy rule denies the call: journaled as a rejection citing the rule."""
        rule = decision.rule or "default"
        message = f"the policy denies this call (rule {rule}): {decision.message}"
        return Rejected("policy", message, call.tool, call.act, call.args)

    def _with_pwd(self, call: Call, effect: Effect | None) -> Effect | None:
        """A command that names its paths through $PWD, classified with the workspace put in
        (commands start there), so `$PWD/migrations/x` counts as `migrations/x`."""
        command = call.command or ""
        if effect is None or not effect.dynamic or "PWD" not in command:
            return effect
        return classifier()(re.sub(r"\$\{?PWD\}?(?![A-Za-z0-9_])", str(self.workspace), command))


def written_paths(call: Call, effect: Effect | None, workspace: str = "") -> list[str]:
    """What the call writes or deletes, as far as is known before it runs: relative to the
    workspace wherever they lie inside it (`$PWD/migrations/x` is `migrations/x`)."""
    if effect is not None:
        paths = effect.to_json().get("paths", [])
        found = [str(p) for p in paths] if isinstance(paths, list) else []
    elif call.tool in ("write_file", "str_replace_edit") and call.path is not None:
        found = [call.path]
    else:
        return []
    return [relative(path, workspace) for path in found]


def relative(path: str, workspace: str) -> str:
    """`path` normalised, and made relative when it lies inside `workspace` (absolute)."""
    norm = os.path.normpath(path)
    if not os.path.isabs(norm) or not workspace:
        return norm
    if norm == workspace:
        return "."
    return norm[len(workspace) + 1 :] if norm.startswith(workspace + "/") else norm


def effect_class(call: Call, effect: Effect | None) -> str:
    """The effect's class of a command; a file tool's is its act's."""
    if effect is not None:
        return effect.cls
    return "mutating" if call.mutating else "read-only"
