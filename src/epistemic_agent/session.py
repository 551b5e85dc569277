"""A session: gate, journal, executor and report wired together. The Python API."""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from types import TracebackType

from . import __version__, consistency
from .effects import Effect
from .effects_cache import EffectCache
from .enforce import Sandbox, read_only_sandbox
from .evidence import EvidenceStore
from .executor import Execution, Launch, bounded_text, run_shell
from .filetools import precheck, run_file_tool
from .gate import Call, GateConfig, Rejected, check
from .guard import Guard, workspace_policy
from .journal import JournalWriter, Record
from .layout import RECORD_DIR, REPORT_NAME, Layout
from .observe import best_observer
from .records import call_record, now, outcome_record, rejected_record
from .report import Report
from .results import CallResult, Settings
from .session_policy import PolicyCalls, decision_json
from .structs import field, struct

TYPE_CHECKING = False  # typing is not imported at run time: start-up cost
if TYPE_CHECKING:
    from typing import Any

    from .approval import Approver
    from .policy import Decision, Policy
    from .reaper import Reaper

__all__ = ["CallResult", "OutputSink", "Session", "Settings"]

OutputSink = Callable[[Execution], None]


@struct(frozen=False)
class Session(PolicyCalls):
    """Gated, journaled tool calls in one workspace. Continues the workspace's journal if any."""

    workspace: Path
    settings: Settings = field(default_factory=Settings)
    header: dict[str, Any] = field(default_factory=dict)
    policy: Policy | None = None  # None: the workspace's epistemic.toml, else approve-none
    approver: Approver | None = None  # None: the terminal if there is one, else files
    policy_implicit: bool = False  # `policy` is the workspace's own, found rather than named

    def __post_init__(self) -> None:
        self.workspace = Path(self.workspace).resolve()
        if not self.workspace.is_dir():
            raise NotADirectoryError(f"workspace {self.workspace} is not a directory")
        implicit = self.policy is None or self.policy_implicit
        if self.policy is None:  # before anything is written: a broken policy stops here
            self.policy = workspace_policy(self.workspace)
        self._closed = False
        self._sandbox: Sandbox | None = None
        self._launches: dict[bool, tuple[Launch, str]] = {}
        self._scratch: Path | None = None
        self._last_outcome: object = None
        self._reaper_made: Reaper | None = None
        self.layout = Layout(self.workspace)
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
        self.effects = EffectCache(self.layout.record / "effects-cache.json", self._no_secret)
        self.gate = GateConfig(
            str(self.workspace),
            self.settings.min_reason,
            _temp(self.workspace),
            self.effects.classify,
        )
        if not self.journal.open(self.report.load_checkpoint()):
            self.report.reset()
        gone = None
        with self.journal.locked():
            self.created = self.journal.position.lines == 0
            if self.created:
                self.journal.append(self._session_record(), durable=True)
                self._publish()
            elif implicit and (gone := self._policy_gone()) is not None:
                pass
            elif self.report.totals.session.get("policy") != self.guard.header():
                record = {"kind": "policy", "t": now(), **self.guard.header()}
                self.journal.append(record, durable=True)
                self._publish()
        if gone is not None:
            self.close()
            from .policy import PolicyError

            raise PolicyError(
                f"{gone}: the policy this session was under is gone. Restore it, or name the "
                "policy to use now (--policy FILE, --approve mutating|none, --read-only)."
            )

    def _policy_gone(self) -> str | None:
        """The policy file the session was last under, if it has disappeared since."""
        last = self.report.totals.session.get("policy")
        source = last.get("source") if isinstance(last, dict) else None
        if not isinstance(source, str) or source.startswith("preset:"):
            return None
        return None if os.path.exists(source) else source

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
            self.report.save_checkpoint(self.journal.position)
            self.effects.save()
            self.journal.close()
            for path in self._capture:  # empty capture files kept for reuse
                path.unlink(missing_ok=True)
            if self._sandbox is not None:
                self._sandbox.close()

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

    def call(self, tool: object, args: object, on_output: OutputSink | None = None) -> CallResult:
        """Gate, journal and run one call exactly as a model would send it."""
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
        inputs = self._store_inputs(verdict)
        record = call_record(0, verdict, inputs)
        if effect is not None:
            record["effect"] = effect.to_json()
        if not self.guard.trivial:
            record["policy"] = decision_json(decision)
        record, redacted = self.guard.scrub(record)
        if redacted:
            record["redacted"] = redacted
        with self.journal.locked():
            seq = record["seq"] = self.journal.position.last_seq + 1
            # Durable before the effect. The report is published once, with the outcome:
            # readers of the journal show a call without one as "outcome unknown".
            self.journal.append(record, durable=True)
        try:
            if decision.decision == "ask":
                answer = self._ask(seq, verdict, effect, decision)
                if not answer.approved:
                    return self._denied(seq, verdict, decision, answer)
            if verdict.tool == "bash":
                return self._run_bash(seq, verdict, effect, on_output)
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

    def reject(self, rejected: Rejected, policy: Decision | None = None) -> CallResult:
        """Journal a refused call (it never runs) and return it as a result."""
        record = rejected_record(0, rejected)
        if policy is not None:
            record["policy"] = decision_json(policy)
        record, redacted = self.guard.scrub(record)
        if redacted:
            record["redacted"] = redacted
        with self.journal.locked():
            seq = record["seq"] = self.journal.position.last_seq + 1
            self.journal.append(record, durable=False)
            self._publish()
        event = "denial" if policy is not None else "rejection"
        rule = (policy.rule or "default") if policy is not None else record["rule"]
        self._alert(event, seq, record, rule=rule, message=record["message"])
        return CallResult(
            "rejected", seq, rejected.tool, rejected.act, record["rule"], record["message"]
        )

    def event(self, kind: str, **fields: Any) -> None:
        """Journal a record that is not a tool call (a model call, the model's text, a stop)."""
        scrubbed, redacted = self.guard.scrub(fields)
        if redacted:
            scrubbed["redacted"] = redacted
        self._record({"kind": kind, "t": now(), **scrubbed})

    # -- internals -------------------------------------------------------------------------

    def _run_bash(
        self, seq: int, call: Call, effect: Effect | None, on_output: OutputSink | None
    ) -> CallResult:
        assert call.command is not None
        launch, enforcement = self._launch(call)
        ignored = (*self.settings.ignore, RECORD_DIR, REPORT_NAME)  # the record: always
        observer = best_observer(self.workspace, ignored) if self.settings.observe else None
        if observer is not None:
            observer.start()
        done = run_shell(
            call.command,
            self.workspace,
            self.settings.timeout,
            self.layout.scratch,
            launch=launch,
            on_slow=self._publish_in_flight,
            capture=self._capture,
            reaper=self._reaper(),
        )
        changes = observer.finish() if observer is not None else None
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
        ok = done.returncode == 0 and not done.timed_out
        raised = consistency.flags(
            call, effect, changes, enforcement, done.returncode, stderr, self.report.history
        )
        outcome = _summarise(done, stdout, stderr, self.settings.timeout)
        extra: dict[str, Any] = {
            "returncode": done.returncode,
            "timed_out": done.timed_out,
            "enforcement": enforcement,
        }
        if changes is not None:
            extra["observed"] = _capped(changes.to_json())
        if tampered:
            raised.append(
                {
                    "flag": "record-tampered",
                    "message": "the command deleted or "
                    "replaced .epistemic/journal.jsonl; it was restored from the open "
                    "file, whole, before this outcome was recorded",
                }
            )
        if raised:
            extra["flags"] = raised
        if redacted:
            extra["redacted"] = redacted
        self._record(outcome_record(seq, ok, outcome, done.duration, evidence, **extra))
        self._after(seq, call, raised, outcome)
        if sink_error is not None:
            raise sink_error
        return CallResult(
            "ran",
            seq,
            "bash",
            call.act,
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

    def _launch(self, call: Call) -> tuple[Launch, str]:
        """How to start this call: TMPDIR on the session's scratch folder, and for a
        non-mutating act the workspace made read-only by the kernel where it can be.
        Both are built once per session (the environment as the session found it)."""
        enforced = not call.mutating and self.settings.enforce
        cached = self._launches.get(enforced)
        if cached is not None:
            return cached
        scratch = self.scratch_dir()
        env = {**os.environ, "TMPDIR": str(scratch)}
        if not enforced:
            made = Launch(env=env), "none"
        else:  # the sandbox's rules name every folder beside the workspace's path
            self._sandbox = read_only_sandbox(self.workspace, writable=(scratch,))
            sandbox = self._sandbox
            made = Launch(sandbox.argv_prefix, sandbox.child_setup, env), sandbox.name
        self._launches[enforced] = made
        return made

    def _reaper(self) -> Reaper:
        """Catches what a command leaves running outside its group (made once: ctypes)."""
        if self._reaper_made is None:
            from .reaper import Reaper

            self._reaper_made = Reaper()
        return self._reaper_made

    def scratch_dir(self) -> Path:
        """This session's scratch folder, outside the workspace: $TMPDIR for its commands."""
        if self._scratch is None:
            folder = Path(self.gate.temp) / "epistemic" / (self.session_id[:16] or "session")
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            self._scratch = folder
        return self._scratch

    def _run_file_tool(self, seq: int, call: Call) -> CallResult:
        started = time.monotonic()
        done = run_file_tool(call, self.workspace, self.settings.output_limit)
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
        """Re-render the report and move the head anchor (caller holds the journal lock)."""
        position = self.journal.position
        self.report.write(position)
        self.journal.write_anchor()

    def _session_record(self) -> Record:
        record: Record = {
            "kind": "session",
            "session": os.urandom(16).hex(),
            "started": now(),
            "started_epoch": time.time(),
            "tool_version": __version__,
            "workspace": str(self.workspace),
            "git_head": _git_head(self.workspace),
            "user": _user(),
            "host": os.uname().nodename,
            "pid": os.getpid(),
            "python": sys.version.split()[0],
        }
        record.update(self.guard.scrub(self.header)[0])
        record["policy"] = self.guard.header()
        return record


OBSERVED_CAP = 200


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
        first = next(
            (line.strip() for line in (stdout + "\n" + stderr).splitlines() if line.strip()), ""
        )
        excerpt = first if len(first) <= 100 else first[:97] + "..."
        text = f"rc={done.returncode} — {excerpt or '(no output)'}"
    if done.stopped_background:
        text += " (background processes it left were stopped)"
    return text


def _git_head(workspace: Path) -> str | None:
    import subprocess  # only when a session starts: keep it off the per-exec path

    try:
        done = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=workspace,
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() or None if done.returncode == 0 else None


def _user() -> str:
    """The OS user, as `getpass.getuser` finds it, without importing getpass."""
    for name in ("LOGNAME", "USER", "LNAME", "USERNAME"):
        if os.environ.get(name):
            return os.environ[name]
    import pwd

    try:
        return pwd.getpwuid(os.getuid()).pw_name
    except KeyError:
        return f"uid {os.getuid()}"
