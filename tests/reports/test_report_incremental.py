"""RATIONALE.md written incrementally, after every record, is byte for byte what `rebuild` makes
of the journal so far: random sequences of every kind of record the report folds, with pages,
beliefs, dead ends and mismatches small enough that their limits and late changes are hit."""

from __future__ import annotations

import shutil
import tempfile
from contextlib import ExitStack
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from epistemic_agent.core.layout import Layout
from epistemic_agent.journal import writer as writer_module
from epistemic_agent.journal.writer import JournalWriter
from epistemic_agent.reports.rationale import beliefs as render_beliefs
from epistemic_agent.reports.rationale import report as report_module
from epistemic_agent.reports.rationale.report import Report, rebuild

PAGE = 3
SESSION_ID = "ab" * 8
ACTS = ("test-hypothesis", "test-hypothesis", "change-state", "change-state", "revert", "verify")
VERDICTS = ("confirmed", "refuted", "unsettled", "maybe")
FILES = ("rows.py", "src/rows.py", "src/util.py", "notes.txt")
T = "2026-01-01T00:00:00.000Z"

#: How far back from the latest call a record's seq points (numbered() resolves it), so that
#: outcomes, approvals, reviews and verdicts mostly land on calls that exist, some on a page
#: that is already written; sometimes on no call at all.
seqs = st.one_of(st.integers(0, 3), st.integers(0, 3), st.integers(4, 12)).map(lambda n: -n)
words = st.sampled_from(
    ("rows.py", "src/util.py", "notes", "Held: yes", "Did not hold:", "refuted", "a\nb", "`x`")
)
#: A reason: it may open with a verdict on the belief before it, and name files.

prose = st.lists(words, min_size=1, max_size=4).map(" ".join)
paths = st.lists(st.sampled_from(FILES), max_size=3)

call = st.fixed_dictionaries(
    {"kind": st.just("call"), "act": st.sampled_from(ACTS), "reason": prose, "command": prose},
    optional={
        "tool": st.sampled_from(("bash", "write_file")),
        "path": st.sampled_from(FILES),
        "mutating": st.booleans(),
        "effect": st.fixed_dictionaries({"writes": paths, "deletes": paths}),
        "belief": st.fixed_dictionaries({"seq": seqs, "verdict": st.sampled_from(VERDICTS)}),
    },
)
rejected = st.fixed_dictionaries(
    {
        "kind": st.just("rejected"),
        "tool": st.just("bash"),
        "act": st.sampled_from(ACTS),
        "rule": st.sampled_from(("reason-too-short", "unknown-act")),
        "message": prose,
        "given": st.fixed_dictionaries({"reason": prose, "command": prose}),
    }
)
outcome = st.fixed_dictionaries(
    {"kind": st.just("outcome"), "seq": seqs, "ok": st.booleans(), "outcome": prose},
    optional={
        "observed": st.fixed_dictionaries({"created": paths, "modified": paths}),
        "flags": st.lists(st.fixed_dictionaries({"flag": words, "message": prose}), max_size=2),
        "denied": st.booleans(),
        "evidence": st.just({"diff": {"sha256": "0" * 64, "bytes": 9}}),
    },
)
approval = st.fixed_dictionaries(
    {"kind": st.just("approval"), "seq": seqs, "decision": st.sampled_from(("approved", "denied"))}
)
review = st.fixed_dictionaries(
    {
        "kind": st.just("review"),
        "seq": seqs,
        "verdict": st.sampled_from(("ok", "flag", "block", "error")),
        "note": prose,
        "beliefs": st.lists(
            st.fixed_dictionaries(
                {"seq": seqs, "verdict": st.sampled_from(VERDICTS), "why": prose}
            ),
            max_size=2,
        ),
    },
    optional={"input_tokens": st.integers(0, 99), "cost": st.floats(0, 1)},
)
other = st.one_of(
    st.fixed_dictionaries({"kind": st.sampled_from(("text", "user", "final")), "text": prose}),
    st.fixed_dictionaries({"kind": st.just("stop"), "reason": prose, "message": prose}),
    st.fixed_dictionaries(
        {"kind": st.just("model"), "provider": words, "model": words},
        optional={"prompt_tokens": st.integers(0, 999)},
    ),
)
#: Turns: a call (or a rejected call), then what follows it, up to the next one.
turns = st.tuples(
    st.one_of(call, call, call, rejected),
    st.lists(st.one_of(outcome, outcome, approval, review, other), max_size=3),
)
records = st.lists(turns, min_size=1, max_size=14).map(
    lambda found: [record for first, rest in found for record in (first, *rest)]
)


