"""What stands between an accepted call and its run: the policy in force, the human who
approves, the alerts, and the scrubbing of secrets from everything recorded."""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

from ..approvals.approvers import choose
from ..approvals.request import Request
from ..core.fsutil import atomic_write
from ..core.redact import Redactor
from ..core.saferead import read_regular
from ..effects.tables import classifier
from ..policy.alerts import Alerts
from ..policy.extras import SIGNERS_MAX_BYTES
from ..policy.file import load_policy
from ..policy.rules import (
    Decision,
    Policy,
    call_facts,
    find_policy,
    paths_known,
    preset,
)

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping
    from pathlib import Path
    from typing import Any, BinaryIO

    from ..approvals.request import Approver, Request
    from ..effects.model import Effect
    from ..gate.check import Call


DEFAULT_APPROVAL_TIMEOUT = 600.0  # seconds
ALLOW = Decision("allow", None, "no policy rule applies")
#: Record fields written by the tool itself, never free text: not scanned for secrets.
PLAIN_FIELDS = frozenset(
    (
        *("kind", "t", "seq", "pid", "act", "mutating", "lines", "inputs", "evidence"),
        *("enforcement", "started", "session", "tool_version", "python", "decision", "channel"),
    )
)
SCRUB_CHUNK = 1 << 20  # output is scrubbed a chunk at a time, each cut after a newline


def _sha256(path: str) -> str | None:
    try:
        return hashlib.sha256(read_regular(path, SIGNERS_MAX_BYTES)).hexdigest()
    except OSError:
        return None


def workspace_policy(workspace: Path) -> Policy:
    """The workspace's `epistemic.toml` if it has one, else no policy (approve-none)."""
    path = find_policy(workspace)
    return load_policy(path) if path is not None else preset("approve-none")


