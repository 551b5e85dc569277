"""The file tools' step of a call (read_file, write_file, str_replace_edit): run the tool in
the act's confinement, keep what it read or the diff it made as evidence, with versions of
the file, and say what it changed. Its outcome is recorded by the caller."""

from __future__ import annotations

import json
import time
from functools import partial
from typing import TYPE_CHECKING

from ..core import struct
from ..execute import ConfinementError, FileOutcome, run_file_tool
from ..journal import outcome_record
from .outcomes import Observed, not_confined
from .results import CallResult

if TYPE_CHECKING:
    from typing import Any

    from ..execute import Confinement
    from ..gate import Call
    from ..journal import EvidenceStore
    from .outcomes import Declared
    from .results import Settings
    from .scratch import Scratch
    from .scrub import Scrubber
    from .trace_step import TraceStep

NO_CHANGE = {
    "flag": "no-change",
    "message": "declared change-state, but the new content equals the old",
}


@struct
class FileRan:
    """What running a file tool left for observing it: its outcome, the file's content
    before (for versions), and how long it took."""

    done: FileOutcome
    before: dict[str, bytes | None] | None
    duration: float


class FileStep:
    """Runs and observes one file tool call of a session."""

    def __init__(
        self,
        settings: Settings,
        confinement: Confinement,
        scrubber: Scrubber,
        evidence: EvidenceStore,
        scratch: Scratch,
        trace: TraceStep,
    ) -> None:
        self.settings = settings
        self.confinement = confinement
        self.scrubber = scrubber
        self.evidence = evidence
        self.scratch = scratch
        self.trace = trace

    def store_inputs(self, call: Call) -> dict[str, Any] | None:
        """Large inputs (new content, edit texts) go to evidence before the declaration."""
        keys = [k for k in ("content", "old", "new") if k in call.args]
        if not keys:
            return None
        inputs, _ = self.scrubber.scrub({k: call.args[k] for k in keys})
        blob = json.dumps(inputs, ensure_ascii=False).encode("utf-8", "surrogateescape")
        ref = self.evidence.put(blob)
        return ref.to_json() if ref is not None else None

    def run(self, declared: Declared) -> FileRan | Observed:
        """Run the tool confined; a tool whose sandbox could not be made did not run, and its
        outcome says so."""
        seq, call = declared.seq, declared.call
        assert call.act is not None
        started = time.monotonic()
        before = self.trace.before(call)
        work = partial(run_file_tool, call, self.trace.workspace, self.settings.output_limit)
        try:
            self.scratch.folder()
            done = self.confinement.run(call.act, work)
        except ConfinementError as error:
            return not_confined(seq, call, error, self.confinement.mechanism)
        return FileRan(done, before, time.monotonic() - started)

    def observe(self, declared: Declared, ran: FileRan) -> Observed:
        """What the tool did, ready to record: what it read or the diff it made, kept as
        evidence (scrubbed), and what it changed."""
        seq, call = declared.seq, declared.call
        done, before, duration = ran.done, ran.before, ran.duration
        name = "content" if call.tool == "read_file" else "diff"
        blob, redacted = self.scrubber.redactor.data(done.evidence)
        text, more = self.scrubber.redactor.text(done.text)
        outcome, most = self.scrubber.redactor.text(done.outcome)
        ref = self.evidence.put(blob)
        evidence = {name: ref.to_json()} if ref is not None else {}
        extra: dict[str, Any] = {}
        if redacted + more + most:
            extra["redacted"] = redacted + more + most
        if call.tool != "read_file" and done.ok:
            self._changed(call, done, before, extra)
        record = outcome_record(seq, done.ok, outcome, duration, evidence, **extra)
        result = CallResult(
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
        return Observed(record, result, extra.get("flags", []))

    def _changed(
        self,
        call: Call,
        done: FileOutcome,
        before: dict[str, bytes | None] | None,
        extra: dict[str, Any],
    ) -> None:
        """What a write or an edit changed, into `extra`: versions, `observed`, `no-change`."""
        if before is not None and done.evidence:
            _, kept, more = self.trace.versions([str(call.path)], before, with_diff=False)
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
            extra["flags"] = [dict(NO_CHANGE)]
