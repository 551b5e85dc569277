"""RATIONALE.md: its sections, outcome-unknown calls, paging and resuming, atomic rewrites."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import EPISTEMIC, epistemic
from epistemic_agent.gate.check import Call, check
from epistemic_agent.journal.records import call_record, outcome_record
from epistemic_agent.reports.rationale.report import Report
from epistemic_agent.session.session import Session, Settings

REASON = "learn what this prints in the current workspace"
HYPOTHESIS = "I believe the file holds one line; if it holds two that belief is refuted"
FOOTER_END = "Check it with `epistemic verify`._"


def journal_lines(ws: Path) -> list[bytes]:
    return (ws / ".epistemic" / "journal.jsonl").read_bytes().splitlines()


def rationale(ws: Path) -> str:
    return (ws / "RATIONALE.md").read_text()


def section(text: str, title: str) -> str:
    """The body of one `## title` section."""
    start = text.index(f"## {title}\n")
    end = text.find("\n## ", start + 1)
    body = text[start:] if end < 0 else text[start:end]
    return body.split("\n---\n")[0]


def entry_titles(text: str) -> list[str]:
    return re.findall(r"^### (.*)$", text, re.M)


def entry_seqs(text: str) -> list[int]:
    return [int(n) for n in re.findall(r"^### (\d+)\. ", text, re.M)]


def report_files(ws: Path) -> dict[str, bytes]:
    files = {"RATIONALE.md": (ws / "RATIONALE.md").read_bytes()}
    for path in sorted((ws / ".epistemic" / "report").glob("*")):
        if path.name != "checkpoint.json":  # derived resume state, not the report
            files[path.name] = path.read_bytes()
    return files


def rebuild_and_compare(ws: Path) -> None:
    incremental = report_files(ws)
    (ws / "RATIONALE.md").unlink()
    shutil.rmtree(ws / ".epistemic" / "report", ignore_errors=True)
    done = epistemic("report", str(ws), cwd=ws.parent)
    assert done.returncode == 0, done.stderr
    rebuilt = report_files(ws)
    assert sorted(rebuilt) == sorted(incremental)
    for name, data in incremental.items():
        assert rebuilt[name] == data, f"{name} differs after `epistemic report`"


def declare_without_outcome(session: Session, command: str) -> int:
    """Append a call's declaration as Session.call does, but never run it or record an outcome."""
    verdict = check("bash", {"command": command, "type": "verify", "reason": REASON}, session.gate)
    assert isinstance(verdict, Call)
    with session.journal.locked():
        seq = session.journal.position.last_seq + 1
        session.journal.append(call_record(seq, verdict, None), durable=True)
        session._recorder.publish()
    return seq


# -- a small session ---------------------------------------------------------------------------

REVERT_OK = "the config file was the wrong approach, so undo it"
REVERT_FAILED = "the second helper broke the build; take it back out"


@pytest.fixture
def small(ws: Path) -> Path:
    with Session(ws) as s:
        s.bash("cat missing.txt", "cleanup", "x")  # 1 rejected
        s.bash("ls", "collect-info", REASON)  # 2
        s.write_file("a.txt", "one\n", "create the config file the task asks for")  # 3
        s.bash("cat a.txt; exit 1", "test-hypothesis", HYPOTHESIS)  # 4 FAILED
        s.bash("rm a.txt", "revert", REVERT_OK)  # 5 revert ok
        s.bash("echo tidy", "cleanup", "remove the scratch files this session made")  # 6
        s.bash("exit 3", "revert", REVERT_FAILED)  # 7 revert FAILED
        s.call("nope", {})  # 8 rejected
        s.bash("true", "setup", "short")  # 9 rejected
        s.bash("echo done", "verify", "confirm the finished work still passes")  # 10
    return ws


def test_shape_line_and_act_table(small: Path) -> None:
    text = rationale(small)
    lines = text.splitlines()
    shape = "_10 calls: 7 ran (2 failed), 3 rejected; 6 of the 7 that ran were shell acts._"
    assert shape in lines
    assert "_The table counts the calls that ran: a rejected or denied call did not._" in lines
    start = lines.index("| act type | calls that ran | share |")
    assert lines[start + 1] == "|----------|------:|------:|"
    rows = lines[start + 2 : lines.index("", start)]
    assert rows == [
        "| `collect-info` | 1 | 14% |",
        "| `test-hypothesis` | 1 | 14% |",
        "| `verify` | 1 | 14% |",
        "| `change-state` | 1 | 14% |",
        "| `revert` | 2 | 29% |",
        "| `cleanup` | 1 | 14% |",
    ]