class Guard:
    """The policy, approval channel, alerts and redactor of one session."""

    def __init__(
        self,
        policy: Policy,
        workspace: Path,
        pending: Path,
        timeout: float | None = None,
        channel: str | None = None,
        approver: Approver | None = None,
        recorded: Mapping[str, str] | None = None,
        key: str | None = None,
    ) -> None:
        self.policy = policy
        self.workspace = workspace
        self.pending = pending
        self.timeout = timeout or policy.approval_timeout or DEFAULT_APPROVAL_TIMEOUT
        self.channel = channel or policy.approval_channel or "auto"
        self._approver = approver
        self._given = approver is not None
        self.key = key  # the SSH key a terminal answer is signed with (None: find one)
        self.alerts = Alerts(policy.hooks, str(workspace))
        self.redactor = Redactor(os.environ, policy.secret_patterns, policy.secret_names)
        self._signers: dict[str, str] = {}
        self.ticket = ""  # the session's --ticket: the policy fact `ticket`
        for named, digest in (recorded or {}).items():  # the copies a session recorded
            copy = self.pending.parent / "signers" / digest
            if digest and copy.is_file():
                self._signers[named] = str(copy)
        for named in policy.signer_files():  # who may approve, as it stood when the session opened
            self.signers_for_file(named)

    @property
    def trivial(self) -> bool:
        """No rules and `allow` by default: nothing to record per call."""
        return not self.policy.rules and self.policy.default == "allow"

    def header(self) -> dict[str, Any]:
        """The policy in force, for the journal: its file and hash, and the hash of every
        allowed_signers file it names (who may approve is part of the policy)."""
        found: dict[str, Any] = {"source": self.policy.source, "sha256": self.policy.sha256}
        signers = self.policy.signer_files()
        if signers:  # the copies in force (a copy is named by its hash), else the file now
            found["signers"] = {path: self._signers_digest(path) for path in signers}
        return found

    def _signers_digest(self, named: str) -> str | None:
        copy = self._signers.get(named)
        if copy is not None and copy != named:
            return Path(copy).name
        return _sha256(named)

    def decide(
        self,
        call: Call,
        effect: Effect | None,
        counts: Mapping[str, int],
        rejections: int,
        seq: int,
    ) -> Decision:
        if self.trivial:  # no rule can say anything else: spare the facts (a shlex parse)
            return ALLOW
        effect = self._with_pwd(call, effect)
        facts = call_facts(
            tool=call.tool,
            act=call.act,
            mutating=call.mutating,
            command=call.describe(),
            reason=call.reason,
            paths=written_paths(call, effect, str(self.workspace)),
            effect=effect.cls if effect is not None else _file_effect(call),
            seq=seq,
            counts=dict(counts),
            reverts=int(counts.get("revert", 0)),
            rejections=rejections,
            effect_reasons=effect.reasons if effect is not None else (),
            paths_known=effect is None or paths_known(effect),
            ticket=self.ticket,
        )
        return self.policy.decide(facts)

    def _with_pwd(self, call: Call, effect: Effect | None) -> Effect | None:
        """A command that names its paths through $PWD, classified with the workspace put in
        (commands start there), so `$PWD/migrations/x` counts as `migrations/x`."""
        command = call.command or ""
        if effect is None or not effect.dynamic or "PWD" not in command:
            return effect

        return classifier()(re.sub(r"\$\{?PWD\}?(?![A-Za-z0-9_])", str(self.workspace), command))

    def request(
        self, seq: int, session: str, call: Call, effect: Effect | None, decision: Decision
    ) -> Request:
        text = self.redactor.text
        return Request(
            seq=seq,
            session=session,
            tool=call.tool,
            act=call.act,
            reason=text(call.reason)[0],
            command=text(call.describe())[0],
            paths=tuple(text(p)[0] for p in written_paths(call, effect, str(self.workspace))),
            effect=effect.cls if effect is not None else _file_effect(call),
            rule=decision.rule,
            message=decision.message,
            timeout=self.timeout,
            signatures=self.policy.signatures,
            signers=self.signers_for(decision.rule),
        )

    def signers_for_file(self, named: str) -> str:
        if named not in self._signers:
            self._signers[named] = self._copy_signers(named)
        return self._signers[named]

    def signers_for(self, rule: str | None) -> str | None:
        """The allowed_signers file that decides who may approve what `rule` asks about: a
        private copy of the one named, taken when the session opened. Who may approve is
        fixed for the session; a file swapped in later (by a rename of its folder, say) is
        not read."""
        named = self.policy.signers_for(rule)
        return None if named is None else self.signers_for_file(named)

    def _copy_signers(self, named: str) -> str:
        try:
            data = read_regular(named, SIGNERS_MAX_BYTES)
        except OSError:
            return named  # checked when used: an answer then does not count
        folder = self.pending.parent / "signers"
        folder.mkdir(parents=True, exist_ok=True)
        private = folder / hashlib.sha256(data).hexdigest()
        if not private.exists():
            atomic_write(private, data)
        return str(private)

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

    def approver(self) -> Approver:
        if self._approver is None:
            workspace = str(self.workspace)
            self._approver = choose(self.channel, self.pending, self.timeout, workspace, self.key)
        return self._approver

    def scrub_file(self, path: Path) -> int:
        """Replace secrets in a capture file before anyone reads it: one read when there are
        none (the usual case), else a rewrite; memory stays flat whatever the output's size."""
        try:
            if os.stat(path).st_size == 0:  # most stderr: nothing to open
                return 0
            with path.open("rb") as source:
                found = sum(self.redactor.data(chunk)[1] for chunk in _chunks(source))
        except FileNotFoundError:
            return 0
        if not found:
            return 0
        scrubbed = path.with_name(path.name + ".scrubbed")
        with path.open("rb") as source, scrubbed.open("wb") as target:
            for chunk in _chunks(source):
                target.write(self.redactor.data(chunk)[0])
        os.replace(scrubbed, path)
        return found

    def scrub(self, value: Any) -> tuple[Any, int]:
        """Any JSON-like value with every secret in its strings replaced by a marker. In a
        record, the fields that never hold free text are passed over (it runs on every call)."""
        if not isinstance(value, dict):
            return self.redactor.value(value)
        total, out = 0, {}
        for key, item in value.items():
            if key in PLAIN_FIELDS or not isinstance(item, str | dict | list):
                out[key] = item
                continue
            if key == "effect" and not total:  # derived from the command, which had none
                out[key] = item
                continue
            out[key], count = self.redactor.value(item)
            total += count
        return (out if total else value), total


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


def _file_effect(call: Call) -> str:
    return "mutating" if call.mutating else "read-only"


def _chunks(source: BinaryIO) -> Iterator[bytes]:
    """A file's bytes in pieces of about SCRUB_CHUNK, each ending at a line end where there is
    one: a secret within a line is never cut in two (a multi-line key block at a cut can be)."""
    carry = b""
    while block := source.read(SCRUB_CHUNK):
        block = carry + block
        cut = block.rfind(b"\n") + 1 or len(block)
        carry = block[cut:]
        yield block[:cut]
    if carry:
        yield carry
