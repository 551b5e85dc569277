"""The journal: its line format and chain, crash safety, concurrent writers, hostile text."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import EPISTEMIC, epistemic_strict, eventually
from epistemic_agent import __version__
from epistemic_agent.core.vocabulary import ACT_NAMES
from epistemic_agent.gate.check import Call, GateConfig, check
from epistemic_agent.journal.evidence import Copy, EvidenceStore, copy_of
from epistemic_agent.journal.log import FORMAT_VERSION, GENESIS, JournalError
from epistemic_agent.journal.reading import read_records
from epistemic_agent.journal.records import merge_calls
from epistemic_agent.journal.verify import verify_journal
from epistemic_agent.journal.writer import JournalWriter
from epistemic_agent.session import shell_step as session_module
from epistemic_agent.session.session import Session, Settings
from journalfiles import anchor_of, journal_of, sha

REASON = "learn what the workspace contains before changing it"


def raw_lines(ws: Path) -> list[bytes]:
    """The journal's lines without their newlines."""
    return journal_of(ws).read_bytes().splitlines()


def parsed(ws: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in raw_lines(ws)]


def assert_chain(lines: list[bytes]) -> None:
    """prev/n/v come first on every line; n counts from 1; prev is SHA-256 of the line before."""
    previous = GENESIS
    for number, body in enumerate(lines, start=1):
        assert body.startswith(b'{"prev":"'), body[:40]
        record = json.loads(body)
        assert list(record)[:3] == ["prev", "n", "v"], list(record)[:5]
        assert record["prev"] == previous, f"line {number}"
        assert record["n"] == number
        assert record["v"] == FORMAT_VERSION
        previous = sha(body)


def assert_intact(ws: Path, *, notes: list[str] | None = None) -> None:
    result = verify_journal(journal_of(ws), anchor_of(ws))
    assert result.status == "intact", result.to_json()
    if notes is not None:
        assert result.notes == notes


def log_json(ws: Path) -> list[dict[str, Any]]:
    done = epistemic_strict("log", str(ws), "--json")
    assert done.returncode == 0, done.stderr
    views: list[dict[str, Any]] = json.loads(done.stdout)
    return views


# -- the line format ---------------------------------------------------------------------------


def test_session_writes_header_calls_outcomes_and_rejections(tmp_path: Path) -> None:
    with Session(tmp_path) as session:
        first = session.bash("echo one", "collect-info", REASON)
        second = session.bash("echo two; exit 3", "verify", "confirm the check fails loudly")
        refused = session.bash("touch marker", "setup", "too short")
    assert (first.status, first.seq, first.ok, first.stdout) == ("ran", 1, True, "one\n")
    assert (second.status, second.seq, second.ok, second.returncode) == ("ran", 2, False, 3)
    assert (refused.status, refused.seq, refused.rule) == ("rejected", 3, "reason-too-short")
    assert not (tmp_path / "marker").exists()  # a rejected call never runs

    lines = raw_lines(tmp_path)
    assert_chain(lines)
    records = [json.loads(line) for line in lines]
    assert [(r["kind"], r.get("seq")) for r in records] == [
        ("session", None),
        ("call", 1),
        ("outcome", 1),
        ("call", 2),
        ("outcome", 2),
        ("rejected", 3),
    ]
    header = records[0]
    assert header["prev"] == GENESIS
    assert header["workspace"] == str(tmp_path.resolve())
    assert header["tool_version"] == __version__
    assert len(header["session"]) == 32
    call = records[1]
    assert (call["tool"], call["act"], call["mutating"]) == ("bash", "collect-info", False)
    assert (call["reason"], call["command"]) == (REASON, "echo one")
    assert call["pid"] == os.getpid()
    assert (records[2]["ok"], records[2]["returncode"]) == (True, 0)
    assert (records[4]["ok"], records[4]["returncode"]) == (False, 3)
    assert records[5]["rule"] == "reason-too-short"
    assert records[5]["given"] == {
        "command": "touch marker",
        "type": "setup",
        "reason": "too short",
    }


