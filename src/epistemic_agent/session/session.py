"""A session: gate, journal, executor and report wired together. The Python API.

    with Session("path/to/repo") as session:
        session.bash("ls", "collect-info", "see which files the workspace holds")

Constructing a `Session` only stores its arguments; `open()` (or `with`) resolves the policy,
chooses and opens the session's journal, and makes what its calls need; `close()` releases it
all. One call travels through the steps of pipeline.py; the policy, the supervisor's review,
traceability, alerts, the shell and the file tools are collaborators (their own modules)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

from ..core import Layout, drop_old_spares, ignore_record, now
from ..execute import Execution
from ..journal import EvidenceStore, Record, choosing, for_writing
from ..policy import PolicyError
from . import continuing, provenance
from .in_force import workspace_policy
from .opening import Confining, platform_for, session_record, supervisor_for
from .parts import Given, Parts, open_parts, policy_in_force
from .recorder import Recorder, SessionRecord
from .results import CallResult, Settings
from .scratch import Scratch
from .trace_step import TraceStep

if TYPE_CHECKING:
    from typing import Any

    from ..approvals import Approver
    from ..core import Cancel
    from ..effects import EffectCache
    from ..execute import Baseline, Confinement, Platform
    from ..gate import GateConfig, Rejected
    from ..journal import JournalWriter, SessionState
    from ..policy import Alerts, Decision, Policy
    from ..reports import Report
    from ..supervisor import Supervisor
    from .pipeline import Pipeline
    from .review_step import Reviewed
    from .scrub import Scrubber

__all__ = ["CallResult", "OutputSink", "Session", "SessionNotOpen", "Settings", "supervisor_for"]

OutputSink = Callable[[Execution], None]
DeclaredSink = Callable[[Record], None]  # the call as journaled, before it runs

NEW, OPEN, CLOSED = "new", "open", "closed"
#: records followed at once by more of the same turn: the report is rendered after those
FOLLOWED = ("model", "text")


class SessionNotOpen(RuntimeError):
    """A session used before `open()` (or `with`), or after an `open()` that failed."""


class Session:
    """Gated, journaled tool calls in one workspace. Continues the workspace's journal if any.

    `policy` None: the workspace's epistemic.toml, else approve-none; `policy_implicit`: the
    policy given is the workspace's own, found rather than named. `approver` None: the
    terminal if there is one, else files. `supervisor` None: Settings.supervisor's or the
    policy's, if any."""

    # Made by `open()`: reading one before raises SessionNotOpen (see __getattr__).
    layout: Layout
    platform: Platform
    report: Report
    state: SessionState
    journal: JournalWriter
    evidence: EvidenceStore
    effects: EffectCache
    gate: GateConfig
    ticket: str | None
    created: bool
    confinement: Confinement
    baseline: Baseline | None
    scrubber: Scrubber
    alerts: Alerts
    _parts: Parts
    _recorder: Recorder
    _scratch: Scratch
    _trace: TraceStep
    _pipeline: Pipeline

    def __init__(
        self,
        workspace: Path | str,
        settings: Settings | None = None,
        header: dict[str, Any] | None = None,
        policy: Policy | None = None,
        approver: Approver | None = None,
        policy_implicit: bool = False,
        supervisor: Supervisor | None = None,
    ) -> None:
        self.workspace = Path(workspace)
        self.settings = settings if settings is not None else Settings()
        self.header = header if header is not None else {}
        self.policy = policy
        self.approver = approver
        self.policy_implicit = policy_implicit
        self.supervisor = supervisor
        self._state = NEW
        self._stopped: object = None  # the agent loop's last stop reason (see `end`)
        #: what opening the session found worth telling its user (printed by the CLI)
        self.notices: list[str] = []
        self._ignored: continuing.Recorded | None = None
        self._ended = False

    def __repr__(self) -> str:
        return f"Session({str(self.workspace)!r}, {self._state})"

    def _require_open(self, what: str) -> None:
        """What records (a call, an event, the end) needs the session open, and not closed."""
        if self._state != OPEN:
            raise SessionNotOpen(self._not_open(what))

    def _not_open(self, what: str) -> str:
        state = "not open: call open() first" if self._state == NEW else f"{self._state}"
        return (
            f"Session.{what}: the session in {self.workspace} is {state} "
            "(or use `with Session(...) as session:`)"
        )

    if not TYPE_CHECKING:  # hidden from type checkers: they see the annotations above

        def __getattr__(self, name: str) -> Any:
            """What `open()` makes, read before it: SessionNotOpen, not AttributeError."""
            if name in Session.__annotations__:
                raise SessionNotOpen(self._not_open(name.lstrip("_")))
            raise AttributeError(f"'Session' object has no attribute {name!r}")

    # -- opening and closing ---------------------------------------------------------------

    def open(self) -> Session:
        """Resolve the policy, choose the session and open its journal (writing its header when
        it is new, or continuing it), and make what calls need. Raises PolicyError when the
        policy cannot be used, NotADirectoryError for a workspace that is not a folder."""
        if self._state != NEW:
            raise SessionNotOpen(f"Session.open: the session is already {self._state}")
        self._state = CLOSED  # until it is open: a failed open leaves nothing half open
        self.workspace = self.workspace.resolve()
        if not self.workspace.is_dir():
            raise NotADirectoryError(f"workspace {self.workspace} is not a directory")
        implicit = self.policy is None or self.policy_implicit
        if self.policy is None:  # before anything is written: a broken policy stops here
            self.policy = workspace_policy(self.workspace)
        self.platform = platform_for(self.settings)
        Confining(
            self.platform, Layout(self.workspace), self.policy, self.settings, self.supervisor
        ).require()
        self.policy.check_signers()
        if self.supervisor is None:
            self.supervisor = supervisor_for(self.policy, self.settings.supervisor)
        try:
            with choosing(self.workspace):  # which session, chosen and (if new) begun at once
                settings = self.settings
                self.layout = for_writing(self.workspace, settings.session, settings.owns_session)
                refused = provenance.opening(self.policy, self.layout, implicit, self.supervisor)
                if refused is None:
                    refused = self._open_journal(self.policy, implicit)
            if refused is not None:  # nothing more is appended to a session that may not go on
                raise PolicyError(refused)
            self.notices += filter(None, [self._parts.asking.unsigned_notice()])
            self.baseline = self._trace.open_baseline()
        except BaseException:
            self._release_journal()
            raise
        self._state = OPEN
        return self

    def _open_journal(self, found: Policy, implicit: bool) -> str | None:
        """Open the session's journal (writing its header when it is new), and make its parts
        under the policy in force: the one found, or for a session that goes on under a policy
        it merely found, the one it recorded. Why it may not go on under the policy found,
        if so."""
        ticket = self.header.get("ticket")
        self.ticket = ticket if isinstance(ticket, str) and ticket else None  # --ticket
        layout, settings = self.layout, self.settings
        given = Given(
            self.workspace, layout, settings, self.platform, self.supervisor, self.approver,
            self.ticket, EvidenceStore(layout.evidence, settings.evidence_cap),
        )  # fmt: skip
        record = SessionRecord(layout)
        self.journal = journal = record.journal  # closed by `close` whatever happens next
        if not journal.open(record.report.load_checkpoint()):
            record.report.reset()
        ignore_record(layout.record)  # new workspaces and older ones alike
        drop_old_spares(layout.record)
        relinked = list(journal.relinked)
        with journal.locked():
            self.created = journal.position.lines == 0
            in_force = policy_in_force(given, found)
            if not self.created and implicit:  # it goes on under the policy it recorded
                kept = continuing.recorded_in_force(record.state, in_force.header(), layout)
                if isinstance(kept, str):
                    return kept
                if kept is not None:
                    self.policy, self._ignored = kept.policy, kept
                    Confining(
                        self.platform, layout, kept.policy, settings, self.supervisor
                    ).require()
                    in_force = policy_in_force(given, kept.policy, kept.signers)
            session_id = layout.session_folder_id or os.urandom(16).hex()
            if not self.created:
                session_id = record.state.session_id
            self._adopt(open_parts(given, record, in_force, session_id))
            self._begin(session_id, relinked)
        return None

    def _begin(self, session_id: str, relinked: list[str]) -> None:
        """A new session's header; for one that goes on, what it must say first (the chain
        that does not verify, the calls a killed process left open, a policy or confinement
        changed since). The caller holds the journal's lock."""
        recorder, in_force = self._recorder, self._parts.in_force
        if self.created:
            continuing.keep_policy(self.layout, in_force.policy)
            record = session_record(
                session_id, self.workspace, self.header, self.scrubber, in_force,
                self.confinement, self.supervisor,
            )  # fmt: skip
            self.journal.append(record, durable=True)
            recorder.publish()
        else:
            continuing.keep_chain_notice(recorder)
            continuing.recover(recorder, self.evidence, self.settings)
            continuing.note_changes(recorder, in_force, self.confinement)
            if self._ignored is not None:
                said = continuing.note_ignored(recorder, self._ignored)
                self.notices += [said] if said else []
        if relinked:
            continuing.note_relinked(recorder, relinked)

    def _adopt(self, parts: Parts) -> None:
        """The session's parts, made once (parts.py); what the session shows of them."""
        self._parts = parts
        self._recorder, self._scratch, self._trace = parts.recorder, parts.scratch, parts.trace
        self._pipeline = parts.pipeline
        self.state, self.report = parts.recorder.state, parts.recorder.report
        self.evidence = parts.trace.evidence
        self.effects, self.gate, self.confinement = parts.effects, parts.gate, parts.confinement
        self.scrubber, self.alerts = parts.scrubber, parts.alerts

    def _release_journal(self) -> None:
        journal = self.__dict__.get("journal")
        if journal is not None:
            journal.close()

    def __enter__(self) -> Session:
        """Open the session, unless `open()` did already (`with Session(...).open() as s:`)."""
        return self if self._state == OPEN else self.open()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Save where the report stands (the next process resumes there) and close the journal.
        Nothing to do for a session that was never opened, or is closed already."""
        if self._state != OPEN:
            return
        self._state = CLOSED
        if self.settings.owns_session:
            self._end()
        self.report.save_checkpoint(self.journal.position)
        self.effects.save()
        if self.baseline is not None:
            self.baseline.prune()
        self.journal.close()
        self._scratch.discard(ended=self._ended)

    def end(self) -> None:
        """The process that owns the session (`run`, `repl`, `mcp`) ends it with a `closed`
        record: `exec` and `tool` no longer continue it (catalog.py reads a session's status
        from it). Once; `close` does it for an owner that did not."""
        self._require_open("end")
        self._end()

    def _end(self) -> None:
        if self._ended:
            return
        recorder = self._recorder
        self._ended = True
        stop = self._stopped if isinstance(self._stopped, str) else None
        recorder.append({"kind": "closed", "t": now(), "stop": stop})

    @property
    def closed(self) -> bool:
        """Whether `close()` ran (or an `open()` failed): nothing more is recorded."""
        return self._state == CLOSED

    @property
    def session_id(self) -> str:
        return self._recorder.session_id

    @property
    def capture_files(self) -> tuple[Path, Path]:
        """Where a running command's stdout and stderr are being written (a live view may
        read them while it runs; they are not the record: evidence is)."""
        return self._scratch.capture

    def scratch_dir(self) -> Path:
        """This session's scratch folder, outside the workspace: $TMPDIR for its commands."""
        return self._scratch.folder()

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
        """Gate, journal and run one call exactly as a model would send it, through the steps
        of pipeline.py. A `cancel` set from another thread withdraws its approval request,
        or stops its command. `on_declared` hears the call record as journaled (its seq
        included), before it runs."""
        self._require_open("call")
        return self._pipeline.call(tool, args, on_output, cancel, on_declared)

    def reject(
        self, rejected: Rejected, policy: Decision | None = None, review: Reviewed | None = None
    ) -> CallResult:
        """Journal a refused call (it never runs) and return it as a result."""
        self._require_open("reject")
        return self._pipeline.reject(rejected, policy, review)

    def event(self, kind: str, **fields: Any) -> None:
        """Journal a record that is not a tool call (a model call, the model's text, a stop)."""
        self._require_open("event")
        recorder = self._recorder
        scrubbed, redacted = self.scrubber.scrub(fields)
        if kind == "stop":
            self._stopped = fields.get("reason")
        if redacted:
            scrubbed["redacted"] = redacted
        recorder.record({"kind": kind, "t": now(), **scrubbed}, publish=kind not in FOLLOWED)
