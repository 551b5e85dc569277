"""The shell step of a call: watch the workspace (and the folders outside it the act may
write), run the command confined, then observe what it did: output, changes, versions,
commits, and the flags the consistency checks raise. Its outcome is recorded by the caller."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ..checks import Others, consistency_flags
from ..core import RECORD_DIR, REPORT_NAMES, excerpt, struct
from ..execute import (
    ConfinementError,
    Execution,
    Interrupted,
    best_observer,
    bounded_text,
    outside_observer,
    run_shell,
)
from ..journal import outcome_record
from .git_step import commit_flag, head_commit, is_installed
from .outcomes import SEALED, Observed, capped, not_confined, summarise
from .results import CallResult

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from ..core import Cancel
    from ..execute import Attempts, Changes, Confinement, Launch, Observer
    from ..journal import EvidenceStore, Record
    from .outcomes import Declared
    from .recorder import Recorder
    from .results import Settings
    from .scratch import Scratch
    from .trace_step import TraceStep

    OutputSink = Callable[[Execution], None]

TAMPERED = {
    "flag": "record-tampered",
    "message": "the command deleted or replaced .epistemic/journal.jsonl; it was restored from "
    "the open file, whole, before this outcome was recorded",
}


class Watch:
    """The observers of one command, and the branch head before it (when its commits count)."""

    def __init__(
        self,
        inside: Observer | None,
        outside: dict[str, Observer],
        branch: tuple[str | None, str | None] = (None, None),
    ):
        self.inside, self.outside = inside, outside
        self.branch, self.unread = branch  # the head, or why .git could not be read
        self.hooked = False

    def start(self) -> None:
        for watcher in (self.inside, *self.outside.values()):
            if watcher is not None:
                watcher.start()

    def stop(self) -> None:
        for watcher in (self.inside, *self.outside.values()):
            if watcher is not None:
                watcher.finish()


@struct
class ShellRan:
    """What running a command left for observing it: its watchers and its execution."""

    watch: Watch
    done: Execution
    #: Ctrl-C stopped the command: raised again once its outcome is recorded (pipeline.py)
    interrupt: Interrupted | None = None


def tripwire(
    attempts: Attempts | None, mechanism: str, extra: dict[str, Any]
) -> list[dict[str, Any]]:
    """What the tripwire saw the act try (execute/sandbox/tripwire.py), into the outcome
    (`tripwire`), and the flag it raises; nothing when it saw nothing."""
    if attempts is None or not (attempts.kept or attempts.more or attempts.unread):
        if attempts is not None and attempts.unwatched:
            extra["tripwire"] = attempts.to_json()
        return []
    extra["tripwire"] = attempts.to_json()
    if not attempts.kept:
        return []
    first, count = attempts.kept[0], len(attempts.kept) + attempts.more
    held = (
        "the kernel refused it"
        if mechanism in ("landlock+namespaces", "bwrap")
        else (f"under {mechanism} nothing pins the folders: see the call's observed changes")
    )
    message = (
        f"the command tried {count} time(s) to move or remove a protected path or a folder "
        f"leading to one: {first.syscall} {first.path} (which leads to {first.target}); {held}"
    )
    return [{"flag": "protected-path-attempted", "message": message}]


class ShellStep:
    """Runs and observes one shell act of a session."""

    def __init__(
        self,
        settings: Settings,
        confinement: Confinement,
        recorder: Recorder,
        evidence: EvidenceStore,
        scratch: Scratch,
        trace: TraceStep,
    ) -> None:
        self.settings = settings
        self.workspace = recorder.layout.workspace
        self.confinement = confinement
        self.recorder = recorder
        self.evidence = evidence
        self.scratch = scratch
        self.trace = trace

    def run(self, declared: Declared, cancel: Cancel | None) -> ShellRan | Observed:
        """Watch, then execute confined; a command whose sandbox could not be made did not
        run, and its outcome says so."""
        assert declared.call.act is not None
        launch = self.confinement.launch(declared.call.act, self.scratch.capture)
        watch = self.watch(declared)
        try:
            done = self.execute(declared, launch, watch, cancel)
        except ConfinementError as error:
            watch.stop()
            return not_confined(declared.seq, declared.call, error, self.confinement.mechanism)
        except Interrupted as interrupt:  # observed and recorded like any command, then raised
            return ShellRan(watch, interrupt.execution, interrupt)
        return ShellRan(watch, done)

    def watch(self, declared: Declared) -> Watch:
        call = declared.call
        assert call.act is not None
        ignored = (*self.settings.ignore, RECORD_DIR, *REPORT_NAMES)  # the record: always
        inside = best_observer(self.workspace, ignored) if self.settings.observe else None
        hooked = call.mutating and is_installed(self.workspace)  # watch the commits it makes
        branch = head_commit(self.workspace) if hooked else (None, None)
        watch = Watch(inside, self._outside(call.act), branch)
        watch.hooked = hooked
        watch.start()
        return watch

    def execute(
        self, declared: Declared, launch: Launch, watch: Watch, cancel: Cancel | None
    ) -> Execution:
        call = declared.call
        assert call.command is not None
        return run_shell(
            call.command,
            self.workspace,
            self.settings.timeout,
            self.recorder.layout.scratch,
            launch=launch,
            env=self.trace.call_env(declared.seq, watch.hooked),
            on_slow=self.recorder.publish_in_flight,
            capture=self.scratch.capture,
            reaper=self.scratch.reaper(),
            cancel=cancel,
        )

    def observe(
        self,
        declared: Declared,
        ran: ShellRan,
        on_output: OutputSink | None,
        cancel: Cancel | None,
    ) -> Observed:
        """What the command did, ready to record: its output (scrubbed, kept as evidence),
        the changes the observers saw with versions of the files, its commits, and the flags
        the consistency checks raise on them."""
        watch, done = ran.watch, ran.done
        changes = watch.inside.finish() if watch.inside is not None else None
        elsewhere = {folder: watcher.finish() for folder, watcher in watch.outside.items()}
        tampered = self.recorder.journal.restore_if_gone()
        redacted = sum(
            self.recorder.scrubber.scrub_file(path) for path in (done.stdout, done.stderr)
        )
        limit = self.settings.output_limit
        stdout, stderr = bounded_text(done.stdout, limit), bounded_text(done.stderr, limit)
        sink_error = _hand_over(on_output, done)
        evidence = {
            name: ref.to_json()
            for name, path in (("stdout", done.stdout), ("stderr", done.stderr))
            if (ref := self.evidence.adopt(path)) is not None
        }
        extra: dict[str, Any] = {
            "returncode": done.returncode,
            "timed_out": done.timed_out,
            "enforcement": self._enforcement(declared.call),
            "confinement": self.confinement.mechanism,
        }
        redacted += self._changes(changes, elsewhere, evidence, extra)
        raised = self._flags(declared, ran, changes, stderr, tampered, extra)
        if raised:
            extra["flags"] = raised
        if redacted:
            extra["redacted"] = redacted
        record, result = self._outcome(declared, done, (stdout, stderr), evidence, extra, cancel)
        return Observed(record, result, raised, sink_error=sink_error)

    def _changes(
        self,
        changes: Changes | None,
        elsewhere: dict[str, Changes],
        evidence: dict[str, Any],
        extra: dict[str, Any],
    ) -> int:
        """The observed changes into the outcome, with versions of the changed files kept as
        evidence; how many secrets were scrubbed from those versions."""
        redacted = 0
        if changes is not None:
            extra["observed"] = capped(changes.to_json())
            if not changes.empty:
                paths = [*changes.created, *changes.modified, *changes.deleted]
                refs, kept, redacted = self.trace.versions(paths)
                evidence.update(refs)
                extra.update(kept)
        if any(not seen.empty for seen in elsewhere.values()):
            extra["outside"] = {
                folder: capped(seen.to_json()) for folder, seen in elsewhere.items()
            }
        return redacted

    def _flags(
        self,
        declared: Declared,
        ran: ShellRan,
        changes: Changes | None,
        stderr: str,
        tampered: bool,
        extra: dict[str, Any],
    ) -> list[dict[str, Any]]:
        """The consistency flags on what the command did, a record it tampered with, and the
        commits it made (recorded in `extra`)."""
        raised = consistency_flags(
            declared.call,
            declared.effect,
            changes,
            extra["enforcement"],
            ran.done.returncode,
            stderr,
            self.recorder.state.history,
            self._others(declared),
        )
        if tampered:
            raised.append(dict(TAMPERED))
        raised += tripwire(ran.done.attempts, self.confinement.mechanism, extra)
        if ran.watch.hooked:
            commits, unread = self.trace.commits(ran.watch.branch, ran.watch.unread)
            if commits:
                extra["commits"] = commits
                flag = commit_flag(commits)
                raised += [flag] if flag is not None else []
            if unread is not None:
                extra["commits_unread"] = unread
        return raised

    def _outcome(
        self,
        declared: Declared,
        done: Execution,
        output: tuple[str, str],
        evidence: dict[str, Any],
        extra: dict[str, Any],
        cancel: Cancel | None,
    ) -> tuple[Record, CallResult]:
        """The outcome record and the caller's result."""
        seq, call = declared.seq, declared.call
        stdout, stderr = output
        ok = done.returncode == 0 and not done.timed_out
        outcome = summarise(done, stdout, stderr, self.settings.timeout)
        if done.cancelled and cancel is not None:
            outcome = f"{cancel.describe()}; the command was stopped while it ran"
            ok = False
            extra.update(cancelled=True, cancelled_by=cancel.by)
        elif done.interrupted:
            shown = excerpt(stdout, stderr, failed=True)
            outcome = (
                "interrupted before it finished (Ctrl-C): the command was stopped"
                f" — {shown or '(no output)'}"
            )
            extra["interrupted"] = True
        record = outcome_record(seq, ok, outcome, done.duration, evidence, **extra)
        raised = extra.get("flags", [])
        result = CallResult(
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
        return record, result

    def _others(self, declared: Declared) -> Others:
        """Who else may have changed the workspace while this call ran: calls of other
        processes still running when it was declared, or declared since; and, for an
        observation the kernel kept from writing, anyone at all."""
        journal, seq = self.recorder.journal, declared.seq
        with journal.locked():  # read what other writers appended meanwhile
            last = journal.position.last_seq
        state = self.recorder.state
        since = {n for n in range(seq + 1, last + 1) if state.fate_of(n) != "rejected"}
        sealed = not declared.call.mutating and self.confinement.held >= SEALED
        return Others(tuple(sorted(declared.running | since)), sealed)

    def _outside(self, act: str) -> dict[str, Observer]:
        """Watchers for the folders outside the workspace this act may write (its grants)."""
        if not self.settings.observe or self.confinement.mechanism == "none":
            return {}
        view = self.confinement.view(act)
        inside = (self.confinement.workspace, self.confinement.scratch)
        folders = [folder for folder in view.writable if folder not in inside]
        return {folder: outside_observer(Path(folder)) for folder in folders}

    def _enforcement(self, call: Any) -> str:
        """How the workspace was kept read-only for this call (`none` for a mutating act)."""
        mechanism = self.confinement.mechanism
        if call.mutating or mechanism == "none":
            return "none"
        return "bwrap" if mechanism == "bwrap" else "landlock"


def _hand_over(on_output: OutputSink | None, done: Execution) -> Exception | None:
    """Give the caller the complete output; its failure is kept for later, since the caller's
    problem must not falsify the record."""
    if on_output is None:
        return None
    try:
        on_output(done)
    except Exception as error:
        return error
    return None