def test_head_anchor_matches_the_journal(tmp_path: Path) -> None:
    with Session(tmp_path) as session:
        session.bash("echo one", "collect-info", REASON)
        session.bash("echo two", "collect-info", REASON)
    lines = raw_lines(tmp_path)
    assert len(lines) == 5
    anchor = json.loads(anchor_of(tmp_path).read_text())
    assert anchor == {
        "offset": journal_of(tmp_path).stat().st_size,
        "lines": 5,
        "head": sha(lines[-1]),
        "last_seq": 2,
    }


@pytest.mark.system  # the command cannot see the record: confinement
def test_declaration_is_fsynced_before_the_command_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = Session(tmp_path).open()
    journal = journal_of(tmp_path)

    def last() -> tuple[str, int | None]:
        record = json.loads(journal.read_bytes().splitlines()[-1])
        return record["kind"], record.get("seq")

    events: list[tuple[str, tuple[str, int | None]]] = []
    real_fsync, real_run = os.fsync, session_module.run_shell

    def spy_fsync(fd: int) -> None:
        real_fsync(fd)
        events.append(("fsync", last()))

    def spy_run(*args: Any, **kwargs: Any) -> Any:
        events.append(("run", last()))
        return real_run(*args, **kwargs)

    monkeypatch.setattr(os, "fsync", spy_fsync)
    monkeypatch.setattr(session_module, "run_shell", spy_run)
    with session:
        result = session.bash("ls -A .epistemic; echo listed", "collect-info", REASON)
    assert events[:2] == [("fsync", ("call", 1)), ("run", ("call", 1))]
    # The command itself cannot see the record: an empty folder stands in its place.
    assert result.stdout == "listed\n"


def test_a_second_session_continues_the_chain(tmp_path: Path) -> None:
    with Session(tmp_path) as session:
        session.bash("echo one", "collect-info", REASON)
    with Session(tmp_path) as session:
        result = session.bash("echo two", "collect-info", REASON)
    assert result.seq == 2
    lines = raw_lines(tmp_path)
    assert_chain(lines)
    assert [json.loads(line)["kind"] for line in lines].count("session") == 1
    assert_intact(tmp_path, notes=[])


def test_writer_refuses_to_append_to_a_broken_chain(tmp_path: Path) -> None:
    with Session(tmp_path) as session:
        session.bash("echo one", "collect-info", REASON)
        session.bash("echo two", "collect-info", REASON)
    journal = journal_of(tmp_path)
    edited = journal.read_bytes().replace(REASON.encode(), b"a reason rewritten afterwards", 1)
    journal.write_bytes(edited)
    with pytest.raises(JournalError, match="the hash chain breaks at line 3"):
        Session(tmp_path).open()
    assert journal.read_bytes() == edited  # nothing was appended
    done = epistemic_strict(
        "exec", "-C", str(tmp_path), "--type", "collect-info", "--reason", REASON, "--", "true"
    )
    assert done.returncode == 74
    assert "hash chain breaks at line 3" in done.stderr
    assert journal.read_bytes() == edited


def test_writer_refuses_a_journal_that_shrank_under_it(tmp_path: Path) -> None:
    with Session(tmp_path) as session:
        session.bash("echo one", "collect-info", REASON)
        journal = journal_of(tmp_path)
        cut = b"\n".join(raw_lines(tmp_path)[:2]) + b"\n"
        journal.write_bytes(cut)
        with pytest.raises(JournalError, match="shrank below what was already read"):
            session.bash("echo two", "collect-info", REASON)
    assert journal.read_bytes() == cut


# -- crash safety ------------------------------------------------------------------------------

KILLED_SESSION = textwrap.dedent(
    """
    import sys
    from epistemic_agent.session.session import Session

    with Session(sys.argv[1]) as session:
        session.bash(
            "echo $$ > sleeper.pid; exec sleep 60",
            "setup",
            "hold the session open so the harness can kill it mid-call",
        )
    """
)


