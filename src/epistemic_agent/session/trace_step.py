"""A session's part in traceability: the baseline of the workspace, per-call versions of
what each call changed (baseline.py, versions.py), and what a shell act's environment says
of the session and its git hook (git_step.py). A collaborator of `Session`."""

from __future__ import annotations

import os
from functools import partial
from typing import TYPE_CHECKING

from ..core import RECORD_DIR, GitTimeout
from ..execute import GONE, Baseline, ConfinementError
from ..journal import record_versions
from .git_step import changes_file, commits_made, head_commit

if TYPE_CHECKING:
    from typing import Any

    from ..core import Layout
    from ..execute import Confinement
    from ..gate import Call
    from ..journal import EvidenceStore
    from .recorder import Recorder
    from .results import Settings
    from .scratch import Scratch


class TraceStep:
    """Versions and commits, given what they read and where they keep what they find."""

    def __init__(
        self,
        settings: Settings,
        layout: Layout,
        confinement: Confinement,
        recorder: Recorder,
        evidence: EvidenceStore,
        scratch: Scratch,
    ) -> None:
        self.settings = settings
        self.layout = layout
        self.workspace = layout.workspace
        self.confinement = confinement
        self.recorder = recorder
        self.scrubber = recorder.scrubber
        self.evidence = evidence
        self.scratch = scratch
        self.baseline: Baseline | None = None

    def open_baseline(self) -> Baseline | None:
        """The before-content of the workspace's small text files (baseline.py), brought up
        to date as this process opens the session; None without observation."""
        if not (self.settings.baseline and self.settings.observe):
            return None
        ignored = (*self.settings.ignore, RECORD_DIR)
        folder = self.layout.record / "baseline"
        baseline = Baseline(self.workspace, folder, ignored, redact=self.scrubber.redactor.data)
        baseline.forbidden = self._hidden_files()
        baseline.refresh()
        self.baseline = baseline
        return baseline

    def _hidden_files(self) -> frozenset[tuple[int, int]]:
        """Device and inode of each file hidden from acts inside the workspace: the session
        never copies or diffs one, even after an act moved a folder holding it."""
        root = str(self.workspace) + os.sep
        found: set[tuple[int, int]] = set()
        for path in self.confinement.hidden:
            if not path.startswith(root) or path == str(self.layout.record):
                continue
            for folder, _, files in os.walk(path) if os.path.isdir(path) else [("", [], [path])]:
                for name in files[:10_000]:
                    try:
                        info = os.lstat(os.path.join(folder, name))
                    except OSError:
                        continue
                    found.add((info.st_dev, info.st_ino))
        return frozenset(found)

    def before(self, call: Call) -> dict[str, bytes | None] | None:
        """What a file tool's path holds before it writes (None for a read, or no baseline)."""
        if self.baseline is None or call.tool == "read_file" or call.path is None:
            return None
        data, why = self.baseline.read_now(call.path)
        if data is None and why != GONE:
            return {}  # not kept: the baseline's copy (or its reason) stands
        return {call.path: data}

    def versions(
        self,
        paths: list[str],
        before: dict[str, bytes | None] | None = None,
        with_diff: bool = True,
    ) -> tuple[dict[str, Any], dict[str, Any], int]:
        """Before and after of the paths a call changed, as evidence (versions.py)."""
        if self.baseline is None:
            return {}, {}, 0
        found = record_versions(
            self.baseline, self.evidence, self.scrubber.redactor.data, paths, before
        )
        refs, fields = found.extra(self.evidence, with_diff)
        return refs, fields, found.redacted

    def call_env(self, seq: int, hooked: bool) -> dict[str, str]:
        """The environment of one shell act: the session's, plus which session and call it
        is (a commit's trailers name them), and for the git hook what it cannot read."""
        env = {**self.scratch.env(), "EPISTEMIC_SESSION": self.recorder.session_id}
        env["EPISTEMIC_CALL"] = str(seq)
        if hooked:
            head = self.recorder.journal.position.head
            env.update(
                changes_file(self.workspace, self.layout.journal, head, self.scratch.folder())
            )
        return env

    def commits(
        self, before: str | None, unread: str | None = None
    ) -> tuple[list[dict[str, Any]], str | None]:
        """The commits the act made (git runs confined, as for the header's `git_head`), and
        why they could not be listed, if so: `.git` held what the session will not read,
        before the act (`unread`) or after it, or git did not answer in time."""
        if unread is not None:
            return [], f"before the call, {unread}"
        after, unread = head_commit(self.workspace)
        if unread is not None:
            return [], unread
        if after is None or after == before:
            return [], None
        work = partial(commits_made, self.workspace, before, after, self.recorder.session_id)
        try:
            found: list[dict[str, Any]] = self.confinement.run("collect-info", work)
        except ConfinementError:
            return [{"commit": after, "trailers": False}], None
        except GitTimeout as error:
            return [], str(error)
        return found, None
