"""Declared versus done, end to end: the gate rules from a command's static effect, the kernel's
read-only workspace for non-mutating acts, what each call was observed to change, and the flags
raised when the declaration and the behaviour disagree (docs/declared-vs-done.md).

Everything goes through `Session` (the Python API) or the real `epistemic` command line.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pytest

from conftest import cli_env, epistemic
from epistemic_agent.checks.consistency import FLAGS
from epistemic_agent.core.vocabulary import GUARANTEES
from epistemic_agent.execute import shell as executor
from epistemic_agent.execute.observe.base import DEFAULT_IGNORE, Observer, SnapshotObserver
from epistemic_agent.execute.observe.registry import best_observer
from epistemic_agent.execute.sandbox.platform import Platform, detect
from epistemic_agent.gate.check import RULES
from epistemic_agent.journal.log import JournalError
from epistemic_agent.reports.rationale import mdsafe
from epistemic_agent.session import shell_step as session_module
from epistemic_agent.session.session import CallResult, Session, Settings

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="enforcement is Linux-only")

LOOK = "learn what this prints in the current workspace"
HYPOTHESIS = "I believe the scratch write works here; if it fails that belief is refuted"
CHANGE = "make the change that is part of the deliverable"
UNDO = "undo the earlier change, which proved wrong"
TIDY = "remove the temporary artifacts I made earlier"
WRITE_X = "python3 -c \"open('x','w').write('1')\""
WRITE_TMPDIR = (
    "python3 -c \"import os; p = os.environ['TMPDIR']; open(p + '/s', 'w').write('1'); print(p)\""
)
SUPPORT = detect()
ENFORCED = SUPPORT.mechanism() != "none"


def read_only_method(platform: Platform) -> str:
    """What an outcome's `enforcement` says for an observation under this platform."""
    mechanism = platform.mechanism()
    return "landlock" if mechanism.startswith("landlock") else mechanism


T = TypeVar("T")


def needs_landlock(test: T) -> T:
    """A test of what Landlock refuses: a `system` test, skipped where there is no Landlock."""
    why = f"Landlock unavailable: {SUPPORT.landlock_error}"
    return pytest.mark.system(pytest.mark.skipif(SUPPORT.landlock_abi is None, reason=why)(test))


def needs_enforcement(test: T) -> T:
    """A test of what confinement refuses: a `system` test, skipped where nothing confines."""
    why = "neither Landlock nor bwrap here"
    return pytest.mark.system(pytest.mark.skipif(not ENFORCED, reason=why)(test))


needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


# -- helpers ---------------------------------------------------------------------------------