def declared(ws: Path) -> bool:
    journal = journal_of(ws)
    return journal.exists() and b'"kind":"call"' in journal.read_bytes()


def sleeper_pid(ws: Path) -> int | None:
    try:
        text = (ws / "sleeper.pid").read_text().strip()
    except FileNotFoundError:
        return None
    return int(text) if text else None


def test_sigkill_mid_call_leaves_a_verifiable_journal(tmp_path: Path) -> None:
    ws = tmp_path
    process = subprocess.Popen([sys.executable, "-c", KILLED_SESSION, str(ws)])
    try:  # the command dies with the session (execute/reaper.py)
        eventually(lambda: declared(ws) and sleeper_pid(ws) is not None, "the call to start")
        process.send_signal(signal.SIGKILL)
        assert process.wait(timeout=20) == -signal.SIGKILL
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()

    records = parsed(ws)
    assert [(r["kind"], r.get("seq")) for r in records] == [("session", None), ("call", 1)]
    assert_intact(ws)
    done = epistemic_strict("verify", str(ws))
    assert done.returncode == 0, done.stdout
    assert done.stdout.startswith("intact: 2 line(s)")

    views = log_json(ws)
    assert len(views) == 1
    assert views[0]["seq"] == 1
    assert views[0]["status"] == "unknown"
    assert views[0]["ok"] is None
    assert views[0]["command"] == "echo $$ > sleeper.pid; exec sleep 60"

    with Session(ws) as session:
        after = session.bash("echo after", "collect-info", "check the session resumes after a kill")
    assert (after.status, after.seq, after.ok) == ("ran", 2, True)
    assert_chain(raw_lines(ws))
    assert_intact(ws, notes=[])
    views = log_json(ws)
    statuses = [(v["seq"], v["status"], v["ok"]) for v in views]
    assert statuses == [(1, "ran", False), (2, "ran", True)]
    recovered = [r for r in parsed(ws) if r["kind"] == "outcome" and r["seq"] == 1]
    assert len(recovered) == 1 and recovered[0]["recovered"] is True
    assert recovered[0]["observed"]["modified"] == ["sleeper.pid"]
    assert [f["flag"] for f in recovered[0]["flags"]] == ["session-killed"]


def test_a_capture_file_still_written_during_recovery_leaves_exact_evidence(
    tmp_path: Path,
) -> None:
    """A process of the killed call that lived on (where confinement could not end it) still
    writes its capture file while the next session recovers the call, and after: the
    evidence is what one read found, and the journal verifies."""
    ws = tmp_path
    process = subprocess.Popen([sys.executable, "-c", KILLED_SESSION, str(ws)])
    eventually(lambda: declared(ws) and sleeper_pid(ws) is not None, "the call to start")
    process.kill()
    process.wait()
    (capture,) = (ws / ".epistemic" / "tmp").glob("call-*.out")
    survivor = os.open(capture, os.O_WRONLY | os.O_APPEND)
    try:
        os.write(survivor, b"written by what survived the session\n")
        with Session(ws) as session:
            session.bash("echo after", "collect-info", "check the session resumes after a kill")
        os.write(survivor, b"and more, after the recovery\n")
    finally:
        os.close(survivor)
    recovered = next(r for r in parsed(ws) if r.get("recovered"))
    ref = recovered["evidence"]["stdout"]
    blob = ws / ".epistemic" / "evidence" / ref["sha256"][:2] / ref["sha256"]
    assert blob.read_bytes() == b"written by what survived the session\n"
    assert (ref["bytes"], ref["kept"]) == (blob.stat().st_size, blob.stat().st_size)
    assert_intact(ws, notes=[])


