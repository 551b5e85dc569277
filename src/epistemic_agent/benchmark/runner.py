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


def run_task(task: Task, config: BenchConfig) -> dict[str, Any]:
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
        row.update(passed=False, verdict=f"not run: {error}", complete=True)
        return _save(folder, row)
    code = _run_agent(task, config, workspace, folder)
    passed, verdict = run_oracle(task, workspace)
    row.update(passed=passed, verdict=verdict, exit_code=code)
    row.update(_numbers(workspace))
    row["wall_time"] = round(time.monotonic() - started, 2)
    row["complete"] = True
    return _save(folder, row)


def _run_agent(task: Task, config: BenchConfig, workspace: Path, folder: Path) -> int:
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
    with (folder / "events.jsonl").open("wb") as out, (folder / "stderr.txt").open("wb") as err:
        try:
            done = subprocess.run(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                timeout=RUN_TIMEOUT,
                check=False,
                env={**os.environ, "NO_COLOR": "1"},
            )
        except subprocess.TimeoutExpired:
            return 124
    return done.returncode


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

    def one(task: Task) -> None:
        rows[task.name] = run_task(task, config)
        on_done(rows[task.name])

    with ThreadPoolExecutor(max_workers=max(1, config.jobs)) as pool:
        for future in [pool.submit(one, task) for task in todo]:
            future.result()
    ordered = [rows[task.name] for task in tasks]
    from ..fsutil import atomic_write

    body = {"model": config.model, "tasks": ordered, "totals": totals(ordered)}
    atomic_write(config.out / RESULTS_NAME, json.dumps(body, indent=1).encode("utf-8"))
    return ordered


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
