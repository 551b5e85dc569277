"""A session: gate, journal, executor and report wired together. The Python API."""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

from ..checks import consistency
from ..core.clock import now
from ..core.identity import git_head, user
from ..core.layout import RECORD_DIR, REPORT_NAMES, Layout, ignore_record
from ..core.outcome_line import excerpt
from ..core.structs import field, struct
from ..core.version import __version__
from ..effects.cache import EffectCache
from ..effects.classify import Effect
from ..execute.files import precheck, run_file_tool
from ..execute.observe.base import Observer
from ..execute.observe.registry import best_observer, outside_observer
from ..execute.sandbox.confinement import Confinement, ConfinementError, unmet
from ..execute.sandbox.platform import Platform, detect
from ..execute.shell import Execution, bounded_text, run_shell
from ..gate.check import Call, GateConfig, Rejected, check
from ..journal.catalog import choosing, for_writing
from ..journal.evidence import EvidenceStore
from ..journal.log import Record
from ..journal.records import call_record, outcome_record, rejected_record
from ..journal.writer import JournalWriter
from ..policy.rules import PolicyError
from ..reports.rationale.report import Report
from .git_step import HOOK, commit_flag, head_commit, is_installed
from .guard import Guard, workspace_policy
from .policy_step import PolicyCalls, decision_json
from .recovery import Orphan, Recovery
from .results import CallResult, Settings
from .review_step import ReviewCalls, block_message, flagged_decision
from .trace_step import TraceCalls

if TYPE_CHECKING:
    from typing import Any

    from ..core.cancel import Cancel
    from ..execute.reaper import Reaper
    from ..policy.rules import Decision, Policy
    from .approval import Approver
    from .review_step import Reviewed
    from .supervisor import Supervisor

__all__ = ["CallResult", "OutputSink", "Session", "Settings"]

OutputSink = Callable[[Execution], None]
DeclaredSink = Callable[["Record"], None]  # the call as journaled, before it runs