def test_blobs_stored_before_a_kill_are_kept_with_the_recovered_outcome(tmp_path: Path) -> None:
    """Killed between storing a call's blobs (its diff, its versions) and journaling its
    outcome: the recovered outcome keeps them, and the record verifies, never tampered."""
    ws = tmp_path
    process = subprocess.Popen([sys.executable, "-c", KILLED_SESSION, str(ws)])
    eventually(lambda: declared(ws) and sleeper_pid(ws) is not None, "the call to start")
    process.kill()
    process.wait()
    stored = EvidenceStore(ws / ".epistemic" / "evidence").put(b"a version of a changed file\n")
    assert stored is not None
    with Session(ws) as session:
        session.bash("echo after", "collect-info", "check the session resumes after a kill")
    recovered = next(r for r in parsed(ws) if r.get("recovered"))
    kept = recovered["evidence"]["stored_before_the_kill"]
    assert [ref["sha256"] for ref in kept] == [stored.sha256]
    assert "stored before it could journal an outcome" in recovered["outcome"]
    assert_intact(ws, notes=[])


def test_a_recovered_call_says_how_much_output_came_after_what_is_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from epistemic_agent.session import recovery

    def still_written(source: Path, limit: int | None = None) -> Any:
        found = copy_of(source, limit)  # stdout: as if 7 more bytes had come as it was read
        if found is None or source.suffix != ".out":
            return found
        return Copy(found.path, found.sha256, found.kept, found.size + 7)

    ws = tmp_path
    process = subprocess.Popen([sys.executable, "-c", KILLED_SESSION, str(ws)])
    eventually(lambda: declared(ws) and sleeper_pid(ws) is not None, "the call to start")
    process.kill()
    process.wait()
    (capture,) = (ws / ".epistemic" / "tmp").glob("call-*.out")
    capture.write_bytes(b"what the call printed\n")
    monkeypatch.setattr(recovery, "copy_of", still_written)
    with Session(ws) as session:
        session.bash("echo after", "collect-info", "check the session resumes after a kill")
    recovered = next(r for r in parsed(ws) if r.get("recovered"))
    assert recovered["outcome"].endswith(
        "; its output was still being written when it was recovered: "
        "at least 7 bytes of stdout came after what is kept"
    ), recovered["outcome"]
    assert recovered["evidence"]["stdout"]["bytes"] == len(b"what the call printed\n")
    assert_intact(ws, notes=[])


def test_torn_tail_is_recovered_by_the_next_session(tmp_path: Path) -> None:
    with Session(tmp_path) as session:
        session.bash("echo one", "collect-info", REASON)
    torn = b'{"kind":"call","seq":2,"t":"2026-11-30T11:2'
    with journal_of(tmp_path).open("ab") as handle:
        handle.write(torn)
    before = verify_journal(journal_of(tmp_path), anchor_of(tmp_path))
    assert (before.status, before.line) == ("torn", 4)
    assert epistemic_strict("verify", str(tmp_path)).returncode == 3

    with Session(tmp_path) as session:
        result = session.bash("echo two", "collect-info", REASON)
    assert (result.status, result.seq, result.ok) == ("ran", 2, True)

    lines = journal_of(tmp_path).read_bytes().split(b"\n")
    assert lines[3] == torn  # closed with a newline, never silently dropped
    recovery = json.loads(lines[4])
    assert recovery["prev"] == sha(torn)
    assert recovery["n"] == 5
    assert (recovery["kind"], recovery["torn_line"], recovery["torn_bytes"]) == (
        "recovery",
        4,
        len(torn),
    )
    note = "line 4 was torn by a crash and closed by the recovery record on line 5"
    assert_intact(tmp_path, notes=[note])
    done = epistemic_strict("verify", str(tmp_path))
    assert done.returncode == 0
    assert f"note: {note}" in done.stdout

    records, notes = read_records(journal_of(tmp_path))
    assert notes == ["line 4 is not a JSON object; skipped"]
    assert [r["kind"] for r in records] == [
        "session", "call", "outcome", "recovery", "call", "outcome"
    ]  # fmt: skip
    logged = epistemic_strict("log", str(tmp_path), "--json")
    assert logged.returncode == 0
    assert "note: line 4 is not a JSON object; skipped" in logged.stderr
    assert [(v["seq"], v["status"]) for v in json.loads(logged.stdout)] == [(1, "ran"), (2, "ran")]


