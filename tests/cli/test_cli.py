"""The `epistemic` command line, run as a real process (and in-process through `cli.main`)."""

from __future__ import annotations

import hashlib
import json
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from conftest import EPISTEMIC, epistemic
from epistemic_agent.cli import app as cli
from epistemic_agent.session.session import Session

#: Kills the `epistemic` process running it (bash execs into python, whose parent it is).
SLOW = "sleep 30"
REASON = "learn what this prints in the current workspace"
HYPOTHESIS = "I believe the file holds one line; if it holds two that belief is refuted"
ACT_ORDER = [
    "collect-info",
    "test-hypothesis",
    "verify",
    "change-state",
    "setup",
    "revert",
    "cleanup",
]
MUTATING = {"change-state", "setup", "revert", "cleanup"}


def run_exec(
    ws: Path,
    *command: str,
    act: str = "collect-info",
    reason: str = REASON,
    opts: tuple[str, ...] = (),
) -> subprocess.CompletedProcess[str]:
    return epistemic("exec", "--type", act, "--reason", reason, *opts, "--", *command, cwd=ws)


def killed_mid_call(ws: Path, command: str, act: str = "verify", after: float = 0.0) -> int:
    """Run `epistemic exec` and SIGKILL it once its call is declared (an act cannot kill its
    own session: the killer is outside). Its exit status."""
    process = subprocess.Popen(
        [EPISTEMIC, "exec", "--type", act, "--reason", REASON, "--", command], cwd=ws
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        path = ws / ".epistemic" / "journal.jsonl"
        if path.exists() and b'"kind":"call"' in path.read_bytes().splitlines()[-1]:
            break
        time.sleep(0.02)
    time.sleep(after)
    process.send_signal(signal.SIGKILL)
    return process.wait(timeout=30)


def journal_lines(ws: Path) -> list[bytes]:
    return (ws / ".epistemic" / "journal.jsonl").read_bytes().splitlines()


def records(ws: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in journal_lines(ws)]


def log_json(ws: Path) -> list[dict[str, Any]]:
    done = epistemic("log", "--json", cwd=ws)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def assert_clean_error(done: subprocess.CompletedProcess[str]) -> None:
    """A failure the user can read: non-zero, one line on stderr, never a traceback."""
    assert done.returncode != 0
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("epistemic: ")


# -- exec -----------------------------------------------------------------------------------


def head_line(ws: Path) -> str:
    """What exec prints on stderr last: the journal's head, an anchor for the CI log."""
    lines = (ws / ".epistemic" / "journal.jsonl").read_bytes().splitlines()
    head = hashlib.sha256(lines[-1]).hexdigest()
    return f"epistemic: journal head {head} (line {len(lines)})\n"


def test_exec_streams_stdout_and_stderr_and_exits_zero(ws: Path) -> None:
    done = run_exec(ws, "echo out; echo err >&2")
    assert done.returncode == 0
    assert done.stdout == "out\n"
    assert done.stderr == "err\n" + head_line(ws)
    [view] = log_json(ws)
    assert (view["status"], view["returncode"], view["ok"]) == ("ran", 0, True)


def test_exec_exits_with_the_commands_status(ws: Path) -> None:
    done = run_exec(ws, "echo out; echo err >&2; exit 7")
    assert done.returncode == 7
    assert done.stdout == "out\n"
    assert done.stderr == "err\n" + head_line(ws)
    [view] = log_json(ws)
    assert (view["status"], view["returncode"], view["ok"]) == ("ran", 7, False)


def test_rejected_exec_does_not_run_and_exits_2(ws: Path) -> None:
    done = run_exec(ws, "touch marker", act="setup", reason="x")
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.startswith("REJECTED reason-too-short: ")
    assert not (ws / "marker").exists()
    [view] = log_json(ws)
    assert view["status"] == "rejected"
    assert view["rule"] == "reason-too-short"
    assert view["command"] == "touch marker"
    # no outcome record: the call never ran
    assert [r["kind"] for r in records(ws)] == ["session", "rejected"]


def test_exec_json_prints_exactly_one_object(ws: Path) -> None:
    done = run_exec(ws, "echo hi; echo oops >&2; exit 7", opts=("--json",))
    assert done.returncode == 7
    assert done.stderr == ""
    assert done.stdout.count("\n") == 1
    result = json.loads(done.stdout)
    assert {"status", "rule", "message", "returncode", "stdout", "stderr", "seq"} <= set(result)
    assert result["status"] == "ran"
    assert result["rule"] is None and result["message"] is None
    assert result["returncode"] == 7
    assert result["stdout"] == "hi\n"
    assert result["stderr"] == "oops\n"
    assert result["seq"] == 1


def test_exec_json_rejection(ws: Path) -> None:
    run_exec(ws, "true")
    done = run_exec(ws, "touch marker", act="setup", reason="x", opts=("--json",))
    assert done.returncode == 2
    assert done.stdout.count("\n") == 1
    result = json.loads(done.stdout)
    assert result["status"] == "rejected"
    assert result["rule"] == "reason-too-short"
    assert "too terse" in result["message"]
    assert result["returncode"] is None
    assert result["stdout"] == "" and result["stderr"] == ""
    assert result["seq"] == 2
    assert not (ws / "marker").exists()


@pytest.mark.system  # end to end, slow for the default tier
def test_exec_timeout_exits_124(ws: Path) -> None:
    started = time.monotonic()
    done = run_exec(ws, "sleep 30", opts=("--timeout", "1"))
    elapsed = time.monotonic() - started
    assert done.returncode == 124
    assert elapsed < 10
    outcome = [r for r in records(ws) if r["kind"] == "outcome"][-1]
    assert outcome["timed_out"] is True
    assert outcome["returncode"] is None
    assert outcome["ok"] is False


@pytest.mark.parametrize("value", ["0", "-3"])
def test_exec_rejects_a_non_positive_timeout(ws: Path, value: str) -> None:
    done = run_exec(ws, "touch marker", opts=(f"--timeout={value}",))
    assert_clean_error(done)
    assert done.returncode == 2
    assert "--timeout" in done.stderr
    assert not (ws / "marker").exists()


def test_exec_one_argument_is_a_shell_line(ws: Path) -> None:
    done = run_exec(ws, "echo a | tr a b")
    assert done.returncode == 0
    assert done.stdout == "b\n"
    assert log_json(ws)[0]["command"] == "echo a | tr a b"


def test_exec_several_arguments_are_quoted_as_argv(ws: Path) -> None:
    done = run_exec(ws, "printf", "%s\\n", "a b")
    assert done.returncode == 0
    assert done.stdout == "a b\n"
    done = run_exec(ws, "echo", "$HOME;", "x  y", "*")
    assert done.stdout == "$HOME; x  y *\n"


def test_exec_directory_option(ws: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    args = ["exec", "-C", str(ws), "--type", "collect-info", "--reason", REASON, "--", "pwd"]
    done = epistemic(*args, cwd=elsewhere)
    assert done.returncode == 0
    assert done.stdout.strip() == str(ws.resolve())
    assert (ws / ".epistemic" / "journal.jsonl").is_file()
    assert (ws / "RATIONALE.md").is_file()
    assert not (elsewhere / ".epistemic").exists()


def test_exec_without_type_and_reason_is_rejected_and_journaled(ws: Path) -> None:
    done = epistemic("exec", "--", "touch marker", cwd=ws)
    assert done.returncode == 2
    assert done.stderr.startswith("REJECTED type-missing: ")
    done = epistemic("exec", "--type", "setup", "--", "touch marker", cwd=ws)
    assert done.returncode == 2
    assert done.stderr.startswith("REJECTED reason-missing: ")
    assert not (ws / "marker").exists()
    views = log_json(ws)
    assert [(v["seq"], v["status"], v["rule"], v["command"]) for v in views] == [
        (1, "rejected", "type-missing", "touch marker"),
        (2, "rejected", "reason-missing", "touch marker"),
    ]


@pytest.mark.parametrize("command", ["exec", "tool"])
def test_workspace_that_does_not_exist(tmp_path: Path, command: str) -> None:
    missing = tmp_path / "no-such-dir"
    if command == "exec":
        args = ["exec", "-C", str(missing), "--type", "setup", "--reason", REASON, "--", "true"]
    else:
        args = ["tool", "read_file", "-C", str(missing), "--args", "{}"]
    done = epistemic(*args, cwd=tmp_path)
    assert_clean_error(done)
    assert done.returncode == 2
    assert str(missing) in done.stderr
    assert "not a directory" in done.stderr
    assert not missing.exists()


def test_exec_in_process(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = cli.main(
        ["exec", "-C", str(ws), "--type", "verify", "--reason", REASON, "--", "echo hi; exit 5"]
    )
    assert code == 5
    captured = capsys.readouterr()
    assert captured.out == "hi\n"
    assert records(ws)[-1]["returncode"] == 5


# -- tool -----------------------------------------------------------------------------------


def tool(ws: Path, name: str, args: object | str, *opts: str) -> subprocess.CompletedProcess[str]:
    raw = args if isinstance(args, str) else json.dumps(args)
    return epistemic("tool", name, "--args", raw, *opts, cwd=ws)


def test_tool_runs_each_of_the_four_tools(ws: Path) -> None:
    done = tool(ws, "write_file", {"path": "a.txt", "content": "one\ntwo\n", "reason": REASON})
    assert (done.returncode, done.stdout) == (0, "created a.txt\n")
    assert (ws / "a.txt").read_text() == "one\ntwo\n"

    done = tool(ws, "read_file", {"path": "a.txt", "start_line": 2, "reason": REASON})
    assert (done.returncode, done.stdout) == (0, "two\n")

    edit = {"path": "a.txt", "old": "two", "new": "three", "reason": REASON}
    done = tool(ws, "str_replace_edit", edit)
    assert (done.returncode, done.stdout) == (0, "edited a.txt\n")
    assert (ws / "a.txt").read_text() == "one\nthree\n"

    done = tool(ws, "bash", {"command": "cat a.txt", "type": "collect-info", "reason": REASON})
    assert (done.returncode, done.stdout) == (0, "one\nthree\n")

    views = log_json(ws)
    assert [(v["tool"], v["act"], v["mutating"], v["status"], v["ok"]) for v in views] == [
        ("write_file", "change-state", True, "ran", True),
        ("read_file", "collect-info", False, "ran", True),
        ("str_replace_edit", "change-state", True, "ran", True),
        ("bash", "collect-info", False, "ran", True),
    ]


def test_tool_json_output(ws: Path) -> None:
    (ws / "a.txt").write_text("x\ny\n")
    done = tool(ws, "read_file", {"path": "a.txt", "reason": REASON}, "--json")
    assert done.returncode == 0
    result = json.loads(done.stdout)
    assert result["status"] == "ran"
    assert result["stdout"] == "x\ny\n"
    assert result["returncode"] is None
    assert result["seq"] == 1


def test_tool_that_fails_exits_1(ws: Path) -> None:
    done = tool(ws, "read_file", {"path": "nope.txt", "reason": REASON})
    assert done.returncode == 1
    assert "no such file: nope.txt" in done.stderr
    [view] = log_json(ws)
    assert (view["status"], view["ok"]) == ("ran", False)


def test_tool_invalid_json_is_rejected_and_journaled(ws: Path) -> None:
    raw = '{"path": "a.txt", '
    done = tool(ws, "read_file", raw)
    assert done.returncode == 2
    assert done.stderr.startswith("REJECTED args-not-object: ")
    assert "not valid JSON" in done.stderr
    [rejected] = [r for r in records(ws) if r["kind"] == "rejected"]
    assert rejected["rule"] == "args-not-object"
    assert rejected["given"] == raw
    assert rejected["tool"] == "read_file"


def test_tool_unknown_name(ws: Path) -> None:
    done = tool(ws, "frobnicate", {"reason": REASON})
    assert done.returncode == 2
    assert done.stderr.startswith("REJECTED unknown-tool: ")
    assert "frobnicate" in done.stderr
    [view] = log_json(ws)
    assert (view["status"], view["rule"], view["tool"]) == (
        "rejected",
        "unknown-tool",
        "frobnicate",
    )


def test_tool_args_that_are_an_array(ws: Path) -> None:
    done = tool(ws, "read_file", ["a.txt", REASON])
    assert done.returncode == 2
    assert done.stderr.startswith("REJECTED args-not-object: ")
    assert "array" in done.stderr
    [rejected] = [r for r in records(ws) if r["kind"] == "rejected"]
    assert rejected["given"] == ["a.txt", REASON]


def test_tool_extra_argument(ws: Path) -> None:
    (ws / "a.txt").write_text("x\n")
    done = tool(ws, "read_file", {"path": "a.txt", "reason": REASON, "bogus": 1})
    assert done.returncode == 2
    assert done.stderr.startswith("REJECTED unknown-argument: ")
    assert "'bogus'" in done.stderr
    assert done.stdout == ""


# -- log, report, verify ---------------------------------------------------------------------


def test_log_json_merges_every_call(ws: Path) -> None:
    with Session(ws) as session:
        session.bash("echo hi", "collect-info", REASON)
        session.bash("exit 3", "test-hypothesis", HYPOTHESIS)
        session.bash("rm -rf x", "cleanup", "no")
    # the writer is killed mid-call: its declaration has no outcome
    assert killed_mid_call(ws, SLOW) == -signal.SIGKILL
    views = log_json(ws)
    keys = {"seq", "tool", "act", "mutating", "status", "rule", "reason", "command"}
    assert all(keys | {"returncode", "ok"} <= set(v) for v in views)
    rows = [
        (v["seq"], v["tool"], v["act"], v["mutating"], v["status"], v["rule"], v["returncode"])
        for v in views
    ]
    assert rows == [
        (1, "bash", "collect-info", False, "ran", None, 0),
        (2, "bash", "test-hypothesis", False, "ran", None, 3),
        (3, "bash", "cleanup", True, "rejected", "reason-too-short", None),
        (4, "bash", "verify", False, "unknown", None, None),
    ]
    assert [v["ok"] for v in views] == [True, False, None, None]
    assert [v["reason"] for v in views] == [REASON, HYPOTHESIS, "no", REASON]
    assert [v["command"] for v in views] == ["echo hi", "exit 3", "rm -rf x", SLOW]


def test_log_table_prints(ws: Path) -> None:
    with Session(ws) as session:
        session.bash("echo hi", "collect-info", REASON)
        session.bash("true", "setup", "x")
    done = epistemic("log", str(ws), cwd=ws.parent)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    header = done.stdout.splitlines()[1]
    for column in ("seq", "act", "status", "rc", "command", "reason"):
        assert column in header
    assert "collect-info" in done.stdout
    assert "rejected" in done.stdout


def test_log_accepts_the_record_folder_and_the_journal_file(ws: Path) -> None:
    with Session(ws) as session:
        session.bash("echo hi", "collect-info", REASON)
    for target in (ws / ".epistemic", ws / ".epistemic" / "journal.jsonl"):
        done = epistemic("log", "--json", str(target), cwd=ws.parent)
        assert done.returncode == 0
        assert [v["command"] for v in json.loads(done.stdout)] == ["echo hi"]


def report_files(ws: Path) -> dict[str, bytes]:
    files = {"RATIONALE.md": (ws / "RATIONALE.md").read_bytes()}
    pages = ws / ".epistemic" / "report"
    if pages.is_dir():
        for path in sorted(pages.iterdir()):
            if path.name != "checkpoint.json":  # derived resume state, not the report
                files[path.name] = path.read_bytes()
    return files


@pytest.mark.system  # end to end, slow for the default tier
def test_report_rebuild_equals_the_incremental_report(ws: Path) -> None:
    with Session(ws) as session:
        session.write_file("a.txt", "one\n", REASON)
        session.bash("cat a.txt; exit 1", "test-hypothesis", HYPOTHESIS)
        session.bash("rm a.txt", "revert", "the file was the wrong approach, undo it")
        session.bash("true", "setup", "x")
        session.call("nope", {})
    killed_mid_call(ws, SLOW, after=1.0)  # slow: shown while it runs
    incremental = report_files(ws)
    (ws / "RATIONALE.md").unlink()
    shutil.rmtree(ws / ".epistemic" / "report", ignore_errors=True)
    done = epistemic("report", cwd=ws)
    assert done.returncode == 0, done.stderr
    assert f"from {len(journal_lines(ws))} journal line(s)" in done.stdout
    assert report_files(ws) == incremental
    assert "running: no outcome yet" in incremental["RATIONALE.md"].decode()


def test_verify_intact_journal(ws: Path) -> None:
    with Session(ws) as session:
        session.bash("echo hi", "collect-info", REASON)
        session.bash("true", "setup", "x")
    lines = journal_lines(ws)
    head = hashlib.sha256(lines[-1]).hexdigest()
    done = epistemic("verify", cwd=ws)
    assert done.returncode == 0
    assert done.stdout.splitlines()[0] == f"intact: {len(lines)} line(s), head {head}"
    done = epistemic("verify", "--json", str(ws), cwd=ws.parent)
    assert done.returncode == 0
    result = json.loads(done.stdout)
    assert (result["status"], result["lines"], result["head"]) == ("intact", len(lines), head)


def test_verify_reports_an_edited_journal(ws: Path) -> None:
    run_exec(ws, "echo hi")
    journal = ws / ".epistemic" / "journal.jsonl"
    journal.write_bytes(journal.read_bytes().replace(b"echo hi", b"echo ho"))
    done = epistemic("verify", cwd=ws)
    assert done.returncode == 1
    assert done.stdout.startswith("TAMPERED: ")
    assert "Traceback" not in done.stderr


# -- types, rules ------------------------------------------------------------------------------


def test_types_text_lists_the_seven_acts_in_order(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["types"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines[:7]] == ACT_ORDER
    assert [line.split()[1] == "mutating" for line in lines[:7]] == [
        act in MUTATING for act in ACT_ORDER
    ]
    assert lines[7] == ""
    assert "read_file = collect-info" in lines[8]


def test_types_json() -> None:
    done = epistemic("types", "--json", cwd=Path.cwd())
    assert done.returncode == 0
    data = json.loads(done.stdout)
    assert [a["name"] for a in data["acts"]] == ACT_ORDER
    assert {a["name"]: a["mutating"] for a in data["acts"]} == {
        act: act in MUTATING for act in ACT_ORDER
    }
    assert all(isinstance(a["meaning"], str) and len(a["meaning"]) > 10 for a in data["acts"])
    assert data["file_tools"] == {
        "read_file": "collect-info",
        "write_file": "change-state",
        "str_replace_edit": "change-state",
    }


def test_rules_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["rules", "--json"]) == 0
    rules = json.loads(capsys.readouterr().out)
    for rule in (
        "unknown-tool",
        "args-not-object",
        "unknown-argument",
        "type-missing",
        "reason-missing",
        "reason-too-short",
        "path-outside-workspace",
        "file-missing",
        "old-not-unique",
    ):
        assert isinstance(rules[rule], str) and rules[rule]
    assert cli.main(["rules"]) == 0
    text = capsys.readouterr().out
    assert len(text.splitlines()) == len(rules)
    assert text.splitlines()[0].split()[0] == next(iter(rules))


# -- bad input ---------------------------------------------------------------------------------

READERS = [("log",), ("log", "--json"), ("report",), ("verify",), ("verify", "--json")]


@pytest.mark.parametrize("command", READERS, ids=" ".join)
@pytest.mark.parametrize("where", ["missing-dir", "dir-without-journal"])
def test_readers_on_a_workspace_without_a_journal(
    tmp_path: Path, command: tuple[str, ...], where: str
) -> None:
    target = tmp_path / "target"
    if where == "dir-without-journal":
        target.mkdir()
    done = epistemic(*command, str(target), cwd=tmp_path)
    assert_clean_error(done)
    assert done.returncode == 2
    assert "no journal at" in done.stderr
    assert done.stdout == ""
    assert not (target / "RATIONALE.md").exists()


@pytest.fixture
def garbage(tmp_path: Path) -> Path:
    """A workspace whose journal is not JSON at all."""
    workspace = tmp_path / "garbage"
    (workspace / ".epistemic").mkdir(parents=True)
    (workspace / ".epistemic" / "journal.jsonl").write_text("this is not json\nnor is this\n")
    (workspace / "RATIONALE.md").write_text("the report written before the damage\n")
    return workspace


def test_verify_on_a_journal_that_is_not_json(garbage: Path) -> None:
    for args in (("verify",), ("verify", "--json")):
        done = epistemic(*args, cwd=garbage)
        assert done.returncode == 1
        assert "Traceback" not in done.stderr
        assert "line 1 is not a journal entry" in done.stdout


def test_exec_on_a_broken_chain_refuses_to_append(ws: Path) -> None:
    journal = ws / ".epistemic" / "journal.jsonl"
    journal.parent.mkdir()
    journal.write_bytes(b'{"kind": "session"}\n')
    done = run_exec(ws, "touch marker", act="setup")
    assert_clean_error(done)
    assert done.returncode == 74
    assert "hash chain breaks at line 1" in done.stderr
    assert not (ws / "marker").exists()
    assert journal.read_bytes() == b'{"kind": "session"}\n'


def test_exec_on_a_journal_that_is_not_json_refuses_to_append(garbage: Path) -> None:
    before = (garbage / ".epistemic" / "journal.jsonl").read_bytes()
    done = run_exec(garbage, "touch marker", act="setup")
    assert not (garbage / "marker").exists()
    assert (garbage / ".epistemic" / "journal.jsonl").read_bytes() == before
    assert_clean_error(done)
    assert done.returncode == 74


@pytest.mark.parametrize("json_flag", [(), ("--json",)], ids=["table", "json"])
def test_log_on_a_journal_that_is_not_json(garbage: Path, json_flag: tuple[str, ...]) -> None:
    done = epistemic("log", *json_flag, cwd=garbage)
    assert done.returncode == 2
    assert done.stdout == ""
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert lines[:1] == ["note: 2 lines are not JSON objects; skipped (lines 1 and 2)"]
    assert lines[1:] == [
        f"epistemic: {garbage / '.epistemic' / 'journal.jsonl'} holds no journal records"
    ]


def test_report_on_a_journal_that_is_not_json(garbage: Path) -> None:
    done = epistemic("report", cwd=garbage)
    assert "Traceback" not in done.stderr
    assert done.returncode != 0
    assert (garbage / "RATIONALE.md").read_text() == "the report written before the damage\n"


def test_exec_when_the_record_folder_is_a_file(ws: Path) -> None:
    (ws / ".epistemic").write_text("in the way\n")
    done = run_exec(ws, "touch marker", act="setup")
    assert not (ws / "marker").exists()
    assert_clean_error(done)


def write_journal(ws: Path, lines: list[dict[str, Any]]) -> None:
    (ws / ".epistemic").mkdir(parents=True, exist_ok=True)
    text = "".join(json.dumps(line) + "\n" for line in lines)
    (ws / ".epistemic" / "journal.jsonl").write_text(text)


CALL = {"kind": "call", "seq": 1, "tool": "bash", "act": "verify", "reason": REASON}


def test_log_on_a_record_with_an_unhashable_seq(ws: Path) -> None:
    write_journal(ws, [{**CALL, "command": "true"}, {"kind": "outcome", "seq": [1], "ok": True}])
    done = epistemic("log", "--json", cwd=ws)
    assert "Traceback" not in done.stderr
    assert done.returncode in (0, 2, 3)


def test_report_on_a_rejection_whose_message_is_not_text(ws: Path) -> None:
    write_journal(ws, [{"kind": "rejected", "seq": 1, "tool": "bash", "rule": "x", "message": 5}])
    done = epistemic("report", cwd=ws)
    assert "Traceback" not in done.stderr
    assert done.returncode in (0, 1, 2, 3)  # 1: the hand-written journal is not chained


def test_exec_of_a_command_killed_by_a_signal(ws: Path) -> None:
    done = run_exec(ws, "kill -TERM $$", act="setup")
    assert records(ws)[-1]["returncode"] == -15
    assert done.returncode == 128 + 15


def test_exec_piped_into_head(ws: Path) -> None:
    line = f"{EPISTEMIC} exec --type collect-info --reason '{REASON}' -- 'seq 1 2000000' | head -1"
    done = subprocess.run(
        ["bash", "-c", line], cwd=ws, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.stdout == "1\n"
    outcome = records(ws)[-1]
    assert outcome["kind"] == "outcome"
    assert outcome["ok"] is True, outcome["outcome"]
    assert outcome["returncode"] == 0
    assert list((ws / ".epistemic" / "tmp").iterdir()) == []
    assert "Traceback" not in done.stderr


def test_log_piped_into_head(ws: Path) -> None:
    write_journal(
        ws,
        [{**CALL, "seq": n, "command": f"echo {n}", "reason": "r" * 400} for n in range(1, 3000)],
    )
    done = subprocess.run(
        ["bash", "-c", f"{EPISTEMIC} log --json | head -c 1"],
        cwd=ws,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.stdout == "["
    assert "Traceback" not in done.stderr