def journal(ws: Path) -> list[dict[str, Any]]:
    text = (ws / ".epistemic" / "journal.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines()]


def record(ws: Path, kind: str, seq: int) -> dict[str, Any]:
    found = [r for r in journal(ws) if r.get("kind") == kind and r.get("seq") == seq]
    assert len(found) == 1, (kind, seq, found)
    return found[0]


def outcome(ws: Path, seq: int) -> dict[str, Any]:
    return record(ws, "outcome", seq)


def rationale(ws: Path) -> str:
    return (ws / "RATIONALE.md").read_text(encoding="utf-8")


def entry(text: str, seq: int) -> str:
    """One call's narrative entry in RATIONALE.md."""
    start = text.index(f"\n### {seq}. ")
    ends = [e for e in (text.find("\n### ", start + 1), text.find("\n## ", start + 1)) if e != -1]
    return text[start : min(ends)] if ends else text[start:]


def mismatch_section(text: str) -> str:
    start = text.index("## ⚠ Declared versus done\n")
    return text[start : text.index("\n## ", start + 1)]


def assert_rejected(ws: Path, result: CallResult, rule: str, command: str) -> None:
    """Refused with `rule`, journaled as a rejection with the arguments given, and never run."""
    assert result.status == "rejected", result
    assert result.rule == rule
    assert result.returncode is None
    assert result.flags == ()
    rejected = record(ws, "rejected", result.seq)
    assert rejected["rule"] == rule
    assert rejected["message"] == result.message
    assert rejected["given"]["command"] == command
    assert not [
        r for r in journal(ws) if r["kind"] in ("call", "outcome") and r["seq"] == result.seq
    ]
    assert f"**Rejected** (`{rule}`)" in entry(rationale(ws), result.seq)


@pytest.fixture
def systmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The system temp directory sessions see ($TMPDIR): outside every workspace."""
    folder = tmp_path / "systmp"
    folder.mkdir()
    monkeypatch.setenv("TMPDIR", str(folder))
    return folder.resolve()


@pytest.fixture
def ws(tmp_path: Path, systmp: Path) -> Path:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    return workspace.resolve()


def test_the_rule_and_flag_ids_are_stable() -> None:
    for rule in ("observation-writes", "revert-unrelated", "cleanup-preexisting"):
        assert rule in RULES
    assert set(FLAGS) == {
        "undeclared-write",
        "blocked-write",
        "revert-unrelated",
        "cleanup-preexisting",
        "no-change",
        "record-tampered",
        "protected-path-attempted",
        "session-killed",
        "concurrent",
        "commit-without-trailers",
    }


# -- 1. gate rules from the static effect ----------------------------------------------------


def test_observation_writes_rejects_a_redirect_into_the_workspace(ws: Path, systmp: Path) -> None:
    with Session(ws) as session:
        result = session.bash("echo x > out.txt", "collect-info", LOOK)
    assert_rejected(ws, result, "observation-writes", "echo x > out.txt")
    assert not (ws / "out.txt").exists()
    message = str(result.message)
    assert message.startswith("declared an observation (collect-info), wrote an effect: ")
    assert "`> out.txt` writes out.txt" in message  # the offending part
    assert "use change-state" in message
    assert f"write it under {systmp} ($TMPDIR)" in message


def test_observation_writes_rejects_git_init_as_verify(ws: Path) -> None:
    with Session(ws) as session:
        result = session.bash("git init", "verify", LOOK)
    assert_rejected(ws, result, "observation-writes", "git init")
    assert not (ws / ".git").exists()
    assert "declared an observation (verify)" in str(result.message)
    assert "`git init` creates a repository in .git" in str(result.message)


def test_test_hypothesis_may_write_under_tmpdir_but_not_the_workspace(ws: Path) -> None:
    with Session(ws) as session:
        inside = session.bash("echo x > inws.txt", "test-hypothesis", HYPOTHESIS)
        scratch = session.bash(
            'echo x > "$TMPDIR/s" && echo y > ${TMPDIR}/t', "test-hypothesis", HYPOTHESIS
        )
        folder = session.scratch_dir()
    assert_rejected(ws, inside, "observation-writes", "echo x > inws.txt")
    assert "`> inws.txt` writes inws.txt" in str(inside.message)
    assert not (ws / "inws.txt").exists()
    assert scratch.status == "ran" and scratch.ok, scratch
    assert scratch.flags == ()
    assert (folder / "s").read_text() == "x\n"
    assert (folder / "t").read_text() == "y\n"


@pytest.mark.system  # Landlock keeps the observation's writes to the scratch dir
@pytest.mark.skipif(os.path.realpath("/tmp") != "/tmp", reason="/tmp is a symbolic link here")
def test_observation_may_write_under_slash_tmp(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With no $TMPDIR the system temp directory is /tmp: a write there is not refused."""
    monkeypatch.delenv("TMPDIR")
    target = Path(f"/tmp/epistemic-test-{uuid.uuid4().hex}")
    session = Session(ws).open()
    try:
        result = session.bash(f"echo x > {target}", "test-hypothesis", HYPOTHESIS)
        assert session.gate.temp == "/tmp"
        # Accepted by the gate (it ran). Whether the kernel lets it create the file depends on
        # where the workspace is: nothing can be created directly in an ancestor of it.
        assert result.status == "ran", result
        assert result.rule is None
        assert outcome(ws, result.seq)["enforcement"] == read_only_method(SUPPORT)
    finally:
        shutil.rmtree(session.scratch_dir(), ignore_errors=True)
        session.close()
        target.unlink(missing_ok=True)


def test_cli_exec_observation_write_exits_2(ws: Path) -> None:
    done = epistemic(
        "exec", "--type", "collect-info", "--reason", LOOK, "--", "echo x > out.txt", cwd=ws
    )
    assert done.returncode == 2
    assert done.stderr.startswith("REJECTED observation-writes: ")
    assert "`> out.txt` writes out.txt" in done.stderr
    assert "Traceback" not in done.stderr
    assert done.stdout == ""
    assert not (ws / "out.txt").exists()
    rejected = [r for r in journal(ws) if r["kind"] == "rejected"]
    assert [r["rule"] for r in rejected] == ["observation-writes"]


def test_revert_of_a_file_no_change_state_touched_is_rejected(ws: Path) -> None:
    (ws / "untouched.txt").write_text("keep\n")
    with Session(ws) as session:
        result = session.bash("rm untouched.txt", "revert", UNDO)
    assert_rejected(ws, result, "revert-unrelated", "rm untouched.txt")
    assert (ws / "untouched.txt").read_text() == "keep\n"
    message = str(result.message)
    assert message.startswith("a revert that touches a file no earlier change-state mentioned")
    assert "untouched.txt" in message
    assert "declare it as change-state" in message


def test_revert_of_what_a_change_state_wrote_is_accepted(ws: Path) -> None:
    with Session(ws) as session:
        made = session.bash("echo a > f.txt", "change-state", CHANGE)
        undone = session.bash("rm f.txt", "revert", UNDO)
    assert made.ok and undone.ok, (made, undone)
    assert undone.flags == ()
    assert not (ws / "f.txt").exists()
    assert outcome(ws, undone.seq)["observed"]["deleted"] == ["f.txt"]


@needs_git
def test_revert_with_git_checkout_after_a_file_tool_edit_is_accepted(ws: Path) -> None:
    (ws / "x").write_text("original\n")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]
    for argv in (["init", "-q"], ["add", "x"], ["commit", "-qm", "base"]):
        subprocess.run([*git, *argv], cwd=ws, check=True, capture_output=True)
    with Session(ws) as session:
        edit = session.str_replace_edit("x", "original", "edited", CHANGE)
        assert edit.ok, edit
        assert (ws / "x").read_text() == "edited\n"
        undone = session.bash("git checkout -- x", "revert", UNDO)
    assert undone.status == "ran" and undone.ok, undone
    assert undone.flags == ()
    assert (ws / "x").read_text() == "original\n"
    assert outcome(ws, undone.seq)["observed"]["modified"] == ["x"]  # .git/ is not listed