def realistic_torn_line(ws: Path, keep: int) -> bytes:
    """The first `keep` bytes of the line the writer would append next (every line starts
    with the prev hash, so this is what a crash mid-write leaves behind)."""
    lines = raw_lines(ws)
    record = {
        "prev": sha(lines[-1]),
        "n": len(lines) + 1,
        "v": FORMAT_VERSION,
        "kind": "call",
        "seq": 2,
        "reason": REASON,
        "command": "echo two",
    }
    return json.dumps(record, separators=(",", ":")).encode()[:keep]


@pytest.mark.parametrize(
    "keep",
    [
        pytest.param(40),
        pytest.param(120),
    ],
)
def test_realistic_torn_tail_verifies_after_recovery(tmp_path: Path, keep: int) -> None:
    with Session(tmp_path) as session:
        session.bash("echo one", "collect-info", REASON)
    torn = realistic_torn_line(tmp_path, keep)
    with journal_of(tmp_path).open("ab") as handle:
        handle.write(torn)
    with Session(tmp_path) as session:
        assert session.bash("echo two", "collect-info", REASON).seq == 2
    assert json.loads(raw_lines(tmp_path)[4])["kind"] == "recovery"
    assert_intact(
        tmp_path,
        notes=["line 4 was torn by a crash and closed by the recovery record on line 5"],
    )


# -- concurrent writers ------------------------------------------------------------------------

