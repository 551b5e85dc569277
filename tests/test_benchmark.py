"""The benchmark: every task complete, every oracle checked both ways (the reference session
passes it, each plausible wrong solution fails it), and `epistemic bench` end to end with the
reference sessions, including resuming an interrupted run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from epistemic_agent.benchmark.runner import BenchConfig, run_all
from epistemic_agent.benchmark.tasks import (
    Task,
    TaskError,
    all_tasks,
    check_task,
    prepare_workspace,
    run_oracle,
    select,
)
from epistemic_agent.sessions import find_journals, load

EPISTEMIC = str(Path(sys.executable).with_name("epistemic"))
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
WRONG = [(task, wrong) for task in TASKS for wrong in task.wrong]


def play(task: Task, script: Path, workspace: Path) -> subprocess.CompletedProcess[str]:
    """Prepare a fresh workspace and play a scripted session in it through `epistemic run`."""
    prepare_workspace(task, workspace)
    return subprocess.run(
        [
            EPISTEMIC,
            "run",
            "--model",
            f"replay:{script}",
            "-C",
            str(workspace),
            "--max-steps",
            "120",
            "--json",
            task.prompt,
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        stdin=subprocess.DEVNULL,
    )


def test_the_benchmark_has_every_task_and_each_is_complete() -> None:
    assert {task.name for task in TASKS} >= REQUIRED
    problems = [problem for task in TASKS for problem in check_task(task)]
    assert problems == []


@pytest.mark.parametrize(("task", "wrong"), WRONG, ids=[f"{t.name}/{w.stem}" for t, w in WRONG])
def test_each_wrong_solution_fails_its_oracle(task: Task, wrong: Path, tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    done = play(task, wrong, workspace)
    assert done.returncode in (0, 3, 4), done.stderr  # it ran to its end, however misguided
    passed, verdict = run_oracle(task, workspace)
    assert not passed, f"the oracle passed a wrong solution: {verdict}"


@pytest.fixture(scope="module")
def bench_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any], int]:
    out = tmp_path_factory.mktemp("bench")
    done = subprocess.run(
        [EPISTEMIC, "bench", "--model", "replay", "--jobs", "2", "-o", str(out), "--json"],
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    return out, json.loads(done.stdout), done.returncode


def test_the_full_benchmark_passes_with_the_reference_sessions(
    bench_run: tuple[Path, dict[str, Any], int],
) -> None:
    out, results, code = bench_run
    rows = {row["task"]: row for row in results["tasks"]}
    failing = {name: row["verdict"] for name, row in rows.items() if not row["passed"]}
    assert failing == {} and code == 0
    assert set(rows) == {task.name for task in TASKS}
    for row in rows.values():
        assert row["rejections"] == 0 and row["stop"] == "finished"
        assert row["integrity"] == "intact" and row["calls"] == sum(row["shape"].values())
    assert results["totals"]["passed"] == len(TASKS)
    assert json.loads((out / "results.json").read_text())["totals"] == results["totals"]


def test_per_task_journals_are_kept_for_stats_and_diff(
    bench_run: tuple[Path, dict[str, Any], int],
) -> None:
    out, results, _ = bench_run
    journals = find_journals([out])
    assert len(journals) == len(TASKS)
    for row in results["tasks"]:
        session = load(out / row["task"] / "workspace")
        assert session.integrity is not None and session.integrity.status == "intact"
        assert (out / row["task"] / "workspace" / "RATIONALE.md").is_file()
        assert len(session.views) == row["calls"]


def test_an_interrupted_run_resumes_without_redoing_finished_tasks(tmp_path: Path) -> None:
    names = [task.name for task in TASKS[:2]]
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


def test_bad_input_is_a_usage_error(tmp_path: Path) -> None:
    for args, message in (
        (["--model", "replay", "--tasks", "no-such-task"], "unknown task(s) no-such-task"),
        (["--model", "replay", "--jobs", "0"], "--jobs and --max-steps must be at least 1"),
        ([], "name a model"),
    ):
        done = subprocess.run(
            [EPISTEMIC, "bench", "-o", str(tmp_path / "o"), *args],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
            env={"PATH": "/usr/bin:/bin"},
        )
        assert done.returncode == 2 and message in done.stderr and "Traceback" not in done.stderr
    with pytest.raises(TaskError):
        select(["nope"])


def test_list_names_every_task() -> None:
    done = subprocess.run(
        [EPISTEMIC, "bench", "--list"], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0
    assert {line.split()[0] for line in done.stdout.splitlines()} == {t.name for t in TASKS}


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


def bench(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [EPISTEMIC, "bench", *args],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd=cwd,
    )


def test_an_agent_that_reads_the_oracle_fails(tmp_path: Path) -> None:
    from epistemic_agent.benchmark import TASKS_DIR

    look = {
        "command": f"ls {TASKS_DIR}/csv-counting",
        "type": "collect-info",
        "reason": "See what else lies around that could help with the counting.",
    }
    peek = script(tmp_path, "peek.json", look)
    done = bench(
        "--model", f"replay:{peek}", "--tasks", "csv-counting", "-o", str(tmp_path / "o"), "--json"
    )
    [row] = json.loads(done.stdout)["tasks"]
    assert row["passed"] is False and row["peeked"] and "benchmark's own files" in row["verdict"]


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
    assert not (out / "sqlite-analysis").exists()  # queued, never started


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