def test_cleanup_of_a_preexisting_file_is_rejected(ws: Path) -> None:
    (ws / "existing.txt").write_text("mine, not the session's\n")
    with Session(ws) as session:
        result = session.bash("rm existing.txt", "cleanup", TIDY)
    assert_rejected(ws, result, "cleanup-preexisting", "rm existing.txt")
    assert (ws / "existing.txt").exists()
    message = str(result.message)
    assert "existing.txt existed before the session started" in message
    assert "declare change-state" in message


def test_cleanup_of_what_the_session_created_or_of_nothing_is_accepted(ws: Path) -> None:
    with Session(ws) as session:
        made = session.bash("echo a > made.txt", "change-state", CHANGE)
        tidied = session.bash("rm made.txt", "cleanup", TIDY)
        nothing = session.bash("rm -f absent.txt", "cleanup", TIDY)
    assert made.ok
    assert tidied.status == "ran" and tidied.ok and tidied.flags == (), tidied
    assert not (ws / "made.txt").exists()
    assert nothing.status == "ran" and nothing.ok and nothing.flags == (), nothing


# -- 2. enforcement --------------------------------------------------------------------------


@needs_landlock
def test_an_unknown_write_in_an_observation_is_refused_by_landlock(ws: Path) -> None:
    with Session(ws) as session:
        result = session.bash(WRITE_X, "collect-info", LOOK)
    assert result.status == "ran"
    assert not result.ok and result.returncode != 0
    assert "Read-only file system" in result.stderr or "Permission denied" in result.stderr
    assert not (ws / "x").exists()
    assert record(ws, "call", result.seq)["effect"]["class"] == "unknown"
    done = outcome(ws, result.seq)
    assert done["enforcement"] == "landlock"
    assert result.flags == ("blocked-write",)
    assert [f["flag"] for f in done["flags"]] == ["blocked-write"]
    assert "workspace read-only (landlock)" in entry(rationale(ws), result.seq)


@needs_landlock
def test_cli_exec_json_carries_the_blocked_write_flag(ws: Path) -> None:
    done = epistemic(
        "exec", "--json", "--type", "collect-info", "--reason", LOOK, "--", WRITE_X, cwd=ws
    )
    assert done.returncode == 1, done.stderr
    result = json.loads(done.stdout)
    assert result["status"] == "ran"
    assert result["flags"] == ["blocked-write"]
    assert not (ws / "x").exists()
    assert outcome(ws, result["seq"])["enforcement"] == "landlock"


@pytest.mark.parametrize("act", ["change-state", "setup"])
def test_mutating_acts_may_write_the_workspace(ws: Path, act: str) -> None:
    with Session(ws) as session:
        result = session.bash(WRITE_X, act, CHANGE)
    assert result.ok, result
    assert result.flags == ()
    assert (ws / "x").read_text() == "1"
    done = outcome(ws, result.seq)
    assert done["enforcement"] == "none"
    assert done["observed"]["created"] == ["x"]


@pytest.mark.system  # Landlock keeps the observation's writes to the scratch dir
def test_tmpdir_is_writable_for_observations_and_outside_the_workspace(
    ws: Path, systmp: Path
) -> None:
    with Session(ws) as session:
        result = session.bash(WRITE_TMPDIR, "test-hypothesis", HYPOTHESIS)
        folder = session.scratch_dir()
    assert result.ok, result
    assert result.flags == ()
    printed = Path(result.stdout.strip()).resolve()
    assert printed == folder.resolve()
    assert printed.is_relative_to(systmp)
    assert not printed.is_relative_to(ws)
    assert (printed / "s").read_text() == "1"
    done = outcome(ws, result.seq)
    assert done["enforcement"] == read_only_method(SUPPORT)
    assert done["observed"]["created"] == []


def test_without_enforcement_the_write_happens_and_is_flagged(ws: Path) -> None:
    with Session(ws, Settings(enforce=False)) as session:
        result = session.bash(WRITE_X, "collect-info", LOOK)
    assert result.ok, result
    assert (ws / "x").read_text() == "1"
    assert result.flags == ("undeclared-write",)
    done = outcome(ws, result.seq)
    assert done["enforcement"] == "none"
    assert done["observed"]["created"] == ["x"]
    assert done["flags"] == [
        {"flag": "undeclared-write", "message": "declared collect-info, but changed x"}
    ]


