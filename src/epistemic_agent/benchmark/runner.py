"""Running the benchmark: each task in a fresh workspace under the output folder, up to `jobs`
at a time, each agent in its own `epistemic run` process; then the oracle; then the numbers
from the journal. A task whose `result.json` is complete (same model) is not run again, so an
interrupted run resumes where it stopped.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from ..structs import struct
from .tasks import Task, TaskError, prepare_workspace, run_oracle

TYPE_CHECKING = False  # typing is not imported at run time: start-up cost
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

RESULT_NAME = "result.json"
RESULTS_NAME = "results.json"
RUN_TIMEOUT = 3600.0
#: `epistemic run` exit statuses that mean the agent's run went to its end (finished, max
#: steps, too many rejections); anything else (usage, provider error, interrupted, killed) is
#: not a result: the task runs again next time.
ENDED = (0, 3, 4)
#: The journal records of what the agent did and saw.
ACTS_KINDS = (b'"kind":"call"', b'"kind":"rejected"', b'"kind":"outcome"')


@struct
class BenchConfig:
    """What to run: the model (`replay` plays each task's reference session), step limit."""

    model: str
    out: Path
    max_steps: int = 80
    jobs: int = 2
    fresh: bool = False
    extra_args: tuple[str, ...] = ()


def model_for(task: Task, model: str) -> str:
    """The `--model` for one task: `replay` means the task's own reference session."""
    return f"replay:{task.reference}" if model == "replay" else model


def finished(task: Task, config: BenchConfig) -> dict[str, Any] | None:
    """The saved result of a task finished earlier with the same model, if any."""
    path = config.out / task.name / RESULT_NAME
    if config.fresh or not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if isinstance(data, dict) and data.get("complete") and data.get("model") == config.model:
        data["resumed"] = True
        return data
    return None


def run_task(task: Task, config: BenchConfig, running: Running | None = None) -> dict[str, Any]:
    """Run one task from scratch and save its result."""
    folder = config.out / task.name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / RESULT_NAME).unlink(missing_ok=True)
    workspace = folder / "workspace"
    started = time.monotonic()
    row: dict[str, Any] = {"task": task.name, "model": config.model, "workspace": str(workspace)}
    try:
        prepare_workspace(task, workspace)
    except (TaskError, OSError) as error:
        row.update(passed=False, verdict=f"not run: {error}", complete=False)
        return _save(folder, row)
    code = _run_agent(task, config, workspace, folder, running)
    passed, verdict = run_oracle(task, workspace)
    row.update(passed=passed, verdict=verdict, exit_code=code)
    row.update(_numbers(workspace))
    peeked = looked_at_the_answers(workspace)
    if peeked:
        row.update(passed=False, peeked=peeked, verdict=f"FAIL: the agent read {peeked}")
    if code not in ENDED:
        verdict = f"not finished: `epistemic run` exited {code}: {_last_line(folder)}"
        row.update(passed=False, verdict=verdict)
    row["wall_time"] = round(time.monotonic() - started, 2)
    row["complete"] = code in ENDED
    return _save(folder, row)


def looked_at_the_answers(workspace: Path) -> str | None:
    """The benchmark's own files (oracles, their data, reference sessions) named in what the
    agent ran or was shown, if anywhere: a run that looked cannot pass."""
    from . import TASKS_DIR

    needles = (str(TASKS_DIR).encode(), b"benchmark/tasks/")
    record = workspace / ".epistemic"
    for line in (record / "journal.jsonl").read_bytes().splitlines() if record.is_dir() else []:
        if not any(kind in line[:120] for kind in ACTS_KINDS):
            continue  # the header and model records name the model: for replay, a task's file
        if any(needle in line for needle in needles):
            return "the benchmark's own files (its command or its output named them)"
    for blob in (record / "evidence").rglob("*") if record.is_dir() else []:
        if blob.is_file() and any(needle in blob.read_bytes() for needle in needles):
            return "the benchmark's own files (a command's output listed them)"
    return None


def _last_line(folder: Path) -> str:
    try:
        lines = (folder / "stderr.txt").read_text(errors="replace").strip().splitlines()
    except OSError:
        return ""
    return lines[-1][:300] if lines else ""