WORKER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from epistemic_agent.session.session import Session

    ws, worker, count = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
    while not (ws / "go").exists():
        time.sleep(0.002)
    with Session(ws) as session:
        for i in range(count):
            result = session.bash(
                f"echo w{worker}-{i}",
                "collect-info",
                f"worker {worker} checks that concurrent appends stay chained ({i})",
            )
            assert result.status == "ran" and result.ok, result
    """
)


@pytest.mark.system  # end to end, slow for the default tier
def test_concurrent_sessions_keep_one_chain(tmp_path: Path) -> None:
    workers, per_worker = 4, 25
    processes = [
        subprocess.Popen([sys.executable, "-c", WORKER, str(tmp_path), str(w), str(per_worker)])
        for w in range(workers)
    ]
    (tmp_path / "go").touch()
    try:
        codes = [p.wait(timeout=120) for p in processes]
    finally:
        for p in processes:
            if p.poll() is None:
                p.kill()
                p.wait()
    assert codes == [0] * workers

    total = workers * per_worker
    lines = raw_lines(tmp_path)
    assert len(lines) == 1 + 2 * total
    assert_chain(lines)
    assert_intact(tmp_path, notes=[])
    records = [json.loads(line) for line in lines]
    assert [r["kind"] for r in records].count("session") == 1
    calls = [r for r in records if r["kind"] == "call"]
    outcomes = {r["seq"]: i for i, r in enumerate(records) if r["kind"] == "outcome"}
    assert sorted(r["seq"] for r in calls) == list(range(1, total + 1))
    assert sorted(outcomes) == list(range(1, total + 1))
    for index, record in enumerate(records):
        if record["kind"] == "call":
            assert outcomes[record["seq"]] > index  # each outcome follows its declaration
    assert {r["command"] for r in calls} == {
        f"echo w{w}-{i}" for w in range(workers) for i in range(per_worker)
    }
    views = merge_calls(records)
    assert [v.seq for v in views] == list(range(1, total + 1))
    assert all(v.status == "ran" and v.ok for v in views)


@pytest.mark.system  # end to end, slow for the default tier
def test_concurrent_epistemic_exec_processes(tmp_path: Path) -> None:
    count = 8
    processes = [
        subprocess.Popen(
            [
                str(EPISTEMIC),
                "exec",
                "-C",
                str(tmp_path),
                "--type",
                "collect-info",
                "--reason",
                "check that parallel exec calls share one chain",
                "--json",
                "--",
                f"echo exec-{i}",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(count)
    ]
    outputs = [p.communicate(timeout=120) for p in processes]
    assert [p.returncode for p in processes] == [0] * count, outputs
    results = [json.loads(out) for out, _ in outputs]
    assert sorted(r["seq"] for r in results) == list(range(1, count + 1))
    assert sorted(r["stdout"] for r in results) == sorted(f"exec-{i}\n" for i in range(count))
    lines = raw_lines(tmp_path)
    assert len(lines) == 1 + 2 * count
    assert_chain(lines)
    assert_intact(tmp_path, notes=[])


# -- property: hostile text through a session ---------------------------------------------------

#: Unicode without lone surrogates or NUL (those are rejected by the gate: see below).
SAFE_CATEGORIES = ["Lu", "Ll", "Lo", "Mn", "Nd", "Pd", "Po", "Ps", "Pe", "Sm", "Sc", "So", "Zs"]
safe_text = st.text(
    st.characters(
        codec=None, categories=[*SAFE_CATEGORIES, "Cc", "Zl", "Zp"], exclude_characters="\x00"
    ),
    max_size=30,
)
tricky = st.sampled_from(
    ['"', "'", "\n", "\r\n", "\\", "`", "$(", "\t", "é", "日本語", "🙂", "\u2028", "\x85", "-n"]
)
mixed_text = st.lists(st.one_of(safe_text, tricky), max_size=6).map("".join)
reasons = st.one_of(mixed_text, mixed_text.map(lambda t: "learn how the output looks with " + t))
acts = st.one_of(
    st.sampled_from(ACT_NAMES),
    st.sampled_from(ACT_NAMES).map(lambda act: f" {act.upper()}\t"),
    safe_text,
)
calls_strategy = st.lists(st.tuples(mixed_text, acts, reasons), min_size=1, max_size=4)


def printf_command(payload: str) -> str:
    return "printf '%s\\n' " + shlex.quote(payload)


@pytest.mark.system  # end to end, slow for the default tier
@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(calls=calls_strategy)
def test_session_sequences_always_leave_a_verifiable_journal(
    calls: list[tuple[str, str, str]],
) -> None:
    with tempfile.TemporaryDirectory() as directory:
        ws = Path(directory)
        gate = GateConfig(str(ws.resolve()))
        with Session(ws, Settings(timeout=20)) as session:
            results = [
                session.bash(printf_command(payload), act, reason) for payload, act, reason in calls
            ]

        lines = raw_lines(ws)
        assert_chain(lines)
        assert_intact(ws, notes=[])
        records, notes = read_records(journal_of(ws))
        assert notes == []
        assert records == [json.loads(line) for line in lines]

        by_seq: dict[tuple[str, int], dict[str, Any]] = {
            (r["kind"], r["seq"]): r for r in records if "seq" in r
        }
        ran = 0
        for seq, ((payload, act, reason), result) in enumerate(zip(calls, results, strict=True), 1):
            command = printf_command(payload)
            verdict = check("bash", {"command": command, "type": act, "reason": reason}, gate)
            assert result.seq == seq
            if isinstance(verdict, Call):
                ran += 1
                assert (result.status, result.ok, result.returncode) == ("ran", True, 0)
                assert result.stdout == payload + "\n"
                declaration = by_seq[("call", seq)]
                assert declaration["reason"] == reason.strip()
                assert declaration["command"] == command
                assert declaration["act"] == act.strip().lower()
                assert by_seq[("outcome", seq)]["ok"] is True
            else:
                assert (result.status, result.rule) == ("rejected", verdict.rule)
                refusal = by_seq[("rejected", seq)]
                assert refusal["rule"] == verdict.rule
                assert refusal["given"]["reason"] == reason
                assert refusal["given"]["command"] == command
        assert len(lines) == 1 + 2 * ran + (len(calls) - ran)
        assert [v.status for v in merge_calls(records)] == [r.status for r in results]


WILD = ["Cs", "Cc", "Zs", "Zl", "Lu", "Ll", "Lo", "Nd", "Po", "So"]
wild_text = st.text(st.characters(codec=None, categories=WILD), max_size=20)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | wild_text,
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(wild_text, children, max_size=3)
    ),
    max_leaves=8,
)
#: Records the schema allows (the writer refuses others) that still carry any JSON: a refused
#: call keeps what it was given exactly as sent.
plain_records = st.lists(
    st.builds(
        lambda tool, message, given: {
            "kind": "rejected",
            "seq": 1,
            "t": "2026-11-30T11:27:33.123Z",
            "tool": tool,
            "act": None,
            "rule": "type-unknown",
            "message": message,
            "given": given,
            "pid": 1,
        },
        wild_text,
        wild_text,
        st.dictionaries(wild_text, json_values, max_size=4),
    ),
    max_size=6,
)


@settings(max_examples=50, deadline=None)
@given(records=plain_records)
def test_writer_round_trips_any_json_including_lone_surrogates(
    records: list[dict[str, Any]],
) -> None:
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "journal.jsonl"
        writer = JournalWriter(path, lambda record, before: None)
        writer.open()
        with writer.locked():
            written = [writer.append(record, durable=False) for record in records]
        writer.close()
        lines = path.read_bytes().splitlines()
        assert len(lines) == len(records)
        assert_chain(lines)
        read, notes = read_records(path)
        assert notes == []
        assert read == written
        assert [
            {k: v for k, v in r.items() if k not in ("prev", "n", "v")} for r in read
        ] == records
        result = verify_journal(path)
        assert result.status == "intact"
        assert result.lines == len(records)


# -- malformed input for readers ----------------------------------------------------------------

NEWER = b'{"prev":"' + GENESIS.encode() + b'","n":1,"v":2,"kind":"session","shape":"new"}\n'


@pytest.mark.parametrize(
    ("content", "kinds", "notes"),
    [
        (b"this is not json at all\n", [], ["line 1 is not a JSON object; skipped"]),
        (b"", [], []),
        (b"[1, 2, 3]\n", [], ["line 1 is not a JSON object; skipped"]),
        (b'"just a string"\n', [], ["line 1 is not a JSON object; skipped"]),
        (b"\xff\xfe\x00\x01 binary\n", [], ["line 1 is not a JSON object; skipped"]),
        (
            NEWER,
            ["session"],
            ["line 1 has format version 2, newer than this reader (1); read what is understood"],
        ),
        (
            b'{"kind":"a"}\nnot json\n{"kind":"b"}\n',
            ["a", "b"],
            ["line 2 is not a JSON object; skipped"],
        ),
        (
            b'{"kind":"a"}\n{"kind":"b","seq"',
            ["a"],
            [
                "line 2 is torn (incomplete: a crash mid-write, or still being written); "
                "it was not read"
            ],
        ),
    ],
    ids=["not-json", "empty", "array", "string", "binary", "newer", "middle", "torn"],
)
def test_read_records_turns_malformed_input_into_notes(
    tmp_path: Path, content: bytes, kinds: list[str], notes: list[str]
) -> None:
    path = tmp_path / "journal.jsonl"
    path.write_bytes(content)
    records, found = read_records(path)
    assert [r.get("kind") for r in records] == kinds
    assert found == notes
    assert merge_calls(records) == []


def test_read_records_notes_repeated_problems_once(tmp_path: Path) -> None:
    """One note for all the lines of a newer version (how many, which versions, where the
    first is), one for all the lines that are not JSON: not one per line."""
    path = tmp_path / "journal.jsonl"
    lines = [b'{"kind":"session","v":1}', b"junk", b'{"kind":"a","v":3}']
    lines += [b'{"kind":"b","v":2}'] * 80 + [b"[1]", b"more junk", b'{"kind":"c"}']
    path.write_bytes(b"\n".join(lines) + b"\n")
    records, notes = read_records(path)
    assert len(records) == 83
    assert notes == [
        "3 lines are not JSON objects; skipped (lines 2, 84 and 85)",
        "81 lines have format versions 2 and 3, newer than this reader (1); read what is "
        "understood (the first is line 3)",
    ]
    many = tmp_path / "many.jsonl"
    many.write_bytes(b'{"kind":"a"}\n' + b"junk\n" * 300)
    assert read_records(many)[1] == [
        "300 lines are not JSON objects; skipped (lines 2, 3, 4, 5, 6 and 295 more)"
    ]


@pytest.mark.parametrize("value", [True, None, 7, 1.5, "a.txt", {"a": 1}])
def test_history_folds_records_whose_paths_are_not_lists(value: Any) -> None:
    """A foreign or broken writer's `observed` and `effect` fields: skipped, never a crash."""
    from epistemic_agent.journal.history import History

    history = History("/ws")
    history.fold({"kind": "call", "seq": 1, "act": "change-state", "effect": {"writes": value}})
    history.fold({"kind": "call", "seq": 2, "act": "change-state", "effect": {"deletes": value}})
    for key in ("created", "modified", "deleted"):
        history.fold({"kind": "outcome", "seq": 1, "observed": {key: value}})
    history.fold({"kind": "outcome", "seq": 2, "observed": {"created": ["b.txt", value]}})
    assert history.created == {"b.txt", str(value)} and "b.txt" in history.touched