@pytest.mark.system  # an entry says the workspace was read-only: confinement
def test_narrative_entries(small: Path) -> None:
    text = rationale(small)
    narrative = section(text, "Narrative")
    assert entry_titles(narrative) == [
        "1. `cleanup` · REJECTED",
        "2. `collect-info` · ok",
        "3. `change-state` · ok · write_file",
        "4. `test-hypothesis` · FAILED",
        "5. `revert` · ok",
        "6. `cleanup` · ok",
        "7. `revert` · FAILED",
        "8. (no act) · REJECTED · nope",
        "9. `setup` · REJECTED",
        "10. `verify` · ok",
    ]
    assert narrative.count("**Why:** ") == 10
    assert f"**Why:** {HYPOTHESIS}\n" in narrative
    assert "**Why:** _(no reason given)_" in narrative
    assert "```bash\ncat a.txt; exit 1\n```" in narrative
    assert "`write_file a.txt (4 bytes)`" in narrative
    assert "**Outcome:** rc=1 — one · workspace read-only" in narrative
    assert "**Outcome:** created a.txt (4 bytes) · changed: 1 created\n" in narrative
    assert "**Outcome:** rc=3 — (no output) · " in narrative
    assert "**Rejected** (`reason-too-short`): \\`reason\\` is too terse (1 chars" in narrative
    assert "**Rejected** (`unknown-tool`): unknown tool 'nope'" in narrative
    assert narrative.count("**Outcome:** ") == 7


def test_dead_ends_and_rejections(small: Path) -> None:
    text = rationale(small)
    dead = section(text, "Dead ends").strip().splitlines()
    assert dead[2:] == [
        f"- **Call 5** (ok): {REVERT_OK} `rm a.txt`",
        f"- **Call 7** (FAILED): {REVERT_FAILED} `exit 3`",
    ]
    rejections = section(text, "Rejections by rule").strip().splitlines()
    assert rejections[2:] == [
        "| rule | calls |",
        "|------|------:|",
        "| `reason-too-short` | 2 |",
        "| `unknown-tool` | 1 |",
    ]


def test_footer_is_the_journal_head(small: Path) -> None:
    text = rationale(small)
    lines = journal_lines(small)
    head = hashlib.sha256(lines[-1]).hexdigest()
    assert text.endswith(
        f"---\n\n_Journal head: `{head}` after {len(lines)} line(s) of "
        f"`.epistemic/journal.jsonl`. {FOOTER_END}\n"
    )
    anchor = json.loads((small / ".epistemic" / "head.json").read_text())
    assert (anchor["head"], anchor["lines"]) == (head, len(lines))


def test_header_names_the_session(small: Path) -> None:
    text = rationale(small)
    session = json.loads(journal_lines(small)[0])
    assert text.startswith("# RATIONALE\n\n_session `" + session["session"] + "`")
    assert f"workspace `{small.resolve()}`" in text


def test_small_session_rebuilds_identically(small: Path) -> None:
    rebuild_and_compare(small)


def test_empty_session_report(ws: Path) -> None:
    Session(ws).open().close()
    text = rationale(ws)
    assert "_No calls._" in text
    assert "| act type |" not in text
    assert "_No reverts: no change-state was undone._" in text
    assert "_No call was rejected._" in text
    assert entry_titles(text) == []


def test_act_table_follows_vocabulary_order(ws: Path) -> None:
    with Session(ws) as s:
        for act in ("cleanup", "setup", "setup", "verify", "collect-info", "collect-info"):
            s.bash("true", act, f"a step of kind {act} that this session needs")
    text = rationale(ws)
    rows = [line for line in text.splitlines() if line.startswith("| `")]
    assert rows == [
        "| `collect-info` | 2 | 33% |",
        "| `verify` | 1 | 17% |",
        "| `setup` | 2 | 33% |",
        "| `cleanup` | 1 | 17% |",
    ]


# -- outcome unknown ---------------------------------------------------------------------------


