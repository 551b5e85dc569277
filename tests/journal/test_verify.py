"""`verify_journal` and `epistemic verify`: an untouched chain passes, every tampering is named."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import EPISTEMIC
from epistemic_agent.journal.log import GENESIS
from epistemic_agent.journal.verify import verify_journal
from epistemic_agent.session.session import Session
from journalfiles import anchor_of, journal_of, sha

REASONS = (
    "see which files the workspace starts with",
    "confirm the greeting script prints what we expect",
    "record the interpreter version for the report",
)
COMMANDS = ("echo one", "echo two", "echo three")
# The journal these tests start from: 1 header, then call + outcome per command.
#   1 session | 2 call 1 | 3 outcome 1 | 4 call 2 | 5 outcome 2 | 6 call 3 | 7 outcome 3
LINES = 7


def make_journal(ws: Path) -> Path:
    ws.mkdir(parents=True, exist_ok=True)
    with Session(ws) as session:
        for command, reason in zip(COMMANDS, REASONS, strict=True):
            result = session.bash(command, "collect-info", reason)
            assert result.status == "ran" and result.ok
    return ws


def read_lines(ws: Path) -> list[bytes]:
    """The journal's lines, each with its newline."""
    return journal_of(ws).read_bytes().splitlines(keepends=True)


def write_lines(ws: Path, lines: list[bytes]) -> None:
    journal_of(ws).write_bytes(b"".join(lines))