def test_log_on_a_folder_without_a_journal_is_a_clear_error(tmp_path: Path) -> None:
    done = epistemic_strict("log", str(tmp_path))
    assert done.returncode == 2
    assert done.stderr.strip() == f"epistemic: no journal at {journal_of(tmp_path.resolve())}"


def test_log_on_a_file_that_is_not_a_journal(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_bytes(b"hello world\n\xff\xfe binary\n")
    done = epistemic_strict("log", str(path), "--json")
    assert done.returncode == 2 and done.stdout == ""
    assert "note: 2 lines are not JSON objects; skipped (lines 1 and 2)" in done.stderr
    assert "holds no journal records" in done.stderr
    assert "Traceback" not in done.stderr


# -- regressions ---------------------------------------------------------------------------------


def test_lone_surrogate_in_reason_does_not_wedge_the_workspace(tmp_path: Path) -> None:
    with Session(tmp_path) as session:
        first = session.bash("echo hi", "collect-info", "inspect output \ud800 of the greeting")
        assert (first.status, first.ok) == ("ran", True)
    with Session(tmp_path) as session:
        later = session.bash("echo later", "collect-info", REASON)
        assert (later.status, later.ok) == ("ran", True)
    assert_intact(tmp_path, notes=[])


def test_nul_in_command_returns_a_result(tmp_path: Path) -> None:
    with Session(tmp_path) as session:
        result = session.bash("echo a\x00b", "collect-info", REASON)
    assert result.status in ("rejected", "ran")
    assert result.status == "rejected" or result.ok is False
    assert_intact(tmp_path, notes=[])


def test_event_fields_cannot_forge_chain_fields(tmp_path: Path) -> None:
    with Session(tmp_path) as session:
        with contextlib.suppress(ValueError, TypeError, KeyError):  # refusing them is a fix too
            session.event("note", prev=GENESIS, n=42, v=9)
        session.bash("echo after", "collect-info", REASON)
    assert_chain(raw_lines(tmp_path))
    assert_intact(tmp_path, notes=[])


def test_header_records_who_where_when_and_the_git_head(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run(
        [
            "git",
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@example.invalid",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "base",
        ],
        cwd=tmp_path,
        check=True,
    )
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=tmp_path, capture_output=True, text=True, check=True
    ).stdout.strip()
    with Session(tmp_path):
        pass
    header = json.loads(raw_lines(tmp_path)[0])
    assert header["kind"] == "session"
    assert header["git_head"] == head
    assert header["user"] and isinstance(header["user"], str)
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", header["started"])
    assert abs(header["started_epoch"] - time.time()) < 60
