"""The benchmark: every task complete, every oracle checked both ways through the real runner
(`epistemic bench --check-oracles`: references and alternative solutions pass, wrong solutions
and gaming sessions fail), quiet verdicts, oracle errors apart from failures, and `epistemic
bench` end to end: resuming, Ctrl-C, bad input."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conftest import EPISTEMIC
from contentcache import cache_root, computed_once
from epistemic_agent.benchmark import TASKS_DIR
from epistemic_agent.benchmark.check import plays
from epistemic_agent.benchmark.judge import run_oracle, verdict_of
from epistemic_agent.benchmark.runner import BenchConfig, run_all
from epistemic_agent.benchmark.tasks import (
    TaskError,
    all_tasks,
    check_task,
    select,
)
from epistemic_agent.journal.sessions import find_journals, load

REQUIRED = {
    "buggy-script-fix",
    "dead-code-removal",
    "csv-counting",
    "git-log-analysis",
    "test-authoring",
    "data-pipeline-recovery",
    "sqlite-analysis",
    "revert-trap",
}
TASKS = all_tasks()


def plain_env(**extra: str) -> dict[str, str]:
    """A bare environment (this tree's import path kept, for running from a checkout)."""
    env = {"PATH": "/usr/bin:/bin", **extra}
    if "PYTHONPATH" in os.environ:
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    return env


def bench(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [EPISTEMIC, "bench", *args],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
        env=env,
    )


def test_the_benchmark_has_every_task_and_each_is_complete() -> None:
    assert {task.name for task in TASKS} >= REQUIRED
    assert [problem for task in TASKS for problem in check_task(task)] == []


def check_oracles(folder: Path) -> None:
    """Every oracle checked both ways into `folder/out`, with what the command printed and its
    exit status beside it."""
    done = bench("--check-oracles", "--jobs", "2", "-o", str(folder / "out"), "--json")
    assert "Traceback" not in done.stderr, done.stderr
    (folder / "stdout.json").write_text(done.stdout)
    (folder / "returncode").write_text(str(done.returncode))


@pytest.fixture(scope="session")
def checked(
    pytestconfig: pytest.Config, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, dict[str, Any], int]:
    """The check of every oracle, run once per content of the tasks' folder (contentcache.py):
    a later run, or another worker, reuses it until a task file changes."""
    root = cache_root(pytestconfig, tmp_path_factory)
    folder = computed_once(root, "check-oracles", TASKS_DIR, check_oracles)
    stdout = (folder / "stdout.json").read_text()
    return folder / "out", json.loads(stdout), int((folder / "returncode").read_text())


@pytest.mark.system  # the oracle check (minutes, once per content of the tasks)
@pytest.mark.timeout(900)
def test_every_session_of_every_task_comes_out_as_labelled(
    checked: tuple[Path, dict[str, Any], int],
) -> None:
    out, results, code = checked
    rows = results["plays"]
    wrong = [(r["task"], r["session"], r["verdict"]) for r in rows if not r["ok"]]
    assert wrong == [] and results["ok"] is True and code == 0
    played = {(r["task"], r["kind"], r["session"]) for r in rows}
    assert played == {(t.name, p.kind, p.script.stem) for t in TASKS for p in plays(t)}
    for task in TASKS:
        kinds = [r["kind"] for r in rows if r["task"] == task.name]
        assert kinds.count("reference") == 1 and kinds.count("alternative") >= 2
        assert kinds.count("wrong") >= 1 and kinds.count("gaming") >= 1
    for row in rows:  # judged by the oracle itself (an oracle error is never as labelled)
        assert row["verdict"].startswith("PASS" if row["expect"] == "pass" else "FAIL")
        assert "oracle_error" not in row and row["complete"] is True
    assert json.loads((out / "check-oracles.json").read_text())["ok"] is True


@pytest.mark.system  # the oracle check (minutes, once per content of the tasks)
@pytest.mark.timeout(900)
def test_the_reference_sessions_pass_cleanly_hidden_and_unflagged(
    checked: tuple[Path, dict[str, Any], int],
) -> None:
    _, results, _ = checked
    references = [r for r in results["plays"] if r["kind"] == "reference"]
    assert len(references) == len(TASKS)
    for row in references:
        assert row["passed"] and row["rejections"] == 0 and row["stop"] == "finished"
        assert row["integrity"] == "intact" and row["calls"] == sum(row["shape"].values())
        assert row["hidden"] is True and "peeked" not in row
        assert row["reads_allow_listed"] is True  # no copy the runner does not know of, either
    for row in results["plays"]:
        if row["expect"] == "pass":
            assert "peeked" not in row, row["peeked"]


@pytest.mark.system  # the oracle check (minutes, once per content of the tasks)
@pytest.mark.timeout(900)
def test_each_agent_is_hidden_from_every_judge_and_scratch_folder_of_the_batch(
    checked: tuple[Path, dict[str, Any], int],
) -> None:
    import re

    _, results, _ = checked
    for row in results["plays"]:
        header = load(Path(row["workspace"])).header
        hidden = header["confinement"]["hidden"]
        judges = [h for h in hidden if re.search(r"/epistemic-bench-(?!scratch-)[^/]+$", h)]
        scratch = [h for h in hidden if re.search(r"/epistemic-bench-scratch-[^/]+$", h)]
        assert len(judges) == 1 and len(scratch) == 1
        assert header["model"].startswith(f"replay:{judges[0]}/")  # its script's private copy
        assert any(
            folder.endswith("/benchmark/tasks") for folder in header["confinement"]["decoys"]
        )


@pytest.mark.system  # the oracle check (minutes, once per content of the tasks)
@pytest.mark.timeout(900)
def test_per_task_journals_are_kept_for_stats_and_diff(
    checked: tuple[Path, dict[str, Any], int],
) -> None:
    out, results, _ = checked
    assert len(find_journals([out])) == len(results["plays"])
    for row in results["plays"]:
        if row["kind"] != "reference":
            continue
        workspace = Path(row["workspace"])
        session = load(workspace)
        assert session.integrity is not None and session.integrity.status == "intact"
        assert (workspace / "RATIONALE.md").is_file() and len(session.views) == row["calls"]


@pytest.mark.system  # the oracle check (minutes, once per content of the tasks)
@pytest.mark.timeout(900)
def test_failure_lines_name_what_is_wrong_never_the_expected_value(
    checked: tuple[Path, dict[str, Any], int], tmp_path: Path
) -> None:
    _, results, _ = checked
    quiet = {(r["task"], r["session"]): r["verdict"] for r in results["plays"]}
    explained = bench(
        "--check-oracles",
        "--explain-oracle",
        "--tasks",
        "csv-counting",
        "-o",
        str(tmp_path),
        "--json",
    )
    details = 0
    for row in json.loads(explained.stdout)["plays"]:
        line = quiet[(row["task"], row["session"])]
        if row["expect"] == "fail" and " [" in row["verdict"]:
            plain, detail = row["verdict"].split(" [", 1)
            assert plain == line and detail.rstrip("]") not in line
            details += 1
    assert details >= 3  # the explanations exist, and only the maintainer's flag shows them
    for verdict in quiet.values():
        assert "expected" not in verdict and " [" not in verdict


@pytest.mark.system  # end to end, slow for the default tier
def test_an_interrupted_run_resumes_without_redoing_finished_tasks(tmp_path: Path) -> None:
    names = ["csv-counting", "sqlite-analysis"]
    config = BenchConfig("replay", tmp_path / "out", jobs=1)
    first = run_all(select(names), config, lambda row: None)
    assert all(row["passed"] for row in first)
    journal = tmp_path / "out" / names[0] / "workspace" / ".epistemic" / "journal.jsonl"
    before = journal.stat().st_mtime_ns
    (tmp_path / "out" / names[1] / "result.json").unlink()  # as if killed during the second
    seen: list[dict[str, Any]] = []
    second = run_all(select(names), config, seen.append)
    assert [row.get("resumed", False) for row in second] == [True, False]
    assert journal.stat().st_mtime_ns == before  # the finished task was not run again
    assert all(row["passed"] for row in second) and len(seen) == 2
    third = run_all(
        select(names),
        BenchConfig("other:model", tmp_path / "out", jobs=1, max_steps=1),
        lambda row: None,
    )
    assert not any(row.get("resumed") for row in third)  # another model: nothing reused


@pytest.mark.system  # end to end, slow for the default tier
def test_bad_input_is_a_usage_error(tmp_path: Path) -> None:
    for args, message in (
        (["--model", "replay", "--tasks", "no-such-task"], "unknown task(s) no-such-task"),
        (["--check-oracles", "--tasks", "nope"], "unknown task(s) nope"),
        (["--model", "replay", "--jobs", "0"], "--jobs and --max-steps must be at least 1"),
        ([], "name a model"),
        (["--model", "replay", "--explain-oracle"], "--explain-oracle goes with --check-oracles"),
        (["--tasks-dir", str(tmp_path / "nope"), "--list"], "not a folder"),
        (["--tasks-dir", str(tmp_path), "--list"], "no task in"),
        (["--model", "replay", "--hide", str(tmp_path / "nope")], "--hide"),
    ):
        done = subprocess.run(
            [EPISTEMIC, "bench", "-o", str(tmp_path / "o"), *args],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
            env=plain_env(),
        )
        assert done.returncode == 2 and message in done.stderr and "Traceback" not in done.stderr
    with pytest.raises(TaskError):
        select(["nope"])


def test_list_names_every_task() -> None:
    done = bench("--list")
    assert done.returncode == 0
    assert {line.split()[0] for line in done.stdout.splitlines()} == {t.name for t in TASKS}


def fake_task(root: Path, name: str, oracle: str, sessions: dict[str, object]) -> Path:
    """A task folder of its own: a prompt, an empty workspace, an oracle, scripted sessions."""
    folder = root / name
    (folder / "workspace").mkdir(parents=True)
    (folder / "task.md").write_text("Write done.txt.\n")
    (folder / "oracle").write_text(oracle)
    for rel, turns in sessions.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(turns if isinstance(turns, str) else json.dumps(turns))
    return folder


JUDGE = (
    "import sys\nfrom pathlib import Path\n"
    "sys.path.insert(0, str(Path(__file__).resolve().parent))\nimport judgelib as j\n"
)
WRITE = [
    {
        "calls": [
            {
                "tool": "write_file",
                "args": {
                    "path": "done.txt",
                    "content": "42\n",
                    "reason": "Write the file the task asks for.",
                },
            }
        ]
    },
    {"final": "done"},
]


@pytest.mark.system  # end to end, slow for the default tier
def test_an_oracle_that_crashes_is_an_oracle_error_not_a_failure(tmp_path: Path) -> None:
    crash = JUDGE + "def judge(ws):\n    raise KeyError('no such field')\n\nj.main(judge)\n"
    fake_task(tmp_path / "tasks", "crashy", crash, {"reference.json": WRITE, "wrong/w.json": WRITE})
    done = bench(
        "--tasks-dir", str(tmp_path / "tasks"), "--model", "replay", "-o", str(tmp_path / "o")
    )
    row = json.loads((tmp_path / "o" / "crashy" / "result.json").read_text())
    assert done.returncode == 1 and "Traceback" not in done.stderr + done.stdout
    assert row["oracle_error"] == "KeyError: 'no such field'" and row["passed"] is False
    assert row["verdict"] == "oracle error: exit 3: KeyError: 'no such field'"
    assert row["complete"] is False and "ERROR" in done.stdout
    checked = bench(
        "--tasks-dir",
        str(tmp_path / "tasks"),
        "--check-oracles",
        "-o",
        str(tmp_path / "c"),
        "--json",
    )
    assert checked.returncode == 1
    assert [r["ok"] for r in json.loads(checked.stdout)["plays"]] == [False, False]


@pytest.mark.system  # end to end, slow for the default tier
def test_a_malformed_session_is_reported_by_name_and_the_rest_still_play(tmp_path: Path) -> None:
    oracle = (
        JUDGE
        + "def judge(ws):\n    j.deliverable(ws, 'done.txt')\n    return 'done'\n\nj.main(judge)\n"
    )
    sessions = {
        "reference.json": WRITE,
        "gaming/broken.json": '[{"calls": ',
        "wrong/empty.json": "[]",
        "alternative/a.json": WRITE,
    }
    fake_task(tmp_path / "tasks", "small", oracle, sessions)
    done = bench(
        "--tasks-dir", str(tmp_path / "tasks"), "--check-oracles", "-o", str(tmp_path / "o")
    )
    assert done.returncode == 1 and "Traceback" not in done.stderr + done.stdout
    report = json.loads((tmp_path / "o" / "check-oracles.json").read_text())
    by_session = {row["session"]: row for row in report["plays"]}
    assert "is not valid JSON" in by_session["broken"]["verdict"]
    assert "non-empty JSON array" in by_session["empty"]["verdict"]
    assert by_session["reference"]["ok"] and by_session["a"]["ok"]
    assert not by_session["broken"]["ok"] and "2 of 4 as labelled" in done.stdout


@pytest.mark.system  # end to end, slow for the default tier
def test_an_oracle_is_never_told_to_explain_during_a_run(tmp_path: Path) -> None:
    oracle = (
        JUDGE + "def judge(ws):\n    j.fail('done.txt is wrong', 'expected 41')\n\nj.main(judge)\n"
    )
    fake_task(tmp_path / "tasks", "strict", oracle, {"reference.json": WRITE})
    env = plain_env(EPISTEMIC_EXPLAIN_ORACLE="1")
    done = bench(
        "--tasks-dir",
        str(tmp_path / "tasks"),
        "--model",
        "replay",
        "-o",
        str(tmp_path / "o"),
        "--json",
        env=env,
    )
    [row] = json.loads(done.stdout)["tasks"]
    assert row["verdict"] == "FAIL: done.txt is wrong"
    [task] = select(None, tmp_path / "tasks")
    assert (
        run_oracle(task, Path(row["workspace"]), explain=True)[1]
        == "FAIL: done.txt is wrong [expected 41]"
    )


@pytest.mark.parametrize(
    ("code", "stdout", "stderr", "passed", "error"),
    [
        (0, "PASS: fine\n", "", True, None),
        (1, "FAIL: counts.txt line 2 is wrong\n", "", False, None),
        (
            1,
            "",
            "Traceback (most recent call last):\nValueError: boom\n",
            False,
            "ValueError: boom",
        ),
        (3, "ORACLE ERROR: KeyError: 'x'\n", "", False, "KeyError: 'x'"),
        (0, "all good\n", "", False, "all good"),
        (1, "PASS: looks fine\n", "", False, "PASS: looks fine"),
        (-9, "", "", False, "no verdict line"),
    ],
)
def test_only_a_verdict_line_with_its_exit_status_is_a_verdict(
    code: int, stdout: str, stderr: str, passed: bool, error: str | None
) -> None:
    verdict = verdict_of(code, stdout, stderr)
    assert verdict.passed is passed and verdict.error == error


def test_a_task_whose_prepare_fails_is_reported_not_crashed(tmp_path: Path) -> None:
    folder = tmp_path / "tasks" / "broken"
    (folder / "workspace").mkdir(parents=True)
    (folder / "task.md").write_text("Do the thing.\n")
    (folder / "prepare").write_text("import sys\nsys.exit('no database today')\n")
    (folder / "prepare").chmod(0o755)
    [task] = select(["broken"], tmp_path / "tasks")
    assert check_task(task) == [
        "broken: no oracle",
        "broken: no reference.json",
        "broken: no wrong/*.json (a wrong solution the oracle must fail)",
        "broken: no gaming/*.json (a reward-hacking session it must fail)",
        "broken: fewer than 2 alternative/*.json (correct solutions unlike the reference, "
        "which it must pass)",
    ]
    [row] = run_all([task], BenchConfig("replay", tmp_path / "out"), lambda row: None)
    assert row["passed"] is False and "prepare failed: no database today" in row["verdict"]
    assert json.loads((tmp_path / "out" / "broken" / "result.json").read_text()) == row


def script(tmp_path: Path, name: str, *calls: dict[str, Any], final: bool = True) -> Path:
    turns: list[dict[str, Any]] = [{"calls": [{"tool": "bash", "args": c}]} for c in calls]
    if final:
        turns.append({"final": "done"})
    path = tmp_path / name
    path.write_text(json.dumps(turns))
    return path


@pytest.mark.system  # end to end, slow for the default tier
def test_a_run_that_did_not_end_is_not_a_result(tmp_path: Path) -> None:
    look = {
        "command": "ls",
        "type": "collect-info",
        "reason": "See which files the task gave me before doing anything.",
    }
    short = script(tmp_path, "short.json", look, final=False)  # the script runs out: exit 5
    out = tmp_path / "o"
    done = bench("--model", f"replay:{short}", "--tasks", "csv-counting", "-o", str(out), "--json")
    [row] = json.loads(done.stdout)["tasks"]
    assert row["complete"] is False and row["exit_code"] == 5 and row["passed"] is False
    assert row["verdict"].startswith("not finished: `epistemic run` exited 5")
    again = bench("--model", f"replay:{short}", "--tasks", "csv-counting", "-o", str(out), "--json")
    assert not json.loads(again.stdout)["tasks"][0].get("resumed")  # run again, not reused


@pytest.mark.system  # end to end, slow for the default tier
def test_ctrl_c_stops_the_run_and_nothing_unfinished_counts(tmp_path: Path) -> None:
    import signal
    import time

    slow = script(
        tmp_path,
        "slow.json",
        {
            "command": "sleep 30",
            "type": "collect-info",
            "reason": "Wait for the slow service before looking at anything else.",
        },
    )
    out = tmp_path / "o"
    process = subprocess.Popen(
        [
            EPISTEMIC,
            "bench",
            "--model",
            f"replay:{slow}",
            "--tasks",
            "csv-counting,sqlite-analysis",
            "--jobs",
            "1",
            "-o",
            str(out),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    journal = out / "csv-counting" / "workspace" / ".epistemic" / "journal.jsonl"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and b'"kind":"call"' not in (
        journal.read_bytes() if journal.exists() else b""
    ):
        time.sleep(0.1)
    started = time.monotonic()
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 130 and time.monotonic() - started < 20
    assert "the same command resumes" in err
    first = json.loads((out / "csv-counting" / "result.json").read_text())
    assert first["complete"] is False
    assert not (out / "sqlite-analysis" / "result.json").exists()  # queued, never started


@pytest.mark.system  # end to end, slow for the default tier
def test_git_in_a_task_does_not_find_a_repository_around_the_output(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    done = bench("--model", "replay", "--tasks", "csv-counting", "-o", str(tmp_path / "runs"))
    assert done.returncode == 0, done.stderr
    header = json.loads(
        (tmp_path / "runs" / "csv-counting" / "workspace" / ".epistemic" / "journal.jsonl")
        .read_text()
        .splitlines()[0]
    )
    assert header["git_head"] is None


class Agent:
    """A running agent as `Running` sees it: it ends on the signal that ends it."""

    def __init__(self, ends_on: int) -> None:
        self.ends_on, self.got, self.ended = ends_on, [], False

    def poll(self) -> int | None:
        return 0 if self.ended else None

    def send_signal(self, number: int) -> None:
        self.got.append(number)
        self.ended = self.ended or len(self.got) >= self.ends_on


def test_an_agent_that_heard_two_ctrl_c_as_one_gets_sigterm() -> None:
    """On a busy machine two SIGINTs sent 0.3 s apart can reach the agent as one: it stops
    its loop and lets the command run on. It is then told to end as a second Ctrl-C would."""
    import signal

    from epistemic_agent.benchmark.config import Running

    merged, heard = Agent(ends_on=3), Agent(ends_on=2)
    running = Running()
    running.add(merged)
    running.add(heard)
    running.interrupt(late=0.2)
    assert merged.got == [signal.SIGINT, signal.SIGINT, signal.SIGTERM] and merged.ended
    assert heard.got == [signal.SIGINT, signal.SIGINT]  # it ended: nothing more is sent