@struct(frozen=False)
class Session(PolicyCalls, ReviewCalls, TraceCalls):
    """Gated, journaled tool calls in one workspace. Continues the workspace's journal if any."""

    workspace: Path
    settings: Settings = field(default_factory=Settings)
    header: dict[str, Any] = field(default_factory=dict)
    policy: Policy | None = None  # None: the workspace's epistemic.toml, else approve-none
    approver: Approver | None = None  # None: the terminal if there is one, else files
    policy_implicit: bool = False  # `policy` is the workspace's own, found rather than named
    supervisor: Supervisor | None = None  # None: Settings.supervisor's or the policy's, if any

    def __post_init__(self) -> None:
        self.workspace = Path(self.workspace).resolve()
        if not self.workspace.is_dir():
            raise NotADirectoryError(f"workspace {self.workspace} is not a directory")
        implicit = self.policy is None or self.policy_implicit
        if self.policy is None:  # before anything is written: a broken policy stops here
            self.policy = workspace_policy(self.workspace)
        self._closed = False
        self._stopped: object = None  # the agent loop's last stop reason (see `end`)
        self._ended = False
        self.layout = Layout(self.workspace)  # the workspace's paths, until a session is chosen
        self.platform = self._platform()
        self._require_confinement(self.policy)
        self.policy.check_signers()
        if self.supervisor is None:
            self.supervisor = supervisor_for(self.policy, self.settings.supervisor)
        with choosing(self.workspace):  # which session, chosen and (if new) begun at once
            self.layout = for_writing(
                self.workspace, self.settings.session, self.settings.owns_session
            )
            refused = self._open(implicit)
        if refused is not None:
            self._closed = True  # nothing more is appended to a session that may not go on
            self.journal.close()
            raise PolicyError(refused)
        self.baseline = self._baseline()

    def _open(self, implicit: bool) -> str | None:
        """Open the session's journal (writing its header when it is new); why a session it
        continues may not go on under the policy found, if so."""
        assert self.policy is not None
        self._env: dict[str, str] | None = None
        self._scratch: Path | None = None
        self._running: dict[int, set[int]] = {}  # seq -> other calls running when declared
        self._last_outcome: object = None
        self._reaper_made: Reaper | None = None
        self.guard = Guard(
            self.policy,
            self.workspace,
            self.layout.pending,
            self.settings.approval_timeout,
            self.settings.approval_channel,
            self.approver,
        )
        token = f"call-{os.getpid()}-{os.urandom(4).hex()}"
        self._capture = (self.layout.scratch / f"{token}.out", self.layout.scratch / f"{token}.err")
        self.report = Report(self.layout)
        self.journal = JournalWriter(self.layout.journal, self.report.fold, self.layout.head)
        self.evidence = EvidenceStore(self.layout.evidence, self.settings.evidence_cap)
        self.effects = EffectCache(self.layout.effects_cache, self._no_secret)
        self.gate = GateConfig(
            str(self.workspace),
            self.settings.min_reason,
            _temp(self.workspace),
            self.effects.classify,
        )
        self.guard.alerts.runner = self._run_hook
        ticket = self.header.get("ticket")
        self.ticket = ticket if isinstance(ticket, str) and ticket else None  # --ticket
        self.guard.ticket = self.ticket or ""
        if not self.journal.open(self.report.load_checkpoint()):
            self.report.reset()
        ignore_record(self.layout.record)  # new workspaces and older ones alike
        relinked = list(self.journal.relinked)
        refused = None
        with self.journal.locked():
            self.created = self.journal.position.lines == 0
            new_id = self.layout.session_folder_id or os.urandom(16).hex()
            self.confinement = self._confinement(new_id if self.created else self.session_id)
            if self.created:
                self.journal.append(self._session_record(new_id), durable=True)
                self._publish()
            elif implicit and (refused := self._policy_refused()) is not None:
                pass
            else:
                self._keep_chain_notice()
                self._recover()
                self._note_changes()
            if relinked and refused is None:
                message = (
                    f"{', '.join(relinked)} had another hard link (a name elsewhere that could "
                    "write the record); each was moved to a file of its own first"
                )
                record = {"kind": "relinked", "t": now(), "files": relinked, "message": message}
                self.journal.append(record, durable=True)
        return refused

    def _keep_chain_notice(self) -> None:
        """A session that goes on in a journal whose chain does not verify (a line edited by
        hand) says so first in every report it writes from now on, as `epistemic report`
        does: what it appends does not make the earlier record trustworthy again."""
        from ..journal.notice import check_journal, notice
        from ..journal.reading import read_numbered
        from ..journal.verify import INTACT, TORN

        result = check_journal(self.layout.journal)
        if result.status not in (INTACT, TORN):  # a torn tail is a crash, closed on open
            numbered, _ = read_numbered(self.layout.journal)
            self.report.warning = notice(result, numbered)

    def _platform(self) -> Platform:
        if self.settings.platform is not None:
            return self.settings.platform
        if not self.settings.enforce:
            off = "turned off by the caller (Settings.enforce=False)"
            return Platform(None, off, None, off, None, off)
        return detect()

    def _require_confinement(self, policy: Policy) -> None:
        """A policy that requires guarantees this machine cannot give stops the session here,
        before anything is written."""
        if policy.require_confinement:
            problem = unmet(policy.require_confinement, self._confinement(""))
            if problem is not None:
                raise PolicyError(f"{policy.source}: {problem}")

    def _confinement(self, session_id: str) -> Confinement:
        assert self.policy is not None
        guarded = [self.layout.report, *self.layout.spares]
        if not self.policy.source.startswith("preset:"):
            guarded.append(Path(self.policy.source).resolve())
        signers = [self.policy.allowed_signers, *(r.allowed_signers for r in self.policy.rules)]
        guarded += [Path(path) for path in dict.fromkeys(signers) if path]
        guarded += [path for path in self.layout.client_settings() if path.exists()]
        if self.supervisor is not None:
            guarded += self.supervisor.files
        if is_installed(self.workspace):  # the trailers hook: not a boundary, but not theirs
            guarded.append(self.workspace / ".git" / "hooks" / HOOK)
        return Confinement(
            self.platform,
            self.workspace,
            self._scratch_path(session_id),
            self.layout.record,
            tuple(guarded),
            self.policy.writable,
            tuple(Path(path) for path in self.settings.hidden),
            secrets=self.policy.hidden,
            covers=tuple((Path(path), Path(decoy)) for path, decoy in self.settings.decoys),
            readable=_as_paths(self.settings.readable),
        )

    def _recover(self) -> None:
        """Close the calls a killed session left without an outcome (recovery.py)."""
        history = self.report.history
        orphans = [
            Orphan(
                seq,
                history.pending.get(seq, ""),
                d.get("pid"),
                d.get("t", ""),
                bool(d.get("asked")),
                bool(d.get("answered")),
            )
            for seq, d in history.declared.items()
        ]
        ignored = frozenset((*self.settings.ignore, RECORD_DIR, *REPORT_NAMES))
        recovery = Recovery(self.workspace, self.layout.scratch, self.evidence, self.guard, ignored)
        recovered = recovery.outcomes(orphans) if orphans else []
        for record in recovered:
            scrubbed, redacted = self.guard.scrub(record)
            if redacted:
                scrubbed["redacted"] = redacted
            self.journal.append(scrubbed, durable=True)
        if self.layout.scratch.is_dir():
            recovery.sweep(live=set())
        if recovered:
            self._publish()

    def _note_changes(self) -> None:
        """A later process under another policy or another confinement says so in the journal."""
        session = self.report.totals.session
        if session.get("policy") != self.guard.header():
            record = {"kind": "policy", "t": now(), **self.guard.header()}
            self.journal.append(record, durable=True)
            self._publish()
        header = self.confinement.header()
        if _confinement_key(session.get("confinement")) != _confinement_key(header):
            record = {"kind": "confinement", "t": now(), **header}
            self.journal.append(record, durable=True)
            self._publish()

    def _policy_refused(self) -> str | None:
        """Why a session continued under a policy it merely found may not go on: the policy
        it was under is gone, or another one is in its place (a file that appeared, or
        changed, or allowed signers that changed). A policy is changed by a human, who names
        it; an agent's act could have written the one found here."""
        last = self.report.totals.session.get("policy")
        if not isinstance(last, dict):
            return None
        source = last.get("source")
        from_file = isinstance(source, str) and not source.startswith("preset:")
        if from_file and not os.path.exists(str(source)):
            return (
                f"{source}: the policy this session was under is gone. Restore it, or name "
                "the policy to use now (--policy FILE, --approve mutating|none, --read-only)."
            )
        now_in_force = self.guard.header()
        if {k: last.get(k) for k in now_in_force} == now_in_force:
            return None
        return (
            f"the policy found in the workspace ({now_in_force['source']}, sha256 "
            f"{str(now_in_force['sha256'])[:12]}) is not the one this session was under "
            f"({source}, sha256 {str(last.get('sha256'))[:12]}): it appeared or changed since. "
            "A policy is changed by a human: to go on under it, name it (--policy FILE); or "
            "restore the one the session was under."
        )

    def _no_secret(self, text: str) -> bool:
        return self.guard.redactor.text(text)[1] == 0

    @property
    def session_id(self) -> str:
        return str(self.report.totals.session.get("session", ""))

    def __enter__(self) -> Session:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Save where the report stands (the next process resumes there) and close the journal."""
        if not self._closed:
            self._closed = True
            if self.settings.owns_session:
                self.end()
            self.report.save_checkpoint(self.journal.position)
            self.effects.save()
            baseline = getattr(self, "baseline", None)  # None: closed before it was made
            if baseline is not None:
                baseline.prune()
            self.journal.close()
            for path in self._capture:  # empty capture files kept for reuse
                path.unlink(missing_ok=True)

    def end(self) -> None:
        """The process that owns the session (`run`, `repl`, `mcp`) ends it with a `closed`
        record: `exec` and `tool` no longer continue it (catalog.py reads a session's status
        from it). Once; `close` does it for an owner that did not."""
        if self._ended:
            return
        self._ended = True
        with self.journal.locked():
            stop = self._stopped if isinstance(self._stopped, str) else None
            self.journal.append({"kind": "closed", "t": now(), "stop": stop}, durable=True)
            self._publish()

    # -- the four tools --------------------------------------------------------------------

    def bash(self, command: str, type: str, reason: str) -> CallResult:
        return self.call("bash", {"command": command, "type": type, "reason": reason})

    def read_file(
        self, path: str, reason: str, start_line: int | None = None, end_line: int | None = None
    ) -> CallResult:
        args: dict[str, Any] = {"path": path, "reason": reason}
        if start_line is not None:
            args["start_line"] = start_line
        if end_line is not None:
            args["end_line"] = end_line
        return self.call("read_file", args)

    def write_file(self, path: str, content: str, reason: str) -> CallResult:
        return self.call("write_file", {"path": path, "content": content, "reason": reason})

    def str_replace_edit(self, path: str, old: str, new: str, reason: str) -> CallResult:
        return self.call(
            "str_replace_edit", {"path": path, "old": old, "new": new, "reason": reason}
        )

    def call(
        self,
        tool: object,
        args: object,
        on_output: OutputSink | None = None,
        cancel: Cancel | None = None,
        on_declared: DeclaredSink | None = None,
    ) -> CallResult:
        """Gate, journal and run one call exactly as a model would send it. A `cancel` set
        from another thread withdraws its approval request, or stops its command.
        `on_declared` hears the call record as journaled (its seq included), before it runs."""
        verdict = check(tool, args, self.gate)
        effect = None
        if isinstance(verdict, Call) and verdict.path is not None:
            verdict = precheck(verdict, self.workspace) or verdict
        elif isinstance(verdict, Call) and verdict.command is not None:
            effect = self.effects.classify(verdict.command)
            started = float(self.report.totals.session.get("started_epoch", 0.0))
            history = self.report.history
            verdict = consistency.precheck(verdict, effect, history, started) or verdict
        if isinstance(verdict, Rejected):
            return self.reject(verdict)
        decision = self._decide(verdict, effect)
        if decision.decision == "deny":
            return self._deny(verdict, decision)
        reviewed = self._review(verdict, effect)
        if reviewed is not None and reviewed.action == "block":
            rejected = Rejected(
                "supervisor", block_message(reviewed), verdict.tool, verdict.act, verdict.args
            )
            return self.reject(rejected, review=reviewed)
        if reviewed is not None:
            decision = flagged_decision(decision, reviewed)
        inputs = self._store_inputs(verdict)
        record = call_record(0, verdict, inputs)
        if self.ticket is not None:
            record["ticket"] = self.ticket
        if effect is not None:
            record["effect"] = effect.to_json()
        if not self.guard.trivial or decision.decision == "ask":
            record["policy"] = decision_json(decision)
        belief = self._belief_given(verdict)
        if belief is not None:
            record["belief"] = belief
        record, redacted = self.guard.scrub(record)
        if redacted:
            record["redacted"] = redacted
        with self.journal.locked():
            seq = record["seq"] = self.journal.position.last_seq + 1
            if reviewed is not None:  # the second opinion, durable before the call it is on
                self.journal.append({**reviewed.record, "seq": seq}, durable=True)
            # Durable before the effect, and shown in the report at once (as running, or
            # waiting for approval) before anything runs.
            self.journal.append(record, durable=True)
            declared = self.journal.position.head  # what a signed approval binds
            self._publish()
            self._running[seq] = set(self.report.history.pending) - {seq}
        if reviewed is not None:
            self._review_alert(seq, verdict, reviewed)
        announce = None if on_declared is None else partial(on_declared, dict(record))
        result = self._proceed(
            seq, verdict, effect, decision, (on_output, cancel, announce), declared
        )
        if reviewed is not None:
            result.review = reviewed.summary()
        return result

    def _proceed(
        self,
        seq: int,
        verdict: Call,
        effect: Effect | None,
        decision: Decision,
        hooks: tuple[OutputSink | None, Cancel | None, Callable[[], None] | None],
        declared: str,
    ) -> CallResult:
        """Ask (when the policy says so), then run a declared call and record its outcome.
        `hooks`: where its output goes, what cancels it, and what hears it declared."""
        on_output, cancel, announce = hooks
        try:
            if announce is not None:
                announce()
            if decision.decision == "ask":
                answer = self._ask(seq, verdict, effect, decision, cancel, declared)
                if answer.decision == "cancelled":
                    return self._cancelled(seq, verdict, answer.comment, answer.by, False)
                if not answer.approved:
                    return self._denied(seq, verdict, decision, answer)
            if cancel is not None and cancel.is_set():
                return self._cancelled(seq, verdict, cancel.describe(), cancel.by, False)
            if verdict.tool == "bash":
                return self._run_bash(seq, verdict, effect, on_output, cancel)
            return self._run_file_tool(seq, verdict)
        except BaseException:
            if self._last_outcome == seq:  # recorded already; the caller's sink failed after
                raise
            self._record(
                {
                    "kind": "outcome",
                    "seq": seq,
                    "t": now(),
                    "ok": False,
                    "outcome": "interrupted before the call finished",
                    "interrupted": True,
                }
            )
            raise

    def reject(
        self, rejected: Rejected, policy: Decision | None = None, review: Reviewed | None = None
    ) -> CallResult:
        """Journal a refused call (it never runs) and return it as a result."""
        record = rejected_record(0, rejected)
        if policy is not None:
            record["policy"] = decision_json(policy)
        record, redacted = self.guard.scrub(record)
        if redacted:
            record["redacted"] = redacted
        with self.journal.locked():
            seq = record["seq"] = self.journal.position.last_seq + 1
            if review is not None:
                self.journal.append({**review.record, "seq": seq}, durable=True)
            self.journal.append(record, durable=False)
            self._publish()
        if review is not None:
            self._review_alert(seq, rejected, review)
        event = "denial" if policy is not None else "rejection"
        rule = (policy.rule or "default") if policy is not None else record["rule"]
        self._alert(event, seq, record, rule=rule, message=record["message"])
        result = CallResult(
            "rejected", seq, rejected.tool, rejected.act, record["rule"], record["message"]
        )
        if review is not None:
            result.review = review.summary()
        return result

    def event(self, kind: str, **fields: Any) -> None:
        """Journal a record that is not a tool call (a model call, the model's text, a stop)."""
        scrubbed, redacted = self.guard.scrub(fields)
        if kind == "stop":
            self._stopped = fields.get("reason")
        if redacted:
            scrubbed["redacted"] = redacted
        self._record({"kind": kind, "t": now(), **scrubbed})

    # -- internals -------------------------------------------------------------------------

    def _run_bash(
        self,
        seq: int,
        call: Call,
        effect: Effect | None,
        on_output: OutputSink | None,
        cancel: Cancel | None = None,
    ) -> CallResult:
        assert call.command is not None
        assert call.act is not None
        launch = self.confinement.launch(call.act, self._capture)
        enforcement = self._enforcement(call)
        ignored = (*self.settings.ignore, RECORD_DIR, *REPORT_NAMES)  # the record: always
        observer = best_observer(self.workspace, ignored) if self.settings.observe else None
        outside = self._outside_observers(call.act)
        hooked = call.mutating and is_installed(self.workspace)  # watch the commits it makes
        branch = head_commit(self.workspace) if hooked else None
        for watcher in (observer, *outside.values()):
            if watcher is not None:
                watcher.start()
        try:
            done = run_shell(
                call.command,
                self.workspace,
                self.settings.timeout,
                self.layout.scratch,
                launch=launch,
                env=self._call_env(seq, hooked),
                on_slow=self._publish_in_flight,
                capture=self._capture,
                reaper=self._reaper(),
                cancel=cancel,
            )
        except ConfinementError as error:
            for watcher in (observer, *outside.values()):
                if watcher is not None:
                    watcher.finish()
            return self._not_confined(seq, call, error)
        changes = observer.finish() if observer is not None else None
        elsewhere = {folder: watcher.finish() for folder, watcher in outside.items()}
        tampered = self.journal.restore_if_gone()
        redacted = sum(self.guard.scrub_file(path) for path in (done.stdout, done.stderr))
        limit = self.settings.output_limit
        stdout, stderr = bounded_text(done.stdout, limit), bounded_text(done.stderr, limit)
        sink_error: Exception | None = None
        if on_output is not None:
            try:
                on_output(done)
            except Exception as error:  # the caller's problem must not falsify the record
                sink_error = error
        evidence = {
            name: ref.to_json()
            for name, path in (("stdout", done.stdout), ("stderr", done.stderr))
            if (ref := self.evidence.adopt(path)) is not None
        }
        if changes is not None and not changes.empty:
            refs, kept, more = self._versions(
                [*changes.created, *changes.modified, *changes.deleted]
            )
            evidence.update(refs)
            redacted += more
        ok = done.returncode == 0 and not done.timed_out
        others = self._others(seq, call)
        history = self.report.history
        raised = consistency.flags(
            call, effect, changes, enforcement, done.returncode, stderr, history, others
        )
        outcome = _summarise(done, stdout, stderr, self.settings.timeout)
        if done.cancelled and cancel is not None:
            outcome = f"{cancel.describe()}; the command was stopped while it ran"
        extra: dict[str, Any] = {
            "returncode": done.returncode,
            "timed_out": done.timed_out,
            "enforcement": enforcement,
            "confinement": self.confinement.mechanism,
        }
        if changes is not None:
            extra["observed"] = _capped(changes.to_json())
            if not changes.empty:
                extra.update(kept)
        touched = {folder: _capped(seen.to_json()) for folder, seen in elsewhere.items()}
        if any(not seen.empty for seen in elsewhere.values()):
            extra["outside"] = touched
        if tampered:
            raised.append(
                {
                    "flag": "record-tampered",
                    "message": "the command deleted or "
                    "replaced .epistemic/journal.jsonl; it was restored from the open "
                    "file, whole, before this outcome was recorded",
                }
            )
        if hooked:
            commits = self._commits(branch)
            if commits:
                extra["commits"] = commits
                flag = commit_flag(commits)
                raised += [flag] if flag is not None else []
        if raised:
            extra["flags"] = raised
        if redacted:
            extra["redacted"] = redacted
        if done.cancelled and cancel is not None:
            ok = False
            extra.update(cancelled=True, cancelled_by=cancel.by)
        self._record(outcome_record(seq, ok, outcome, done.duration, evidence, **extra))
        self._after(seq, call, raised, outcome)
        if sink_error is not None:
            raise sink_error
        return CallResult(
            "cancelled" if done.cancelled else "ran",
            seq,
            "bash",
            call.act,
            message=outcome if done.cancelled else None,
            returncode=done.returncode,
            ok=ok,
            stdout=stdout,
            stderr=stderr,
            outcome=outcome,
            duration=done.duration,
            timed_out=done.timed_out,
            flags=tuple(flag["flag"] for flag in raised),
            evidence=evidence,
        )

    def _others(self, seq: int, call: Call) -> consistency.Others:
        """Who else may have changed the workspace while this call ran: calls of other
        processes still running when it was declared, or declared since; and, for an
        observation the kernel kept from writing, anyone at all."""
        before = self._running.pop(seq, set())
        with self.journal.locked():  # read what other writers appended meanwhile
            last = self.journal.position.last_seq
        entries = self.report.entries
        since = {
            n
            for n in range(seq + 1, last + 1)
            if n not in entries or entries[n].status != "rejected"
        }
        sealed = not call.mutating and self.confinement.held >= SEALED
        return consistency.Others(tuple(sorted(before | since)), sealed)

    def _run_hook(
        self, command: str, data: bytes, env: dict[str, str], timeout: float
    ) -> dict[str, Any]:
        """An alert hook's command, confined like an observation, from the scratch folder: it
        reads and reaches the network, but writes nothing but scratch, and what it starts
        ends with it. Its output goes to our stderr."""
        import sys

        scratch = self.scratch_dir()
        event = scratch / f"event-{os.urandom(6).hex()}.json"
        event.write_bytes(data)
        launch = self.confinement.launch("collect-info")
        try:
            done = run_shell(
                command,
                scratch,
                timeout,
                self.layout.scratch,
                launch=launch,
                env={
                    **self._command_env(),
                    **{k: v for k, v in env.items() if k.startswith("EPISTEMIC_")},
                },
                reaper=self._reaper(),
                stdin=event,
                program="/bin/sh",
            )
        except (OSError, ConfinementError) as error:
            return {"ok": False, "error": f"cannot start: {error.strerror or error}"}
        finally:
            event.unlink(missing_ok=True)
        for path in (done.stdout, done.stderr):
            text = bounded_text(path, self.settings.output_limit)
            if text:
                print(text, end="" if text.endswith("\n") else "\n", file=sys.stderr)
        done.discard()
        if done.timed_out:
            return {"ok": False, "error": f"timed out after {timeout:g} s", "returncode": None}
        took = round(done.duration, 3)
        return {"ok": done.returncode == 0, "returncode": done.returncode, "duration": took}

    def _outside_observers(self, act: str) -> dict[str, Observer]:
        """Watchers for the folders outside the workspace this act may write (its grants)."""
        if not self.settings.observe or self.confinement.mechanism == "none":
            return {}
        view = self.confinement.view(act)
        inside = (self.confinement.workspace, self.confinement.scratch)
        folders = [folder for folder in view.writable if folder not in inside]
        return {folder: outside_observer(Path(folder)) for folder in folders}

    def _enforcement(self, call: Call) -> str:
        """How the workspace was kept read-only for this call (`none` for a mutating act)."""
        mechanism = self.confinement.mechanism
        if call.mutating or mechanism == "none":
            return "none"
        return "bwrap" if mechanism == "bwrap" else "landlock"

    def _command_env(self) -> dict[str, str]:
        """The environment as the session found it, less the hidden agents' sockets, with
        TMPDIR on the scratch folder (built once per session)."""
        if self._env is None:
            hidden = self.confinement.hidden_env()
            kept = {name: value for name, value in os.environ.items() if name not in hidden}
            self._env = {**kept, "TMPDIR": str(self.scratch_dir())}
        return self._env

    def _not_confined(self, seq: int, call: Call, error: ConfinementError) -> CallResult:
        """The sandbox could not be made: the command did not run, and the record says why."""
        outcome = f"not run: {error.strerror or error}"
        self._record(
            outcome_record(
                seq, False, outcome, 0.0, {}, confinement=self.confinement.mechanism, not_run=True
            )
        )
        return CallResult("ran", seq, "bash", call.act, ok=False, outcome=outcome)

    def _reaper(self) -> Reaper:
        """Catches what a command leaves running outside its group (made once: ctypes)."""
        if self._reaper_made is None:
            from ..execute.reaper import Reaper

            self._reaper_made = Reaper()
        return self._reaper_made

    @property
    def capture_files(self) -> tuple[Path, Path]:
        """Where a running command's stdout and stderr are being written (a live view may
        read them while it runs; they are not the record: evidence is)."""
        return self._capture

    def scratch_dir(self) -> Path:
        """This session's scratch folder, outside the workspace: $TMPDIR for its commands."""
        if self._scratch is None:
            folder = Path(self.confinement.scratch)
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            self._scratch = folder
        return self._scratch

    def _scratch_path(self, session_id: str) -> Path:
        return Path(_temp(self.workspace)) / "epistemic" / (session_id[:16] or "session")

    def _run_file_tool(self, seq: int, call: Call) -> CallResult:
        assert call.act is not None
        started = time.monotonic()
        before = self._before(call)
        work = partial(run_file_tool, call, self.workspace, self.settings.output_limit)
        try:
            self.scratch_dir()
            done = self.confinement.run(call.act, work)
        except ConfinementError as error:
            return self._not_confined(seq, call, error)
        duration = time.monotonic() - started
        name = "content" if call.tool == "read_file" else "diff"
        blob, redacted = self.guard.redactor.data(done.evidence)
        text, more = self.guard.redactor.text(done.text)
        outcome, most = self.guard.redactor.text(done.outcome)
        ref = self.evidence.put(blob)
        evidence = {name: ref.to_json()} if ref is not None else {}
        extra: dict[str, Any] = {}
        if redacted + more + most:
            extra["redacted"] = redacted + more + most
        if call.tool != "read_file" and done.ok:
            if before is not None and done.evidence:
                _, kept, more = self._versions([str(call.path)], before, with_diff=False)
                extra.update(kept)
                if more:
                    extra["redacted"] = extra.get("redacted", 0) + more
            key = "created" if done.outcome.startswith("created") else "modified"
            changed = [call.path] if done.evidence else []  # an empty diff changed nothing
            extra["observed"] = {
                "created": [],
                "modified": [],
                "deleted": [],
                key: changed,
                "method": "file-tool",
            }
            if not changed:
                extra["flags"] = [
                    {
                        "flag": "no-change",
                        "message": "declared change-state, but the new content equals the old",
                    }
                ]
        self._record(outcome_record(seq, done.ok, outcome, duration, evidence, **extra))
        self._after(seq, call, extra.get("flags", []), outcome)
        return CallResult(
            "ran",
            seq,
            call.tool,
            call.act,
            ok=done.ok,
            stdout=text if done.ok else "",
            outcome=outcome,
            duration=duration,
            evidence=evidence,
        )

    def _store_inputs(self, call: Call) -> dict[str, Any] | None:
        """Large inputs (new content, edit texts) go to evidence before the declaration."""
        keys = [k for k in ("content", "old", "new") if k in call.args]
        if not keys:
            return None
        inputs, _ = self.guard.scrub({k: call.args[k] for k in keys})
        blob = json.dumps(inputs, ensure_ascii=False).encode("utf-8", "surrogateescape")
        ref = self.evidence.put(blob)
        return ref.to_json() if ref is not None else None

    def _record(self, record: Record) -> None:
        if record.get("kind") == "outcome":
            self._last_outcome = record.get("seq")
            record, redacted = self.guard.scrub(record)  # observed paths, flag messages
            if redacted:
                record["redacted"] = int(record.get("redacted", 0)) + redacted
        with self.journal.locked():
            self.journal.append(record, durable=False)
            self._publish()

    def _publish_in_flight(self) -> None:
        """A command that takes a while shows in RATIONALE.md as running (outcome unknown)."""
        with self.journal.locked():
            self._publish()

    def _publish(self) -> None:
        """Re-render the report and move the head anchor (caller holds the journal lock).
        The report's spares stay in place: acts see all three read-only (confine.py), so the
        swap that replaces the report never leaves a writable one in their view."""
        position = self.journal.position
        self.report.write(position)
        self.journal.write_anchor()
        for spare in self.layout.spares:
            if not spare.exists():
                spare.touch()

    def _git_head(self) -> str | None:
        """`git rev-parse HEAD`, confined like an observation: the workspace's git config and
        hooks are the agent's to change, so git runs with no more rights than its acts."""
        try:
            return self.confinement.run("collect-info", partial(git_head, self.workspace))
        except ConfinementError:
            return None

    def _session_record(self, session_id: str) -> Record:
        record: Record = {
            "kind": "session",
            "session": session_id,
            "started": now(),
            "started_epoch": time.time(),
            "tool_version": __version__,
            "workspace": str(self.workspace),
            "git_head": self._git_head(),
            "user": user(),
            "host": os.uname().nodename,
            "pid": os.getpid(),
            "python": sys.version.split()[0],
        }
        record.update(self.guard.scrub(self.header)[0])
        if self.supervisor is not None:
            from .supervisor import ROLE

            spec = self.supervisor.spec.with_model(self.supervisor.model)
            record["supervisor"] = {**spec.to_json(), "role": ROLE}
        record["policy"] = self.guard.header()
        record["confinement"] = self.confinement.header()
        return record


def supervisor_for(policy: Policy, model: str | None) -> Supervisor | None:
    """The supervisor `--supervisor` or the policy's [supervisor] names (the flag's model over
    the file's, with the file's other settings); None when neither names a model."""
    from ..policy.supervisor import SupervisorSpec

    spec = (policy.supervisor or SupervisorSpec()).with_model(model)
    if spec.model is None:
        return None
    from .supervisor import make_supervisor

    return make_supervisor(spec)


OBSERVED_CAP = 200
#: What makes an observation's observed writes someone else's: it could not have made them.
SEALED = frozenset({"observations-write-scratch-only", "observations-keep-metadata"})


def _confinement_key(header: object) -> object:
    """What makes two confinements the same for the record: mechanism and what is not held."""
    if not isinstance(header, dict):
        return None
    grants, readable = header.get("grants"), header.get("readable")
    return header.get("mechanism"), header.get("not_held"), grants, readable


def _as_paths(paths: tuple[str, ...] | None) -> tuple[Path, ...] | None:
    return None if paths is None else tuple(Path(path) for path in paths)


def _temp(workspace: Path) -> str:
    """The system temp directory, for scratch files; never one inside the workspace."""
    for candidate in (os.environ.get("TMPDIR"), "/tmp", "/var/tmp"):
        if candidate:
            folder = os.path.realpath(candidate)
            if not (folder + "/").startswith(str(workspace) + "/"):
                return folder
    return str(workspace.parent)


def _capped(observed: dict[str, Any]) -> dict[str, Any]:
    """An `npm install` creates thousands of files: keep the first OBSERVED_CAP of each list."""
    for key in ("created", "modified", "deleted"):
        paths = observed.get(key, [])
        if len(paths) > OBSERVED_CAP:
            observed[key] = paths[:OBSERVED_CAP]
            observed[f"{key}_total"] = len(paths)
    return observed


def _summarise(done: Execution, stdout: str, stderr: str, timeout: float) -> str:
    if done.timed_out:
        text = f"timed out after {timeout:g} s; the command's process group was killed"
    else:
        shown = excerpt(stdout, stderr, failed=done.returncode != 0)  # failed: the last line
        text = f"rc={done.returncode} — {shown or '(no output)'}"
    if done.stopped_background:
        text += " (background processes it left were stopped)"
    return text