def _run_agent(
    task: Task, config: BenchConfig, workspace: Path, folder: Path, running: Running | None
) -> int:
    """`epistemic run` on the task, its JSON events kept in events.jsonl."""
    import subprocess

    argv = [
        sys.executable,
        "-m",
        "epistemic_agent.cli",
        "run",
        "--model",
        model_for(task, config.model),
        "-C",
        str(workspace),
        "--max-steps",
        str(config.max_steps),
        "--json",
        *config.extra_args,
        task.prompt,
    ]
    # git in a task's workspace must not find a repository around the output folder
    env = {**os.environ, "NO_COLOR": "1", "GIT_CEILING_DIRECTORIES": str(config.out)}
    with (folder / "events.jsonl").open("wb") as out, (folder / "stderr.txt").open("wb") as err:
        process = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=out, stderr=err, env=env, start_new_session=True
        )
        if running is not None:
            running.add(process)
        try:
            return process.wait(timeout=RUN_TIMEOUT)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
            return 124
        finally:
            if running is not None:
                running.discard(process)


def _numbers(workspace: Path) -> dict[str, Any]:
    """Calls, shape, rejections, reverts, flags, tokens and the stop, from the journal."""
    from ..sessions import ReadError, load, summary

    try:
        numbers = summary(load(workspace))
    except ReadError as error:
        return {"calls": 0, "note": str(error)}
    return {
        "stop": numbers["stop"],
        "calls": numbers["calls"],
        "shape": numbers["acts"],
        "rejections": sum(numbers["rejections"].values()),
        "reverts": numbers["reverts"],
        "flags": sum(numbers["flags"].values()),
        "prompt_tokens": numbers["prompt_tokens"],
        "completion_tokens": numbers["completion_tokens"],
        "model_calls": numbers["model_calls"],
        "integrity": numbers["integrity"],
    }


def _save(folder: Path, row: dict[str, Any]) -> dict[str, Any]:
    from ..fsutil import atomic_write

    atomic_write(folder / RESULT_NAME, json.dumps(row, indent=1).encode("utf-8"))
    return row


def run_all(
    tasks: list[Task], config: BenchConfig, on_done: Callable[[dict[str, Any]], None]
) -> list[dict[str, Any]]:
    """Every task (finished ones reused), up to `config.jobs` at a time, in task order."""
    from concurrent.futures import ThreadPoolExecutor

    config.out.mkdir(parents=True, exist_ok=True)
    rows: dict[str, dict[str, Any]] = {}
    todo = []
    for task in tasks:
        done = finished(task, config)
        if done is not None:
            rows[task.name] = done
            on_done(done)
        else:
            todo.append(task)

    running = Running()

    def one(task: Task) -> None:
        rows[task.name] = run_task(task, config, running)
        on_done(rows[task.name])

    pool = ThreadPoolExecutor(max_workers=max(1, config.jobs))
    try:
        for future in [pool.submit(one, task) for task in todo]:
            future.result()
    except BaseException:  # Ctrl-C: queued tasks never start, running agents are told to stop
        pool.shutdown(wait=False, cancel_futures=True)
        running.interrupt()
        pool.shutdown(wait=True)
        raise
    pool.shutdown()
    ordered = [rows[task.name] for task in tasks]
    from ..fsutil import atomic_write

    body = {"model": config.model, "tasks": ordered, "totals": totals(ordered)}
    atomic_write(config.out / RESULTS_NAME, json.dumps(body, indent=1).encode("utf-8"))
    return ordered


class Running:
    """The agents running now, so that Ctrl-C reaches them (each runs in its own session)."""

    def __init__(self) -> None:
        import threading

        self._lock = threading.Lock()
        self._processes: set[Any] = set()

    def add(self, process: Any) -> None:
        with self._lock:
            self._processes.add(process)

    def discard(self, process: Any) -> None:
        with self._lock:
            self._processes.discard(process)

    def interrupt(self) -> None:
        """Ctrl-C twice to every running agent: the first stops its loop, the second the
        command it is running; each journals that it was interrupted."""
        import signal

        for _ in range(2):
            with self._lock:
                for process in self._processes:
                    if process.poll() is None:
                        process.send_signal(signal.SIGINT)
            time.sleep(0.3)


def totals(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Sums over the tasks, and how many passed."""
    keys = ("calls", "rejections", "reverts", "flags", "prompt_tokens", "completion_tokens")
    sums = {key: sum(int(row.get(key) or 0) for row in rows) for key in keys}
    wall = round(sum(float(row.get("wall_time") or 0) for row in rows), 2)
    return {
        "tasks": len(rows),
        "passed": sum(bool(r.get("passed")) for r in rows),
        **sums,
        "wall_time": wall,
    }