def session_record(workspace: Path) -> dict[str, Any]:
    return {"kind": "session", "session": SESSION_ID * 2, "started": T, "workspace": str(workspace)}


def shown(layout: Layout) -> dict[str, bytes]:
    """RATIONALE.md and the session's pages (not the checkpoint: resume state)."""
    files = {"RATIONALE.md": layout.report.read_bytes()}
    for path in sorted(layout.pages.glob("*.md")):
        files[path.name] = path.read_bytes()
    return files


def rebuilt(journal: Path, root: Path) -> dict[str, bytes]:
    """What `rebuild` makes of a copy of the journal, in a workspace of its own."""
    workspace = root / "rebuilt"
    shutil.rmtree(workspace, ignore_errors=True)
    layout = Layout.of_session(workspace, SESSION_ID)
    layout.folder.mkdir(parents=True)
    shutil.copyfile(journal, layout.journal)
    rebuild(layout, PAGE)
    return shown(layout)


def numbered(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Calls and rejected calls take the next seq, as the session gives them; other seqs
    (-n: n calls back from the latest) become the seq they point to."""
    latest, out = 0, []
    for item in items:
        if item["kind"] in ("call", "rejected"):
            latest += 1
            item = {**item, "seq": latest}
        out.append({"t": T, **resolved(item, latest)})
    return out


def resolved(item: Any, latest: int) -> Any:
    if isinstance(item, dict):
        return {
            k: latest + v if k == "seq" and v <= 0 else resolved(v, latest) for k, v in item.items()
        }
    if isinstance(item, list):
        return [resolved(v, latest) for v in item]
    return item


BELIEF = {"kind": "call", "act": "test-hypothesis", "reason": "rows.py drops a row", "command": "t"}
CHANGE = {
    "kind": "call",
    "act": "change-state",
    "reason": "fix it",
    "command": "c",
    "path": "rows.py",
}


@pytest.mark.system  # end to end, slow for the default tier
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(items=records)
@example([BELIEF, {"kind": "outcome", "seq": 0, "ok": False, "outcome": "2 rows"}])
@example([BELIEF, {**CHANGE, "belief": {"seq": -1, "verdict": "refuted"}}])
@example([BELIEF, {"kind": "review", "seq": 0, "verdict": "flag", "note": "no", "beliefs": []}])
def test_the_report_after_every_record_is_the_rebuilt_report(items: list[dict[str, Any]]) -> None:
    with tempfile.TemporaryDirectory() as temp, ExitStack() as stack:
        stack.enter_context(mock.patch.object(render_beliefs, "SHOWN", 2))
        stack.enter_context(mock.patch.object(report_module, "DEAD_ENDS_SHOWN", 2))
        stack.enter_context(mock.patch.object(report_module, "MISMATCHES_SHOWN", 2))
        # The records are deliberately partial (what a foreign or broken writer might leave):
        # the report must cope with them, so the schema check the writer does is set aside.
        stack.enter_context(mock.patch.object(writer_module, "check", lambda record: None))
        root = Path(temp)
        layout = Layout.of_session(root / "ws", SESSION_ID)
        layout.folder.mkdir(parents=True)
        report = Report(layout, PAGE)
        writer = JournalWriter(layout.journal, report.take)
        writer.open()
        try:
            for record in [session_record(layout.workspace), *numbered(items)]:
                with writer.locked():
                    writer.append(record, durable=False)
                    report.write(writer.position)
                assert shown(layout) == rebuilt(layout.journal, root)
        finally:
            writer.close()