def test_call_without_outcome_is_outcome_unknown(ws: Path) -> None:
    with Session(ws) as s:
        s.bash("echo first", "collect-info", REASON)
        seq = declare_without_outcome(s, "sleep 1000")
    assert seq == 2
    (ws / "RATIONALE.md").unlink()
    done = epistemic("report", cwd=ws)
    assert done.returncode == 0, done.stderr
    text = rationale(ws)
    assert entry_titles(text)[-1] == "2. `verify` · running: no outcome yet"
    assert "**Outcome:** unknown: no outcome was recorded" in text
    done = epistemic("log", "--json", cwd=ws)
    assert [v["status"] for v in json.loads(done.stdout)] == ["ran", "unknown"]


def test_killed_writer_leaves_outcome_unknown_until_the_next_writer_recovers_it(ws: Path) -> None:
    process = subprocess.Popen(
        [EPISTEMIC, "exec", "--type", "verify", "--reason", REASON, "--", "sleep 30"], cwd=ws
    )
    journal = ws / ".epistemic" / "journal.jsonl"
    deadline = time.monotonic() + 30
    while not (journal.exists() and journal.read_bytes().count(b"\n") == 2):
        assert time.monotonic() < deadline
        time.sleep(0.02)
    process.kill()  # from outside: no act can signal the session that records it
    assert process.wait(timeout=30) == -9
    assert [json.loads(line)["kind"] for line in journal_lines(ws)] == ["session", "call"]
    done = epistemic("report", cwd=ws)
    assert done.returncode == 0, done.stderr
    assert entry_titles(rationale(ws)) == ["1. `verify` · running: no outcome yet"]
    # the next process continues the journal, and closes the orphaned call first
    done = epistemic("exec", "--type", "verify", "--reason", REASON, "--", "echo next", cwd=ws)
    assert (done.returncode, done.stdout) == (0, "next\n")
    assert entry_titles(rationale(ws)) == ["1. `verify` · ABORTED", "2. `verify` · ok"]
    recovered = [json.loads(line) for line in journal_lines(ws)][2]
    assert recovered["kind"] == "outcome" and recovered["seq"] == 1
    assert recovered["recovered"] is True and recovered["interrupted"] is True
    assert recovered["flags"][0]["flag"] == "session-killed"


# -- paging ------------------------------------------------------------------------------------

CALLS = 250


def make_paged(ws: Path) -> None:
    """Unconfined, whichever tier's test makes it first: the tests that continue it do so
    unconfined too (the report's paging is what they check)."""
    (ws / "f.txt").write_text("x\n")
    with Session(ws, Settings(enforce=False)) as s:
        for i in range(1, CALLS + 1):
            reason = f"learn the state of marker number {i}"
            result = (
                s.bash(f"echo {i}", "collect-info", reason)
                if i % 10 == 0
                else s.read_file("f.txt", reason)
            )
            assert result.ok and result.seq == i