def cli_verify(target: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [str(EPISTEMIC), "verify", str(target), *extra],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert "Traceback" not in done.stderr, done.stderr
    return done


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_journal(tmp_path_factory.mktemp("template") / "ws")


@pytest.fixture
def ws(template: Path, tmp_path: Path) -> Path:
    """A fresh copy of a seven-line journal and its head anchor."""
    target = tmp_path / "ws"
    shutil.copytree(template, target)
    assert len(read_lines(target)) == LINES
    return target


def assert_tampered(ws: Path, line: int, *fragments: str) -> None:
    result = verify_journal(journal_of(ws), anchor_of(ws))
    assert result.status == "tampered", result.to_json()
    assert result.exit_code == 1
    assert result.line == line, result.to_json()
    for fragment in fragments:
        assert fragment in (result.problem or ""), (fragment, result.problem)
    done = cli_verify(ws)
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stdout.startswith(f"TAMPERED: {result.problem}"), done.stdout


# -- an untouched journal ----------------------------------------------------------------------


def test_untouched_journal_is_intact(ws: Path) -> None:
    lines = read_lines(ws)
    result = verify_journal(journal_of(ws), anchor_of(ws))
    assert result.status == "intact"
    assert result.exit_code == 0
    assert result.lines == LINES
    assert result.head == sha(lines[-1].rstrip(b"\n"))
    assert result.problem is None and result.line is None
    assert result.notes == []
    done = cli_verify(ws)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip() == f"intact: {LINES} line(s), head {result.head}"


@pytest.mark.parametrize("which", ["record-dir", "journal-file"])
def test_cli_accepts_the_record_folder_or_the_journal_file(ws: Path, which: str) -> None:
    target = ws / ".epistemic" if which == "record-dir" else journal_of(ws)
    done = cli_verify(target, "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    data = json.loads(done.stdout)
    assert data["status"] == "intact"
    assert data["lines"] == LINES
    assert data["problem"] is None
    assert data["notes"] == []  # the anchor beside the journal was found and used


def test_cli_json_reports_the_problem(ws: Path) -> None:
    lines = read_lines(ws)
    write_lines(ws, lines[:3] + lines[4:])
    done = cli_verify(ws, "--json")
    assert done.returncode == 1
    data = json.loads(done.stdout)
    assert data["status"] == "tampered"
    assert data["line"] == 4
    assert "deleted before line 4" in data["problem"]


def test_cli_without_a_journal_is_a_usage_error(tmp_path: Path) -> None:
    done = cli_verify(tmp_path)
    assert done.returncode == 2
    assert "no journal at" in done.stderr


# -- tampering, each named with the right line -------------------------------------------------


def test_edited_middle_reason(ws: Path) -> None:
    lines = read_lines(ws)
    assert REASONS[1].encode() in lines[3]
    lines[3] = lines[3].replace(REASONS[1].encode(), b"a reason written after the fact")
    json.loads(lines[3])  # still valid JSON: only the chain can tell
    write_lines(ws, lines)
    assert_tampered(ws, 4, "line 4 was edited: line 5 recorded a different hash for it")


def test_edited_line_that_no_longer_parses(ws: Path) -> None:
    lines = read_lines(ws)
    lines[2] = b"overwritten by a disk error\n"
    write_lines(ws, lines)
    assert_tampered(ws, 3, "line 3 is not a journal entry (edited or corrupted)")


def test_edited_prev_hash_of_a_middle_line(ws: Path) -> None:
    lines = read_lines(ws)
    assert lines[2][9:73] != b"e" * 64
    lines[2] = lines[2][:9] + b"e" * 64 + lines[2][73:]
    json.loads(lines[2])
    write_lines(ws, lines)
    assert_tampered(ws, 3, "line 3 was edited: its content no longer matches the chain")


def test_deleted_middle_line(ws: Path) -> None:
    lines = read_lines(ws)
    write_lines(ws, lines[:3] + lines[4:])  # drop line 4 (call 2)
    assert_tampered(
        ws,
        4,
        "1 line(s) were deleted before line 4",
        "records a predecessor that is not in the journal",
    )


def test_deleted_two_middle_lines(ws: Path) -> None:
    lines = read_lines(ws)
    write_lines(ws, lines[:2] + lines[4:])  # drop lines 3 and 4
    assert_tampered(ws, 3, "2 line(s) were deleted before line 3")


def forged(prev: str, n: int) -> bytes:
    record = {
        "prev": prev,
        "n": n,
        "v": 1,
        "kind": "call",
        "seq": 99,
        "tool": "bash",
        "act": "verify",
        "reason": "a call that never happened, slipped in later",
        "command": "true",
    }
    return json.dumps(record, separators=(",", ":")).encode() + b"\n"


def test_inserted_line_with_bogus_prev(ws: Path) -> None:
    lines = read_lines(ws)
    write_lines(ws, [*lines[:3], forged("f" * 64, 4), *lines[3:]])
    assert_tampered(ws, 4, "line 4 was inserted: the chain skips over it")


def test_inserted_line_with_correct_prev(ws: Path) -> None:
    lines = read_lines(ws)
    fake = forged(sha(lines[2].rstrip(b"\n")), 4)
    write_lines(ws, [*lines[:3], fake, *lines[3:]])
    assert_tampered(ws, 4, "line(s) 4-4 were inserted: line 5 records line 3 as its predecessor")


def test_swapped_lines(ws: Path) -> None:
    lines = read_lines(ws)
    lines[3], lines[4] = lines[4], lines[3]
    write_lines(ws, lines)
    assert_tampered(ws, 4, "lines were reordered: line 4 was written after line 5")


@pytest.mark.parametrize("cut", [1, 2, 4])
def test_truncated_tail_is_caught_by_the_anchor(ws: Path, cut: int) -> None:
    lines = read_lines(ws)
    write_lines(ws, lines[:-cut])
    assert_tampered(
        ws,
        LINES - cut + 1,
        f"truncated: the head anchor records {LINES} lines, the journal has {LINES - cut}",
    )


def test_truncated_tail_without_anchor_is_only_a_note(ws: Path) -> None:
    lines = read_lines(ws)
    write_lines(ws, lines[:-2])
    anchor_of(ws).unlink()
    result = verify_journal(journal_of(ws), anchor_of(ws))
    assert result.status == "intact"
    assert result.lines == LINES - 2
    assert any("no head anchor" in note for note in result.notes), result.notes
    done = cli_verify(ws)  # the chain cannot tell, the evidence can: call 3's output is orphaned
    assert done.returncode == 1
    assert (
        done.stdout.startswith("TAMPERED: evidence ") and "referenced by no record" in done.stdout
    )
    assert "note: no head anchor" in done.stdout


def test_a_cut_of_only_the_last_outcome_without_anchor_is_a_note(ws: Path) -> None:
    lines = read_lines(ws)
    write_lines(ws, lines[:-1])
    anchor_of(ws).unlink()
    done = cli_verify(ws)  # call 3 now has no outcome: its output may be a call in flight
    assert done.returncode == 0, done.stdout
    assert "note: no head anchor" in done.stdout
    assert "note: 1 evidence blob(s) referenced by no record yet" in done.stdout


def test_edited_last_line_is_caught_by_the_anchor(ws: Path) -> None:
    lines = read_lines(ws)
    assert b'"ok":true' in lines[-1]
    lines[-1] = lines[-1].replace(b'"ok":true', b'"ok":false')
    write_lines(ws, lines)
    assert_tampered(
        ws,
        LINES,
        f"line {LINES} was changed after it was written: it no longer matches the head anchor",
    )


def test_forged_line_appended_after_the_anchor_is_noted(ws: Path) -> None:
    lines = read_lines(ws)
    write_lines(ws, [*lines, forged(sha(lines[-1].rstrip(b"\n")), LINES + 1)])
    result = verify_journal(journal_of(ws), anchor_of(ws))
    assert result.status == "intact"  # a correctly chained tail cannot be told from a new call
    assert result.lines == LINES + 1
    assert result.notes == [
        "1 line(s) after the last anchored head (a call in progress, or a crash before the "
        "report was updated)"
    ]


def test_unreadable_anchor_is_noted(ws: Path) -> None:
    anchor_of(ws).write_text("{not json")
    result = verify_journal(journal_of(ws), anchor_of(ws))
    assert result.status == "intact"
    assert result.notes == ["the head anchor head.json is unreadable; tail not checked"]


def anchor_at(ws: Path, count: int) -> None:
    """Move the head anchor back to line `count`, as it stood before the next line was written
    (a crash mid-write of a line leaves the anchor before it)."""
    lines = read_lines(ws)
    position = {
        "offset": sum(map(len, lines[:count])),
        "lines": count,
        "head": sha(lines[count - 1].rstrip(b"\n")),
        "last_seq": 0,
    }
    anchor_of(ws).write_text(json.dumps(position).ljust(255) + "\n")


def test_file_cut_mid_line_is_torn(ws: Path) -> None:
    data = journal_of(ws).read_bytes()
    lines = read_lines(ws)
    keep = sum(map(len, lines[:-1])) + len(lines[-1]) // 2
    anchor_at(ws, LINES - 1)
    journal_of(ws).write_bytes(data[:keep])
    result = verify_journal(journal_of(ws), anchor_of(ws))
    assert result.status == "torn"
    assert result.exit_code == 3
    assert result.line == LINES
    assert result.lines == LINES - 1
    assert result.head == sha(lines[-2].rstrip(b"\n"))
    assert result.problem == (
        f"line {LINES} is torn: it was cut mid-write (a crash or kill); lines 1-{LINES - 1} verify"
    )
    done = cli_verify(ws)
    assert done.returncode == 3
    assert done.stdout.startswith(f"TORN: line {LINES} is torn")
    assert f"lines 1-{LINES - 1} verify" in done.stdout


def test_missing_final_newline_is_torn(ws: Path) -> None:
    data = journal_of(ws).read_bytes()
    anchor_at(ws, LINES - 1)
    journal_of(ws).write_bytes(data[:-1])
    result = verify_journal(journal_of(ws), anchor_of(ws))
    assert result.status == "torn"
    assert result.line == LINES


def test_a_file_that_is_not_a_journal(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("hello world\nsecond line\n")
    result = verify_journal(path)
    assert result.status == "tampered"
    assert result.line == 1
    assert result.problem == "line 1 is not a journal entry (edited or corrupted)"
    done = cli_verify(path)
    assert done.returncode == 1
    assert "TAMPERED: line 1 is not a journal entry" in done.stdout


def test_empty_journal_is_intact_with_genesis_head(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    path.write_bytes(b"")
    result = verify_journal(path)
    assert result.status == "intact"
    assert result.lines == 0
    assert result.head == GENESIS


# -- properties: no single change goes unnoticed ----------------------------------------------


@pytest.mark.parametrize("index", range(LINES))
def test_deleting_any_one_line_is_detected(ws: Path, index: int) -> None:
    lines = read_lines(ws)
    write_lines(ws, lines[:index] + lines[index + 1 :])
    result = verify_journal(journal_of(ws), anchor_of(ws))
    assert result.status == "tampered", result.to_json()
    assert result.line == index + 1, result.to_json()


@pytest.mark.parametrize(("i", "j"), [(i, j) for i in range(LINES) for j in range(i + 1, LINES)])
def test_swapping_any_two_lines_is_detected(ws: Path, i: int, j: int) -> None:
    lines = read_lines(ws)
    lines[i], lines[j] = lines[j], lines[i]
    write_lines(ws, lines)
    result = verify_journal(journal_of(ws), anchor_of(ws))
    assert result.status == "tampered", result.to_json()
    assert result.line is not None and result.line <= i + 1, result.to_json()


@settings(max_examples=50, deadline=None)
@given(data=st.data())
def test_any_single_byte_change_is_detected(
    template: Path, tmp_path_factory: pytest.TempPathFactory, data: st.DataObject
) -> None:
    original = journal_of(template).read_bytes()
    position = data.draw(st.integers(0, len(original) - 1), label="position")
    byte = data.draw(st.integers(0, 255).filter(lambda b: b != original[position]), label="byte")
    changed = original[:position] + bytes([byte]) + original[position + 1 :]
    target = tmp_path_factory.mktemp("flip")
    (target / ".epistemic").mkdir()
    journal_of(target).write_bytes(changed)
    shutil.copy(anchor_of(template), anchor_of(target))
    result = verify_journal(journal_of(target), anchor_of(target))
    assert result.status in ("tampered", "torn"), (position, byte, result.to_json())