def test_bwrap_when_landlock_is_missing(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    found = detect(probe_bwrap=True)
    assert found.bwrap is not None and found.bwrap_error is None, found.bwrap_error
    platform = Platform(None, "forced off by the test", None, "forced off", found.bwrap, None)
    with Session(ws, Settings(platform=platform)) as session:
        blocked = session.bash(WRITE_X, "collect-info", LOOK)
        scratch = session.bash(WRITE_TMPDIR, "test-hypothesis", HYPOTHESIS)
        folder = session.scratch_dir()
    assert not blocked.ok
    assert "Read-only file system" in blocked.stderr
    assert not (ws / "x").exists()
    assert blocked.flags == ("blocked-write",)
    assert outcome(ws, blocked.seq)["enforcement"] == "bwrap"
    assert "(bwrap)" in outcome(ws, blocked.seq)["flags"][0]["message"]
    assert scratch.ok and scratch.flags == (), scratch
    assert (folder / "s").read_text() == "1"
    assert outcome(ws, scratch.seq)["enforcement"] == "bwrap"
    assert "workspace read-only (bwrap)" in entry(rationale(ws), blocked.seq)


def test_no_enforcement_when_neither_method_is_available(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    off = "forced off by the test"
    with Session(ws, Settings(platform=Platform(None, off, None, off, None, off))) as session:
        result = session.bash(WRITE_X, "collect-info", LOOK)
    assert result.ok, result
    assert (ws / "x").read_text() == "1"
    assert result.flags == ("undeclared-write",)
    done = outcome(ws, result.seq)
    assert done["enforcement"] == "none"
    assert "workspace read-only" not in entry(rationale(ws), result.seq)


# -- 3. the flags, everywhere they show ------------------------------------------------------


@dataclass
class Flagged:
    """One workspace whose session raised every flag once, and what each reader shows."""

    ws: Path
    seqs: dict[str, int]
    results: dict[str, CallResult]
    records: list[dict[str, Any]]
    log_json: list[dict[str, Any]]
    log_table: str
    rationale: str
    rebuilt: str


MESSAGES = {
    "undeclared-write": "declared collect-info, but changed undeclared.txt",
    "blocked-write": "a write was refused by the read-only workspace (",
    "revert-unrelated": "reverted other.txt, which no earlier change-state touched",
    "cleanup-preexisting": "deleted old.txt, which this session did not create",
    "no-change": "declared change-state, but nothing in the workspace changed",
}
ACT_OF = {
    "undeclared-write": "collect-info",
    "blocked-write": "collect-info",
    "revert-unrelated": "revert",
    "cleanup-preexisting": "cleanup",
    "no-change": "change-state",
}


@pytest.fixture(scope="module")
def flagged(tmp_path_factory: pytest.TempPathFactory) -> Flagged:
    base = tmp_path_factory.mktemp("flagged")
    ws = (base / "ws").resolve()
    ws.mkdir()
    (base / "systmp").mkdir()
    (ws / "other.txt").write_text("not the session's\n")
    (ws / "old.txt").write_text("not the session's either\n")
    results: dict[str, CallResult] = {}
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TMPDIR", str(base / "systmp"))
        with Session(ws, Settings(enforce=False)) as session:
            code = "python3 -c \"open('undeclared.txt','w').write('1')\""
            results["undeclared-write"] = session.bash(code, "collect-info", LOOK)
        with Session(ws, Settings(platform=SUPPORT)) as session:  # what this machine has
            if ENFORCED:
                code = "python3 -c \"open('blocked.txt','w').write('1')\""
                results["blocked-write"] = session.bash(code, "collect-info", LOOK)
            code = "python3 -c \"import os; os.remove('other.txt')\""
            results["revert-unrelated"] = session.bash(code, "revert", UNDO)
            code = "python3 -c \"import os; os.remove('old.txt')\""
            results["cleanup-preexisting"] = session.bash(code, "cleanup", TIDY)
            results["no-change"] = session.bash("true", "change-state", CHANGE)
        env = cli_env()
        done = epistemic("log", str(ws), "--json", env=env)
        assert done.returncode == 0, done.stderr
        log_json = json.loads(done.stdout)
        table = epistemic("log", str(ws), env=env)
        assert table.returncode == 0, table.stderr
        before = rationale(ws)
        rebuilt = epistemic("report", str(ws), env=env)
        assert rebuilt.returncode == 0, rebuilt.stderr
    return Flagged(
        ws,
        {flag: result.seq for flag, result in results.items()},
        results,
        journal(ws),
        log_json,
        table.stdout,
        before,
        rationale(ws),
    )


@pytest.mark.parametrize(
    "flag",
    [
        pytest.param(flag, marks=pytest.mark.system) if flag == "blocked-write" else flag
        for flag in MESSAGES
    ],
)  # a blocked write is confinement's: a `system` test
def test_each_flag_shows_everywhere(flagged: Flagged, flag: str) -> None:
    if flag == "blocked-write" and not ENFORCED:
        pytest.skip("no enforcement here: nothing can block a write")
    seq, result = flagged.seqs[flag], flagged.results[flag]
    # the call ran, and the result says what was flagged
    assert result.status == "ran"
    assert result.flags == (flag,)
    # the outcome record
    done = [r for r in flagged.records if r["kind"] == "outcome" and r["seq"] == seq]
    assert len(done) == 1
    flags = done[0]["flags"]
    assert len(flags) == 1 and set(flags[0]) == {"flag", "message"}
    assert flags[0]["flag"] == flag
    message = flags[0]["message"]
    assert MESSAGES[flag] in message
    # epistemic log --json
    view = next(v for v in flagged.log_json if v["seq"] == seq)
    assert view["flags"] == flags
    assert view["act"] == ACT_OF[flag]
    # epistemic log (table)
    rows = [line for line in flagged.log_table.splitlines() if f"⚠ {flag}" in line]
    assert len(rows) == 1, flagged.log_table
    assert ACT_OF[flag] in rows[0]
    # RATIONALE.md: the call's entry, and the section near the top
    text = flagged.rationale
    shown = mdsafe.text(message)  # as RATIONALE.md shows journal text: escaped
    assert f"**⚠ Declared versus done** (`{flag}`): {shown}" in entry(text, seq)
    assert f"- **Call {seq}** ⚠ `{flag}`: {shown}" in mismatch_section(text)
    assert text.index("## ⚠ Declared versus done") < text.index("## Narrative")


def test_the_flagged_calls_did_what_was_observed(flagged: Flagged) -> None:
    ws = flagged.ws
    assert (ws / "undeclared.txt").exists()  # no enforcement: it happened
    assert not (ws / "blocked.txt").exists()  # refused (or, with no enforcement, never tried)
    assert not (ws / "other.txt").exists()  # the revert ran, then was flagged
    assert not (ws / "old.txt").exists()  # the cleanup ran, then was flagged
    head = f"{len(flagged.seqs)} mismatch(es) between what calls declared and what they did:"
    assert head in flagged.rationale


def test_the_rebuilt_report_equals_the_incremental_one(flagged: Flagged) -> None:
    assert flagged.rebuilt == flagged.rationale


def test_a_call_without_a_mismatch_shows_no_flag(ws: Path) -> None:
    with Session(ws) as session:
        result = session.bash("echo a > f.txt", "change-state", CHANGE)
    assert result.flags == ()
    assert "flags" not in outcome(ws, result.seq)
    text = rationale(ws)
    assert "Declared versus done" not in text
    assert "changed: 1 created" in entry(text, result.seq)


# -- 4. observation --------------------------------------------------------------------------


def snapshot_observer(workspace: Path, ignore: tuple[str, ...] = DEFAULT_IGNORE) -> Observer:
    return SnapshotObserver(workspace, ignore)


@pytest.mark.parametrize("method", ["best", "snapshot"])
def test_observed_lists_what_a_change_state_changed(
    ws: Path, monkeypatch: pytest.MonkeyPatch, method: str
) -> None:
    if method == "snapshot":
        monkeypatch.setattr(session_module, "best_observer", snapshot_observer)
        monkeypatch.setattr(executor, "SLOW_AFTER", 60.0)  # no in-flight report rewrite (bug)
    (ws / "existing.txt").write_text("a\n")
    (ws / "gone.txt").write_text("g\n")
    with Session(ws) as session:
        command = "echo a > new.txt; echo b >> existing.txt; rm gone.txt; mkdir sub; echo c > sub/c"
        result = session.bash(command, "change-state", CHANGE)
    assert result.ok and result.flags == (), result
    observed = outcome(ws, result.seq)["observed"]
    assert observed["created"] == ["new.txt", "sub", "sub/c"]
    assert observed["modified"] == ["existing.txt"]
    assert observed["deleted"] == ["gone.txt"]
    assert observed["complete"] is True
    expected = best_observer(ws).method if method == "best" else "snapshot"
    assert observed["method"] == expected
    assert "changed: 3 created, 1 modified, 1 deleted" in entry(rationale(ws), result.seq)


@needs_git
def test_observed_ignores_git_and_pycache(ws: Path) -> None:
    command = (
        "git init -q && mkdir -p __pycache__ pkg/__pycache__ && echo 1 > __pycache__/a.pyc"
        " && echo 1 > pkg/__pycache__/b.pyc && echo x > pkg/mod.py"
    )
    with Session(ws) as session:
        result = session.bash(command, "change-state", CHANGE)
    assert result.ok, result
    assert (ws / ".git").is_dir() and (ws / "pkg" / "__pycache__" / "b.pyc").exists()
    observed = outcome(ws, result.seq)["observed"]
    assert observed["created"] == ["pkg", "pkg/mod.py"]
    assert observed["modified"] == [] and observed["deleted"] == []


@pytest.mark.system  # end to end, slow for the default tier
def test_a_history_driven_revert_end_to_end_through_the_cli(ws: Path) -> None:
    """A change-state whose effect is only known by observation makes a later revert (in
    another process) legitimate; a revert of anything else is still refused."""
    (ws / "keep.txt").write_text("keep\n")
    code = "python3 -c \"open('made.txt','w').write('1')\""
    made = epistemic("exec", "--type", "change-state", "--reason", CHANGE, "--", code, cwd=ws)
    assert made.returncode == 0, made.stderr
    call = next(r for r in journal(ws) if r["kind"] == "call")
    assert call["effect"]["class"] == "unknown"  # nothing declared statically...
    assert outcome(ws, call["seq"])["observed"]["created"] == ["made.txt"]  # ...but observed
    undone = epistemic(
        "exec", "--json", "--type", "revert", "--reason", UNDO, "--", "rm made.txt", cwd=ws
    )
    assert undone.returncode == 0, undone.stderr
    result = json.loads(undone.stdout)
    assert result["status"] == "ran" and result["flags"] == []
    assert not (ws / "made.txt").exists()
    stray = epistemic("exec", "--type", "revert", "--reason", UNDO, "--", "rm keep.txt", cwd=ws)
    assert stray.returncode == 2
    assert stray.stderr.startswith("REJECTED revert-unrelated: ")
    assert (ws / "keep.txt").exists()
    assert "Declared versus done" not in rationale(ws)  # nothing flagged
    assert "- **Call 2** (ok): " in rationale(ws)  # the revert is a dead end


# -- 5. epistemic classify -------------------------------------------------------------------


def test_classify_text(tmp_path: Path) -> None:
    done = epistemic("classify", "--", "grep -n total report.py > out.txt", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "mutating",
        "path: out.txt",
        "reason: `> out.txt` writes out.txt",
    ]
    dynamic = epistemic("classify", "--", "rm $X", cwd=tmp_path)
    assert dynamic.stdout.splitlines()[:2] == [
        "mutating",
        "path: (some paths are only known at run time)",
    ]
    assert epistemic("classify", "--", "git log --oneline").stdout == "read-only\n"
    unknown = epistemic("classify", "--", "make test").stdout.splitlines()
    assert unknown[0] == "unknown"
    assert unknown[1].startswith("reason: `make test` runs a build")


def test_classify_json() -> None:
    done = epistemic("classify", "--json", "--", "rm -rf build")
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("\n") == 1
    data = json.loads(done.stdout)
    assert set(data) == {"command", "class", "paths", "reasons", "writes", "deletes", "dynamic"}
    assert data["command"] == "rm -rf build"
    assert data["class"] == "mutating"
    assert data["paths"] == ["build"] and data["deletes"] == ["build"] and data["writes"] == []
    assert data["dynamic"] is False
    assert data["reasons"] == ["`rm -rf build` deletes build"]


def test_classify_several_words_are_quoted_as_argv() -> None:
    spaced = json.loads(epistemic("classify", "--json", "--", "rm", "a b.txt").stdout)
    assert spaced["command"] == "rm 'a b.txt'"
    assert spaced["deletes"] == ["a b.txt"]
    quoted = json.loads(epistemic("classify", "--json", "--", "echo", ">", "out.txt").stdout)
    assert quoted["command"] == "echo '>' out.txt"
    assert quoted["class"] == "read-only"  # the `>` is a word, not a redirection
    line = json.loads(epistemic("classify", "--json", "--", "echo x > out.txt").stdout)
    assert line["class"] == "mutating"


def test_classify_batch() -> None:
    lines = ['"rm -rf build"', "", '"make test"', "42", "not json", '"git log"', "   "]
    done = epistemic("classify", "--batch", input="\n".join(lines) + "\n")
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    out = [json.loads(line) for line in done.stdout.splitlines()]
    assert len(out) == 5  # empty lines are skipped, every other line answered in order
    assert out[0]["command"] == "rm -rf build" and out[0]["class"] == "mutating"
    assert out[1]["command"] == "make test" and out[1]["class"] == "unknown"
    assert out[2] == {"line": 4, "error": "not a JSON string"}
    assert out[3] == {"line": 5, "error": "not a JSON string"}
    assert out[4]["command"] == "git log" and out[4]["class"] == "read-only"
    assert set(out[0]) == {"command", "class", "paths", "reasons", "writes", "deletes", "dynamic"}
    assert "line 4" in done.stderr and "line 5" in done.stderr
    good = epistemic("classify", "--batch", input='"ls"\n"rm x"\n')
    assert good.returncode == 0, good.stderr
    assert [json.loads(x)["class"] for x in good.stdout.splitlines()] == ["read-only", "mutating"]


@pytest.mark.parametrize("args", [(), ("--",), ("--json",), ("--json", "--")])
def test_classify_without_a_command_is_a_clean_usage_error(args: tuple[str, ...]) -> None:
    done = epistemic("classify", *args)
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr == "epistemic: give a command after --, or use --batch\n"


# -- 6. epistemic doctor ---------------------------------------------------------------------


@pytest.mark.system  # end to end, slow for the default tier
def test_doctor_text(tmp_path: Path) -> None:
    done = epistemic("doctor", "-C", str(tmp_path))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    found = detect(probe_bwrap=True)
    assert lines[0] == f"confinement of every act: {found.mechanism()}"
    assert lines[1].startswith("  landlock: ")
    assert lines[2].startswith("  namespaces: ")
    assert lines[3].startswith("  bwrap: ")
    end = 4 + len(GUARANTEES)
    guarantees = [line.split()[1].rstrip(":") for line in lines[4:end]]
    assert guarantees == list(GUARANTEES)
    not_held = found.not_held()  # what the trials find here agrees with the platform's table
    for line, key in zip(lines[4:end], GUARANTEES, strict=True):
        assert line.startswith("  NOT HELD  " if key in not_held else "  held      "), line
    assert lines[end].startswith("  tried here: ") and " confined acts tried " in lines[end]
    assert lines[end + 1].startswith("layouts it cannot protect here")
    method = best_observer(tmp_path).method
    assert lines[-1].startswith(f"observation of what each call changed: {method} (")
    if SUPPORT.landlock_abi is not None:
        assert lines[1] == f"  landlock: ABI {SUPPORT.landlock_abi}"


def test_doctor_json(tmp_path: Path) -> None:
    done = epistemic("doctor", "--json", "-C", str(tmp_path))
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    found = detect(probe_bwrap=True)
    assert data["enforcement"]["best"] == read_only_method(found)
    assert data["confinement"]["mechanism"] == found.mechanism()
    guarantees = data["confinement"]["guarantees"]
    held = {key for key, value in guarantees.items() if value["held"]}
    assert held == set(GUARANTEES) - set(found.not_held())
    for value in guarantees.values():  # each verdict with the trials it comes from
        assert value["trials"] and {"trial", "act", "held", "managed"} <= set(value["trials"][0])
        assert value["held"] == all(trial["held"] for trial in value["trials"])
    assert data["confinement"]["unprotectable"] == []
    assert data["enforcement"]["landlock_abi"] == found.landlock_abi
    assert data["enforcement"]["bwrap"] == found.bwrap
    assert data["observation"]["method"] == best_observer(tmp_path).method
    assert data["observation"]["method"] in ("fanotify", "snapshot")
    assert data["observation"]["workspace"] == str(tmp_path.resolve())


def test_doctor_on_a_missing_workspace(tmp_path: Path) -> None:
    done = epistemic("doctor", "-C", str(tmp_path / "missing"))
    assert done.returncode == 2
    assert done.stderr.startswith("epistemic: workspace ")
    assert "Traceback" not in done.stderr


# -- 7. the demo -----------------------------------------------------------------------------


@pytest.mark.system  # end to end, slow for the default tier
def test_the_demo_passes_its_oracle_enforced_and_observed(tmp_path: Path, systmp: Path) -> None:
    out = tmp_path / "demo"
    done = epistemic("demo", "-o", str(out))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "oracle (check.py): PASS" in done.stdout
    records = journal(out)
    acts = {r["seq"]: r for r in records if r["kind"] == "call" and r["tool"] == "bash"}
    outcomes = {r["seq"]: r for r in records if r["kind"] == "outcome" and r["seq"] in acts}
    assert outcomes and outcomes.keys() == acts.keys()
    for seq, call in acts.items():
        expected = "none" if call["mutating"] else read_only_method(SUPPORT)
        assert outcomes[seq]["enforcement"] == expected, call
        assert "observed" in outcomes[seq]
        assert "flags" not in outcomes[seq], outcomes[seq]
    text = rationale(out)
    assert "Declared versus done" not in text
    if SUPPORT.landlock_abi is not None:
        shown = text.count("workspace read-only (landlock)")
        assert shown == sum(1 for call in acts.values() if not call["mutating"])


# -- bugs found while writing these tests ----------------------------------------------------


def test_regression_tmpdir_inside_the_workspace(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (ws / "tmp").mkdir()
    monkeypatch.setenv("TMPDIR", str(ws / "tmp"))
    with Session(ws) as session:
        result = session.bash('echo x > "$TMPDIR/s"', "test-hypothesis", HYPOTHESIS)
    assert result.ok, result
    assert result.flags == ()


def test_regression_flag_listed_twice_after_resuming_from_a_page_checkpoint(ws: Path) -> None:
    script = """
import os, sys
from epistemic_agent.session.session import Session
session = Session(sys.argv[1]).open()
for _ in range(100):  # one full page of cheap calls (rejected: reason too short)
    assert session.bash("true", "collect-info", "short").status == "rejected"
result = session.bash("true", "change-state", sys.argv[2])  # call 101 turns the page
assert result.flags == ("no-change",), result
os._exit(0)  # a crash: no close()
"""
    done = subprocess.run(
        [sys.executable, "-c", script, str(ws), CHANGE],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    with Session(ws) as session:
        session.bash("ls", "collect-info", LOOK)
    assert "1 mismatch(es)" in rationale(ws)
    assert mismatch_section(rationale(ws)).count("**Call 101**") == 1


def test_regression_snapshot_observer_blames_the_command_for_the_report(
    ws: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(session_module, "best_observer", snapshot_observer)
    monkeypatch.setattr(executor, "SLOW_AFTER", 0.05)  # sleep 0.5 is always "slow" then
    with Session(ws) as session:
        result = session.bash("sleep 0.5", "collect-info", LOOK)
    assert result.ok, result
    assert outcome(ws, result.seq)["observed"]["modified"] == []
    assert result.flags == ()


def test_regression_cleanup_of_a_file_write_file_created(ws: Path) -> None:
    with Session(ws) as session:
        made = session.write_file("notes.tmp", "scratch\n", "keep scratch notes while I work")
        assert made.ok, made
        tidied = session.bash("rm notes.tmp", "cleanup", TIDY)
    assert tidied.status == "ran" and tidied.ok, tidied
    assert tidied.flags == ()


@needs_enforcement
def test_regression_blocked_write_for_a_script_that_is_not_executable(ws: Path) -> None:
    (ws / "run.sh").write_text("echo hi\n")  # mode 0644: bash cannot execute it
    with Session(ws) as session:
        result = session.bash("./run.sh", "collect-info", LOOK)
    assert result.returncode == 126
    assert "blocked-write" not in result.flags


def test_mktemp_counts_as_a_write_its_target_is_generated(ws: Path) -> None:
    """A documented limit: an observation names its scratch file under $TMPDIR instead."""
    with Session(ws) as session:
        refused = session.bash("mktemp", "collect-info", LOOK)
        named = session.bash('echo x > "$TMPDIR/scratch.txt"', "collect-info", LOOK)
    assert (refused.status, refused.rule) == ("rejected", "observation-writes")
    assert named.status == "ran" and named.ok


def test_regression_a_missing_tmpdir_breaks_every_shell_call(
    ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TMPDIR", str(tmp_path / "missing"))
    with Session(ws) as session:
        result = session.bash("echo hi", "collect-info", LOOK)
    assert result.ok and result.stdout == "hi\n"


# -- the record itself --------------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "rm -rf .epistemic",
        "echo x > RATIONALE.md",
        "rm .epistemic/journal.jsonl",
        "cd .. && rm -rf ws",
    ],
)
def test_no_act_may_touch_the_record(ws: Path, command: str) -> None:
    with Session(ws) as session:
        result = session.bash(command, "change-state", CHANGE)
    assert (result.status, result.rule) == ("rejected", "path-protected")
    assert (ws / ".epistemic" / "journal.jsonl").is_file()


def test_a_command_that_deletes_the_journal_anyway_is_flagged_and_the_journal_restored(
    ws: Path,
) -> None:
    """Without confinement (the last line of defence): the journal comes back, whole."""
    with Session(ws, Settings(enforce=False)) as session:
        session.bash("echo one", "collect-info", LOOK)
        sneaky = "python3 -c \"import shutil; shutil.rmtree('.epistemic')\"; echo x > made.txt"
        result = session.bash(sneaky, "change-state", CHANGE)
        session.bash("echo after", "collect-info", LOOK)
    assert "record-tampered" in result.flags
    done = epistemic("verify", str(ws), "--json")  # the chain holds; the lost evidence shows
    verdict = json.loads(done.stdout)
    assert done.returncode == 1 and verdict["verified"]["lines"] == verdict["lines"]
    assert [p["check"] for p in verdict["problems"]] == ["evidence-missing"]
    assert "(stdout of call 1, line 3) is missing" in verdict["problem"]
    kinds = [
        json.loads(line)["kind"]
        for line in (ws / ".epistemic" / "journal.jsonl").read_text().splitlines()
    ]
    assert kinds[:3] == ["session", "call", "outcome"]


def test_a_writer_refuses_a_journal_cut_below_its_anchor(ws: Path) -> None:
    with Session(ws) as session:
        for _ in range(3):
            session.bash("echo hi", "collect-info", LOOK)
    journal = ws / ".epistemic" / "journal.jsonl"
    lines = journal.read_bytes().splitlines(keepends=True)
    journal.write_bytes(b"".join(lines[:-2]))
    with pytest.raises(JournalError, match="truncated"):
        Session(ws).open()
    journal.write_bytes(b"".join(lines[:-1]) + lines[-1][:40] + b"\n")
    with pytest.raises(JournalError, match="now unreadable"):
        Session(ws).open()


def test_observation_noise_is_configurable_but_the_record_is_always_ignored(ws: Path) -> None:
    settings = Settings(ignore=("build",))
    with Session(ws, settings) as session:
        result = session.bash(
            "mkdir -p build __pycache__ && touch build/a __pycache__/b kept.txt",
            "change-state",
            CHANGE,
        )
    observed = outcome(ws, result.seq)["observed"]
    assert observed["created"] == ["__pycache__", "__pycache__/b", "kept.txt"]