@pytest.fixture(scope="module")
def paged(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A workspace with 250 calls: 25 `echo` shell acts and 225 read_file calls."""
    ws = tmp_path_factory.mktemp("paged") / "ws"
    ws.mkdir()
    make_paged(ws)
    return ws


@pytest.fixture
def paged_copy(paged: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "ws"
    shutil.copytree(paged, copy, symlinks=True)
    return copy


@pytest.mark.system  # end to end, slow for the default tier
def test_pages(paged: Path) -> None:
    text = rationale(paged)
    first = ".epistemic/report/calls-000001-000100.md"
    second = ".epistemic/report/calls-000101-000200.md"
    assert f"Earlier calls, one page per 100: [1–100]({first}), [101–200]({second}).\n" in text
    assert entry_seqs(text) == list(range(201, 251))
    assert f"_{CALLS} calls: {CALLS} ran; 25 of the {CALLS} that ran were shell acts._" in text
    assert "| `collect-info` | 250 | 100% |" in text
    page1, page2 = (paged / first).read_text(), (paged / second).read_text()
    assert page1.startswith("# RATIONALE: calls 1–100\n")
    assert page2.startswith("# RATIONALE: calls 101–200\n")
    assert entry_seqs(page1) == list(range(1, 101))
    assert entry_seqs(page2) == list(range(101, 201))
    assert "**Why:** learn the state of marker number 100\n" in page1
    assert "**Outcome:** rc=0 — 100 · " in page1
    assert "**Why:** learn the state of marker number 137\n" in page2
    assert "no outcome yet" not in page1 + page2 + text
    assert not (paged / ".epistemic" / "report" / "calls-000201-000300.md").exists()


def test_resume_continues_numbering_from_the_checkpoint(
    paged_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = paged_copy
    folded: list[dict[str, Any]] = []
    original = Report.fold

    def counting(self: Report, record: dict[str, Any], before: Any) -> None:
        folded.append(record)
        original(self, record, before)

    monkeypatch.setattr(Report, "fold", counting)
    with Session(ws, Settings(enforce=False)) as s:  # as make_paged: no confinement record
        # resumed where the last session closed: nothing was re-read
        assert folded == []
        assert s.state.tally.ran["collect-info"] == CALLS
        result = s.bash("echo again", "collect-info", REASON)
        assert result.seq == CALLS + 1
        read = s.read_file("f.txt", REASON)
        assert read.seq == CALLS + 2
    text = rationale(ws)
    assert "_252 calls: 252 ran; 26 of the 252 that ran were shell acts._" in text
    assert "| `collect-info` | 252 | 100% |" in text
    assert entry_seqs(text) == list(range(201, 253))
    head = hashlib.sha256(journal_lines(ws)[-1]).hexdigest()
    assert f"_Journal head: `{head}` after {len(journal_lines(ws))} line(s)" in text


def test_cli_calls_resume_too(paged_copy: Path) -> None:
    done = epistemic(
        "exec", "--type", "collect-info", "--reason", REASON, "--", "echo 251", cwd=paged_copy
    )
    assert (done.returncode, done.stdout) == (0, "251\n")
    done = epistemic(
        "exec", "--json", "--type", "setup", "--reason", "x", "--", "true", cwd=paged_copy
    )
    assert json.loads(done.stdout)["seq"] == 252
    text = rationale(paged_copy)
    assert "_252 calls: 251 ran, 1 rejected; 26 of the 251 that ran were shell acts._" in text
    assert entry_seqs(text) == list(range(201, 253))


def test_paged_session_rebuilds_identically(paged_copy: Path) -> None:
    rebuild_and_compare(paged_copy)


def test_late_outcome_rewrites_a_finished_page(ws: Path) -> None:
    """Call 100 finishes after another writer has started page 2 with call 101."""
    (ws / "f.txt").write_text("x\n")
    slow, other = Session(ws).open(), Session(ws).open()
    try:
        for _ in range(99):
            slow.read_file("f.txt", REASON)
        seq = declare_without_outcome(slow, "sleep 1")
        assert seq == 100
        assert other.read_file("f.txt", REASON).seq == 101
        page = ws / ".epistemic" / "report" / "calls-000001-000100.md"
        assert entry_titles(page.read_text())[-1] == "100. `verify` · running: no outcome yet"
        with slow.journal.locked():
            slow.journal.append(
                outcome_record(seq, True, "rc=0 — late", 1.0, {}, returncode=0), durable=False
            )
            slow._recorder.publish()
        assert entry_titles(page.read_text())[-1] == "100. `verify` · ok"
        assert "**Outcome:** rc=0 — late\n" in page.read_text()
        assert entry_seqs(rationale(ws)) == [101]
    finally:
        slow.close()
        other.close()
    rebuild_and_compare(ws)


# -- atomic rewrites ---------------------------------------------------------------------------


@pytest.mark.system  # end to end, slow for the default tier
def test_readers_never_see_a_half_written_report(ws: Path) -> None:
    (ws / "f.txt").write_text("x\n")
    session = Session(ws).open()
    done = threading.Event()
    reads: list[int] = []
    torn: list[str] = []
    errors: list[BaseException] = []

    def writer() -> None:
        try:
            for i in range(200):
                if i % 20 == 0:
                    session.bash(f"echo {i}", "collect-info", REASON)
                else:
                    session.read_file("f.txt", REASON)
        except BaseException as error:
            errors.append(error)
        finally:
            done.set()

    def reader() -> None:
        while not done.is_set():
            text = (ws / "RATIONALE.md").read_text()
            reads.append(len(text))
            last = text.rstrip("\n").rsplit("\n", 1)[-1]
            if not (last.startswith("_Journal head: `") and last.endswith(FOOTER_END)):
                torn.append(text[-200:])

    threads = [threading.Thread(target=writer), threading.Thread(target=reader)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    session.close()
    assert not errors
    assert not torn, torn[:3]
    assert len(reads) >= 20
    assert entry_seqs(rationale(ws)) == list(range(101, 201))
    assert not [p for p in ws.iterdir() if p.name.startswith(".RATIONALE.md.")]
