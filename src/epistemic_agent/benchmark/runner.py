"""Running the benchmark: each task in a fresh workspace under the output folder, up to `jobs`
at a time, each agent in its own `epistemic run` process that cannot see the benchmark's files
(hiding.py) and whose opens of them are watched (peek.py); then, after the session, the oracle
(judge.py); then the numbers from the journal. A task whose `result.json` is complete (same
model) is not run again, so an interrupted run resumes where it stopped.
"""

from __future__ import annotations

import json
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

from ..core import atomic_write
from ..journal import ReadError, load
from ..journal import session_summary as summary
from .agent import last_line, session
from .config import BenchConfig, Play, Running
from .interpreter import Unusable
from .judge import (
    Batch,
    Judging,
    Private,
    Verdict,
    environment_verdict,
    judge,
    judging_environment,
)
from .tasks import Task, TaskError

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

RESULT_NAME = "result.json"
RESULTS_NAME = "results.json"
#: `epistemic run` exit statuses that mean the agent's run went to its end (finished, max
#: steps, too many rejections); anything else (usage, provider error, interrupted, killed) is
#: not a result: the task runs again next time.
ENDED = (0, 3, 4)


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


def run_task(
    task: Task,
    config: BenchConfig,
    running: Running | None = None,
    play: Play | None = None,
    speed: float | None = None,
    batch: Batch | None = None,
) -> dict[str, Any]:
    """Run one task (or one scripted session of it) from scratch and save its result."""
    folder = config.out / task.name / (play.label if play else "")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / RESULT_NAME).unlink(missing_ok=True)
    workspace = folder / "workspace"
    started = time.monotonic()
    row: dict[str, Any] = {"task": task.name, "model": config.model, "workspace": str(workspace)}
    if play is not None:
        row.update(kind=play.kind, session=play.script.stem, expect=play.expect)
    own = batch is None
    batch = batch or Batch()
    private = Private(batch)
    pristine = batch.pristine
    try:
        try:
            pristine.copy(task, workspace)
        except (TaskError, OSError) as error:
            row.update(passed=False, verdict=f"not run: {error}", complete=False)
            return _save(folder, row)
        model = config.model if play is None else f"replay:{play.script}"
        extra = (*config.hide, *batch.hidden)
        try:
            row.update(session(task, config, model, workspace, folder, private, running, extra))
        except Unusable as error:  # no python3 for the tasks: nothing to run, nothing to judge
            return _save(folder, unjudged(row, environment_verdict(str(error))))
        hides = tuple(h for h in row.pop("judge_hides", ()) if h != str(batch.scratch))
        speed = speed or config.speed
        judging = time.monotonic()
        verdict = judge(task, workspace, private, hides, speed, config.explain, pristine)
        row["oracle_time"] = round(time.monotonic() - judging, 2)
    finally:
        private.remove()
        if own:
            batch.remove()
    row.update(passed=verdict.passed, verdict=verdict.line)
    if verdict.error is not None:
        row["oracle_error"] = verdict.error
    if verdict.environment is not None:
        row["environment_error"] = verdict.environment
    row.update(_numbers(workspace))
    code = row["exit_code"]
    if row.get("peeked"):
        row.update(passed=False, verdict=f"FAIL: the agent opened {row['peeked']}")
    if code not in ENDED:
        verdict_line = f"not finished: `epistemic run` exited {code}: {last_line(folder)}"
        row.update(passed=False, verdict=verdict_line)
    row["wall_time"] = round(time.monotonic() - started, 2)
    row["complete"] = code in ENDED and verdict.error is None and verdict.environment is None
    return _save(folder, row)


def unjudged(row: dict[str, Any], verdict: Verdict) -> dict[str, Any]:
    """A row the judging environment left without a verdict: not passed, not complete."""
    row.update(passed=False, verdict=verdict.line, environment_error=verdict.environment)
    row["complete"] = False
    return row


