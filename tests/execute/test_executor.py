"""Running calls through a Session: process groups, bounded output, evidence and the file tools."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import resource
import shlex
import signal
import subprocess
import time
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from epistemic_agent.session.session import CallResult, Session, Settings

REASON = "learn what this prints in the current workspace"
EDIT_REASON = "make the greeting match what the specification asks for"

pytestmark = pytest.mark.skipif(
    not Path("/proc/self/stat").exists(), reason="process checks read /proc"
)


def records(ws: Path) -> list[dict[str, Any]]:
    lines = (ws / ".epistemic" / "journal.jsonl").read_bytes().splitlines()
    return [json.loads(line) for line in lines]


def outcome_of(ws: Path, seq: int) -> dict[str, Any]:
    [found] = [r for r in records(ws) if r["kind"] == "outcome" and r["seq"] == seq]
    return found


def evidence_bytes(ws: Path, ref: dict[str, Any]) -> bytes:
    sha = ref["sha256"]
    data = (ws / ".epistemic" / "evidence" / sha[:2] / sha).read_bytes()
    assert hashlib.sha256(data).hexdigest() == sha
    return data


def marked(marker: str) -> list[int]:
    """The processes running `sleep MARKER` (an act's own pids are its PID namespace's)."""
    found = subprocess.run(["pgrep", "-f", f"sleep {marker}"], capture_output=True, text=True)
    return [int(pid) for pid in found.stdout.split()]


def all_gone_within(marker: str, seconds: float) -> bool:
    """No process runs `sleep MARKER` within `seconds` (a zombie has no command line)."""
    deadline = time.monotonic() + seconds
    while marked(marker):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def kill_quietly(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, signal.SIGKILL)


@pytest.fixture
def session(ws: Path) -> Any:
    with Session(ws) as opened:
        yield opened


# -- process groups ----------------------------------------------------------------------------


@pytest.mark.system  # end to end, slow for the default tier
def test_timeout_kills_the_whole_process_group(ws: Path, tmp_path: Path) -> None:
    pidfile, marker = ws / "bg.pid", f"300.{os.getpid()}1"
    command = f"sleep {marker} & echo $! > {shlex.quote(str(pidfile))}; sleep 300"
    with Session(ws, Settings(timeout=1)) as session:
        started = time.monotonic()
        result = session.bash(command, "setup", REASON)
        elapsed = time.monotonic() - started
    try:
        assert pidfile.read_text().strip()  # the background sleep started
        assert 1 <= elapsed < 4
        assert result.timed_out is True
        assert result.returncode is None
        assert result.ok is False
        assert result.outcome.startswith("timed out after 1 s")
        assert all_gone_within(marker, 3), "the background sleep survived the timeout"
        recorded = outcome_of(ws, result.seq)
        assert (recorded["timed_out"], recorded["returncode"], recorded["ok"]) == (
            True,
            None,
            False,
        )
    finally:
        for pid in marked(marker):
            kill_quietly(pid)


@pytest.mark.system  # end to end, slow for the default tier
def test_timeout_escalates_to_sigkill(ws: Path, tmp_path: Path) -> None:
    """A group that ignores SIGTERM is killed after the grace period."""
    pidfile, marker = ws / "bg.pid", f"300.{os.getpid()}2"
    command = f"trap '' TERM; sleep {marker} & echo $! > {shlex.quote(str(pidfile))}; sleep 300"
    with Session(ws, Settings(timeout=0.5)) as session:
        started = time.monotonic()
        result = session.bash(command, "setup", REASON)
        elapsed = time.monotonic() - started
    try:
        assert pidfile.read_text().strip()
        assert result.timed_out is True
        assert elapsed < 5
        assert all_gone_within(marker, 3), "the background sleep survived SIGKILL"
    finally:
        for pid in marked(marker):
            kill_quietly(pid)


def test_background_process_left_behind_is_stopped(session: Session, ws: Path) -> None:
    pidfile, marker = ws / "bg.pid", f"300.{os.getpid()}3"
    started = time.monotonic()
    result = session.bash(
        f"sleep {marker} & echo $! > {shlex.quote(str(pidfile))}; echo started", "setup", REASON
    )
    elapsed = time.monotonic() - started
    try:
        assert pidfile.read_text().strip()
        assert elapsed < 2
        assert result.ok is True
        assert result.returncode == 0
        assert result.stdout == "started\n"
        assert "background processes it left were stopped" in result.outcome
        assert all_gone_within(marker, 3), "the background sleep outlived its call"
    finally:
        for pid in marked(marker):
            kill_quietly(pid)


def test_plain_command_mentions_no_background(session: Session) -> None:
    result = session.bash("echo done", "collect-info", REASON)
    assert result.outcome == "rc=0 — done"


def test_rejected_call_never_runs(session: Session, ws: Path) -> None:
    result = session.bash("touch marker", "setup", "too short")
    assert result.status == "rejected"
    assert result.rule == "reason-too-short"
    assert not (ws / "marker").exists()
    assert [r["kind"] for r in records(ws)] == ["session", "rejected"]


def test_commands_run_in_the_workspace(session: Session, ws: Path) -> None:
    result = session.bash("pwd; echo $0", "collect-info", REASON)
    assert result.stdout == f"{ws.resolve()}\nbash\n"


# -- bounded output, memory --------------------------------------------------------------------


@pytest.mark.system  # end to end, slow for the default tier
def test_huge_output_is_bounded_and_memory_stays_flat(session: Session, ws: Path) -> None:
    size = 50_000_000
    limit = session.settings.output_limit
    cap = session.settings.evidence_cap
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    tracemalloc.start()
    try:
        result = session.bash(f"head -c {size} /dev/zero | tr '\\0' a", "collect-info", REASON)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    rss_growth = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss_before
    assert result.ok
    assert len(result.stdout) < 2 * limit
    cut = size - 2 * (limit // 2)
    assert f"[... {cut} bytes cut: the full output is kept as evidence ...]" in result.stdout
    assert result.stdout.startswith("a" * (limit // 2) + "\n[...")
    assert result.stdout.endswith("...]\n" + "a" * (limit // 2))
    assert peak < 8_000_000, f"traced peak {peak} bytes for a {size}-byte output"
    assert rss_growth < 30_000, f"peak RSS grew by {rss_growth} KiB"
    ref = outcome_of(ws, result.seq)["evidence"]["stdout"]
    assert (ref["bytes"], ref["kept"]) == (size, cap)
    path = ws / ".epistemic" / "evidence" / ref["sha256"][:2] / ref["sha256"]
    assert path.stat().st_size == cap
    with path.open("rb") as handle:
        assert handle.read(100) == b"a" * 100
    assert_only_empty_capture_files(ws)


def test_output_over_the_limit_keeps_head_and_tail(ws: Path) -> None:
    with Session(ws, Settings(output_limit=1000)) as session:
        result = session.bash(
            "for i in $(seq 1000 1999); do echo $i; done; echo bad >&2", "collect-info", REASON
        )
    assert len(result.stdout) < 2000
    assert result.stdout.startswith("1000\n1001\n")
    assert result.stdout.endswith("1998\n1999\n")
    assert "[... 4000 bytes cut: the full output is kept as evidence ...]" in result.stdout
    assert result.stderr == "bad\n"
    full = evidence_bytes(ws, outcome_of(ws, result.seq)["evidence"]["stdout"])
    assert full == "".join(f"{i}\n" for i in range(1000, 2000)).encode()


def test_random_binary_output(session: Session, ws: Path) -> None:
    result = session.bash("head -c 1000 /dev/urandom | tee random.bin", "change-state", REASON)
    data = (ws / "random.bin").read_bytes()
    assert len(data) == 1000
    ref = outcome_of(ws, result.seq)["evidence"]["stdout"]
    assert (ref["bytes"], ref["kept"]) == (1000, 1000)
    assert evidence_bytes(ws, ref) == data
    if b"\0" in data:  # nearly always (1 - (255/256)**1000 > 0.98)
        assert result.stdout == "[binary output: 1000 bytes, kept as evidence]"
    else:
        assert result.stdout == data.decode("utf-8", "replace")


def test_output_with_nul_bytes_is_a_note(session: Session, ws: Path) -> None:
    result = session.bash("printf 'a\\0b\\0c'", "collect-info", REASON)
    assert result.ok
    assert result.stdout == "[binary output: 5 bytes, kept as evidence]"
    assert result.outcome == "rc=0 — [binary output: 5 bytes, kept as evidence]"
    ref = outcome_of(ws, result.seq)["evidence"]["stdout"]
    assert ref["bytes"] == 5
    assert evidence_bytes(ws, ref) == b"a\0b\0c"


def test_undecodable_utf8_is_replaced(session: Session, ws: Path) -> None:
    result = session.bash("printf '\\xff\\xfe ok\\n'; printf 'x\\xc3' >&2", "verify", REASON)
    assert result.ok
    assert result.stdout == "\ufffd\ufffd ok\n"
    assert result.stderr == "x\ufffd"
    evidence = outcome_of(ws, result.seq)["evidence"]
    assert evidence_bytes(ws, evidence["stdout"]) == b"\xff\xfe ok\n"
    assert evidence_bytes(ws, evidence["stderr"]) == b"x\xc3"


# -- evidence ------------------------------------------------------------------------------------


def test_evidence_holds_the_exact_output(session: Session, ws: Path) -> None:
    result = session.bash("printf 'hello\\nworld\\n'; printf 'oops\\n' >&2", "verify", REASON)
    evidence = outcome_of(ws, result.seq)["evidence"]
    assert set(evidence) == {"stdout", "stderr"}
    assert evidence_bytes(ws, evidence["stdout"]) == b"hello\nworld\n"
    assert evidence_bytes(ws, evidence["stderr"]) == b"oops\n"
    assert evidence["stdout"]["sha256"] == hashlib.sha256(b"hello\nworld\n").hexdigest()
    assert (evidence["stdout"]["bytes"], evidence["stdout"]["kept"]) == (12, 12)


def test_empty_output_stores_no_evidence(session: Session, ws: Path) -> None:
    result = session.bash("true", "verify", REASON)
    assert outcome_of(ws, result.seq)["evidence"] == {}
    assert_only_empty_capture_files(ws)


def test_same_output_is_stored_once(session: Session, ws: Path) -> None:
    first = session.bash("echo same", "verify", REASON)
    second = session.bash("echo same", "verify", REASON)
    a = outcome_of(ws, first.seq)["evidence"]["stdout"]["sha256"]
    b = outcome_of(ws, second.seq)["evidence"]["stdout"]["sha256"]
    assert a == b
    blobs = [p for p in (ws / ".epistemic" / "evidence").rglob("*") if p.is_file()]
    assert len(blobs) == 1


def test_evidence_cap_for_command_output(ws: Path) -> None:
    with Session(ws, Settings(evidence_cap=1000)) as session:
        result = session.bash("head -c 5000 /dev/zero | tr '\\0' b", "collect-info", REASON)
    assert result.stdout == "b" * 5000
    ref = outcome_of(ws, result.seq)["evidence"]["stdout"]
    assert (ref["bytes"], ref["kept"]) == (5000, 1000)
    assert evidence_bytes(ws, ref) == b"b" * 1000


def test_evidence_cap_for_file_tools(ws: Path) -> None:
    content = "".join(f"line {i}\n" for i in range(500))
    with Session(ws, Settings(evidence_cap=1000)) as session:
        result = session.write_file("big.txt", content, EDIT_REASON)
    assert result.ok
    assert (ws / "big.txt").read_text() == content
    call = next(r for r in records(ws) if r["kind"] == "call")
    assert call["inputs"]["kept"] == 1000
    assert call["inputs"]["bytes"] > 1000
    assert len(evidence_bytes(ws, call["inputs"])) == 1000
    diff = outcome_of(ws, result.seq)["evidence"]["diff"]
    assert diff["kept"] == 1000 and diff["bytes"] > len(content)
    assert evidence_bytes(ws, diff).startswith(b"--- a/big.txt\n+++ b/big.txt\n")


# -- file tools ----------------------------------------------------------------------------------

LINES = "l1\nl2\nl3\nl4\nl5\n"


@pytest.mark.parametrize(
    ("start", "end", "text", "shown"),
    [
        (None, None, LINES, "lines 1-5 of 5"),
        (2, 4, "l2\nl3\nl4\n", "lines 2-4 of 5"),
        (None, 2, "l1\nl2\n", "lines 1-2 of 5"),
        (4, None, "l4\nl5\n", "lines 4-5 of 5"),
        (5, 5, "l5\n", "lines 5-5 of 5"),
        (3, 99, "l3\nl4\nl5\n", "lines 3-5 of 5"),
    ],
)
def test_read_file_line_ranges(
    session: Session, ws: Path, start: int | None, end: int | None, text: str, shown: str
) -> None:
    (ws / "f.txt").write_text(LINES)
    result = session.read_file("f.txt", REASON, start, end)
    assert result.ok
    assert result.stdout == text
    assert result.outcome == f"read f.txt: {shown}"
    ref = outcome_of(ws, result.seq)["evidence"]["content"]
    assert evidence_bytes(ws, ref) == text.encode()


def test_read_file_past_the_end(session: Session, ws: Path) -> None:
    (ws / "f.txt").write_text(LINES)
    result = session.read_file("f.txt", REASON, 10, 12)
    assert (result.status, result.ok, result.stdout) == ("ran", False, "")
    assert result.outcome == "f.txt has only 5 line(s); nothing from line 10 on"


def test_read_file_line_range_invalid(session: Session, ws: Path) -> None:
    (ws / "f.txt").write_text(LINES)
    result = session.read_file("f.txt", REASON, 4, 2)
    assert (result.status, result.rule) == ("rejected", "line-range-invalid")


def test_read_missing_file_fails_without_rejection(session: Session) -> None:
    result = session.read_file("nope.txt", REASON)
    assert (result.status, result.ok) == ("ran", False)
    assert result.outcome == "no such file: nope.txt"


def test_write_file_creates_then_replaces(session: Session, ws: Path) -> None:
    created = session.write_file("sub/new.txt", "hello\n", EDIT_REASON)
    assert created.ok
    assert created.outcome == "created sub/new.txt (6 bytes)"
    assert (ws / "sub" / "new.txt").read_text() == "hello\n"
    diff = evidence_bytes(ws, outcome_of(ws, created.seq)["evidence"]["diff"]).decode()
    assert "+hello\n" in diff

    (ws / "sub" / "new.txt").chmod(0o750)
    replaced = session.write_file("sub/new.txt", "hello world\n", EDIT_REASON)
    assert replaced.ok
    assert replaced.outcome == "replaced sub/new.txt (12 bytes)"
    assert (ws / "sub" / "new.txt").read_text() == "hello world\n"
    assert (ws / "sub" / "new.txt").stat().st_mode & 0o777 == 0o750
    diff = evidence_bytes(ws, outcome_of(ws, replaced.seq)["evidence"]["diff"]).decode()
    assert diff.startswith("--- a/sub/new.txt\n+++ b/sub/new.txt\n")
    assert "\n-hello\n" in diff
    assert "\n+hello world\n" in diff
    call = [r for r in records(ws) if r["kind"] == "call"][-1]
    assert call["command"] == "write_file sub/new.txt (12 bytes)"
    assert json.loads(evidence_bytes(ws, call["inputs"])) == {"content": "hello world\n"}


def test_str_replace_edit_replaces_the_one_occurrence(session: Session, ws: Path) -> None:
    (ws / "g.txt").write_text("hello\nworld\n")
    result = session.str_replace_edit("g.txt", "world", "there", EDIT_REASON)
    assert result.ok
    assert (ws / "g.txt").read_text() == "hello\nthere\n"
    diff = evidence_bytes(ws, outcome_of(ws, result.seq)["evidence"]["diff"]).decode()
    assert "\n-world\n" in diff and "\n+there\n" in diff


@pytest.mark.parametrize(
    ("old", "where"), [("absent", "does not occur"), ("x = 1", "occurs 2 times")]
)
def test_str_replace_edit_old_not_unique(session: Session, ws: Path, old: str, where: str) -> None:
    original = b"x = 1\ny = 2\nx = 1\n"
    (ws / "g.py").write_bytes(original)
    result = session.str_replace_edit("g.py", old, "z = 3", EDIT_REASON)
    assert result.status == "rejected"
    assert result.rule == "old-not-unique"
    assert f"`old` {where} in 'g.py'" in (result.message or "")
    assert (ws / "g.py").read_bytes() == original
    kinds = [(r["kind"], r.get("rule")) for r in records(ws)]
    assert kinds == [("session", None), ("rejected", "old-not-unique")]


def test_edit_of_a_missing_file(session: Session, ws: Path) -> None:
    result = session.str_replace_edit("missing.txt", "a", "b", EDIT_REASON)
    assert (result.status, result.rule) == ("rejected", "file-missing")
    assert not (ws / "missing.txt").exists()


@pytest.mark.parametrize("tool", ["read_file", "write_file", "str_replace_edit"])
def test_symlink_out_of_the_workspace(
    session: Session, ws: Path, tmp_path: Path, tool: str
) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("secret\n")
    (ws / "link.txt").symlink_to(outside)
    if tool == "read_file":
        result = session.read_file("link.txt", REASON)
    elif tool == "write_file":
        result = session.write_file("link.txt", "pwned\n", EDIT_REASON)
    else:
        result = session.str_replace_edit("link.txt", "secret", "pwned", EDIT_REASON)
    assert (result.status, result.rule) == ("rejected", "path-outside-workspace")
    assert str(outside) in (result.message or "")
    assert result.stdout == ""
    assert outside.read_text() == "secret\n"
    assert (ws / "link.txt").is_symlink()


def test_symlinked_directory_out_of_the_workspace(
    session: Session, ws: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (ws / "door").symlink_to(outside, target_is_directory=True)
    result = session.write_file("door/new.txt", "x\n", EDIT_REASON)
    assert (result.status, result.rule) == ("rejected", "path-outside-workspace")
    assert list(outside.iterdir()) == []


def test_symlink_into_the_record_is_protected(session: Session, ws: Path) -> None:
    (ws / "j").symlink_to(ws / ".epistemic" / "journal.jsonl")
    before = (ws / ".epistemic" / "journal.jsonl").read_bytes()
    result = session.write_file("j", "forged\n", EDIT_REASON)
    assert (result.status, result.rule) == ("rejected", "path-protected")
    assert (ws / ".epistemic" / "journal.jsonl").read_bytes().startswith(before)


@pytest.mark.parametrize("target", ["outside", "record"])
@pytest.mark.parametrize("tool", ["read_file", "write_file", "str_replace_edit"])
def test_a_symlink_swapped_in_after_the_check_leads_nowhere(
    session: Session, ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    tool: str, target: str,
) -> None:  # fmt: skip
    """The race a precheck by name cannot close: the folder is real when checked and a
    symlink (out of the workspace, or into its record) when the tool opens it."""
    import epistemic_agent.session.pipeline as session_module

    where = tmp_path / "elsewhere" if target == "outside" else ws / ".epistemic"
    where.mkdir(exist_ok=True)
    (where / "f.txt").write_text("secret\n")
    (ws / "a").mkdir()
    (ws / "a" / "f.txt").write_text("secret\n")
    checked = session_module.precheck

    def check_then_swap(call: Any, workspace: Path, *fences: Any) -> Any:
        refused = checked(call, workspace, *fences)
        (ws / "a" / "f.txt").unlink()
        (ws / "a").rmdir()
        (ws / "a").symlink_to(where, target_is_directory=True)
        return refused

    monkeypatch.setattr(session_module, "precheck", check_then_swap)
    if tool == "read_file":
        result = session.read_file("a/f.txt", REASON)
    elif tool == "write_file":
        result = session.write_file("a/f.txt", "pwned\n", EDIT_REASON)
    else:
        result = session.str_replace_edit("a/f.txt", "secret", "pwned", EDIT_REASON)
    assert (result.status, result.ok) == ("ran", False), result
    assert "leads out of the workspace" in (result.outcome or ""), result
    assert result.stdout == ""
    assert (where / "f.txt").read_text() == "secret\n"
    assert not [p for p in where.iterdir() if p.name.endswith(".tmp")]


def test_call_results_for_a_model(session: Session, ws: Path) -> None:
    (ws / "f.txt").write_text("x\n")
    ran: CallResult = session.bash("echo hi; exit 4", "collect-info", REASON)
    assert json.loads(ran.for_model()) == {"returncode": 4, "stdout": "hi\n", "stderr": ""}
    assert session.read_file("f.txt", REASON).for_model() == "x\n"
    rejected = session.call("bash", {"command": "ls"})
    assert rejected.for_model().startswith("REJECTED type-missing: ")


def assert_only_empty_capture_files(ws: Path) -> None:
    """Output files are moved into evidence; only empty ones stay, kept for the next call."""
    left = list((ws / ".epistemic" / "tmp").iterdir())
    assert len(left) <= 2 and all(path.stat().st_size == 0 for path in left), left


def test_capture_files_are_removed_when_the_session_closes(ws: Path) -> None:
    with Session(ws) as session:
        session.bash("true", "verify", REASON)
        assert len(list((ws / ".epistemic" / "tmp").iterdir())) == 2
    assert list((ws / ".epistemic" / "tmp").iterdir()) == []


@pytest.mark.parametrize(
    "escape",
    ["setsid -f sleep {marker}", "( ( sleep {marker} & ) & )", "nohup setsid sleep {marker} &"],
)
def test_a_session_stops_processes_that_escape_the_group(tmp_path: Path, escape: str) -> None:
    from epistemic_agent.session.session import Session

    marker = f"31.{os.getpid()}{len(escape)}"
    with Session(tmp_path) as session:
        result = session.bash(
            escape.format(marker=marker) + "\ntrue",
            "setup",
            "start the helper the later steps rely on, in the background",
        )
    survivors = subprocess.run(["pgrep", "-f", f"sleep {marker}"], capture_output=True, text=True)
    assert survivors.stdout == "", "a process escaped the end of its call"
    assert result.ok and "background processes it left were stopped" in result.outcome