def _unjudged_run(
    task: Task, config: BenchConfig, play: Play | None, ready: Judging
) -> dict[str, Any]:
    """The row of a run never started: the judging environment cannot judge it."""
    folder = config.out / task.name / (play.label if play else "")
    (folder / RESULT_NAME).unlink(missing_ok=True)
    row: dict[str, Any] = {"task": task.name, "model": config.model, "python3": ready.python3}
    row["workspace"] = str(folder / "workspace")
    if play is not None:
        row.update(kind=play.kind, session=play.script.stem, expect=play.expect)
    return _save(folder, unjudged(row, environment_verdict(ready.problem or "")))


def _numbers(workspace: Path) -> dict[str, Any]:
    """Calls, shape, rejections, reverts, flags, tokens and the stop, from the journal."""
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
        "input_tokens": numbers["input_tokens"],
        "model_calls": numbers["model_calls"],
        "integrity": numbers["integrity"],
    }


def _save(folder: Path, row: dict[str, Any]) -> dict[str, Any]:
    atomic_write(folder / RESULT_NAME, json.dumps(row, indent=1).encode("utf-8"))
    return row


def run_all(
    tasks: list[Task], config: BenchConfig, on_done: Callable[[dict[str, Any]], None]
) -> list[dict[str, Any]]:
    """Every task (finished ones reused), up to `config.jobs` at a time, in task order."""
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
    results = run_many([(task, None) for task in todo], config, on_done)
    rows.update((row["task"], row) for row in results)
    ordered = [rows[task.name] for task in tasks]

    body = {"model": config.model, "tasks": ordered, "totals": totals(ordered)}
    atomic_write(config.out / RESULTS_NAME, json.dumps(body, indent=1).encode("utf-8"))
    return ordered


def run_many(
    items: list[tuple[Task, Play | None]],
    config: BenchConfig,
    on_done: Callable[[dict[str, Any]], None],
) -> list[dict[str, Any]]:
    """Run each (task, play), up to `config.jobs` at a time; rows in the order given. Every
    folder is made first, so that each run's agent is hidden from all the others'."""
    for task, play in items:
        (config.out / task.name / (play.label if play else "")).mkdir(parents=True, exist_ok=True)
    if not items:
        return []
    ready = judging_environment(config.speed)
    if ready.problem is not None:  # no agent runs where no oracle can judge
        refused = [_unjudged_run(task, config, play, ready) for task, play in items]
        for row in refused:
            on_done(row)
        return refused
    speed = ready.speed
    running = Running()
    batch = Batch()
    rows: list[dict[str, Any] | None] = [None] * len(items)

    def one(index: int) -> None:
        task, play = items[index]
        rows[index] = row = run_task(task, config, running, play, speed, batch)
        on_done(row)

    pool = ThreadPoolExecutor(max_workers=max(1, config.jobs))
    try:
        for future in [pool.submit(one, index) for index in range(len(items))]:
            future.result()
    except BaseException:  # Ctrl-C: queued tasks never start, running agents are told to stop
        pool.shutdown(wait=False, cancel_futures=True)
        running.interrupt()
        pool.shutdown(wait=True)
        batch.remove()
        raise
    pool.shutdown()
    batch.remove()
    return [row for row in rows if row is not None]


def totals(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Sums over the tasks, and how many passed."""
    keys: tuple[str, ...] = ("calls", "rejections", "reverts", "flags", "prompt_tokens")
    keys += ("completion_tokens", "input_tokens")
    sums = {key: sum(int(row.get(key) or 0) for row in rows) for key in keys}
    wall = round(sum(float(row.get("wall_time") or 0) for row in rows), 2)
    return {
        "tasks": len(rows),
        "passed": sum(bool(r.get("passed")) for r in rows),
        "environment_errors": sum(bool(r.get("environment_error")) for r in rows),
        **sums,
        "wall_time": wall,
    }
