"""The agent's side of one task run: `epistemic run` in its own process, hidden from the
benchmark's files (hiding.py) and watched while it works (peek.py)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from .judge import Private
from .tasks import Task

TYPE_CHECKING = False  # typing is not imported at run time: start-up cost
if TYPE_CHECKING:
    from typing import Any

    from .runner import BenchConfig, Running

RUN_TIMEOUT = 3600.0


def model_for(task: Task, model: str) -> str:
    """The `--model` for one task: `replay` means the task's own reference session."""
    return f"replay:{task.reference}" if model == "replay" else model


def session(
    task: Task,
    config: BenchConfig,
    model: str,
    workspace: Path,
    folder: Path,
    private: Private,
    running: Running | None,
    extra: tuple[str, ...],
) -> dict[str, Any]:
    """The agent's session, hidden from the benchmark's files and watched: exit code, what it
    opened, and whether the hiding held."""
    from .hiding import plan
    from .peek import Watch, describe

    spec = model_for(task, model)
    if spec.startswith("replay:"):  # the session reads its script from a private copy
        spec = "replay:" + str(private.session_copy(Path(spec.removeprefix("replay:"))))
    hiding = plan(config.out, workspace, private.root, extra, task.folder.parent)
    trees = {f"tasks/{task.name}": (task.folder, False), "tasks": (private.root / "decoy", True)}
    watch = Watch(trees)
    unavailable = watch.start()
    pids: list[int] = []
    try:
        code = run_agent(spec, task, config, workspace, folder, running, hiding.argv(), pids)
    finally:
        hidden = hidden_held(workspace)
        peeks = watch.finish(pids[0] if pids else None, confined=hidden)
    found: dict[str, Any] = {
        "exit_code": code,
        "hidden": hidden,
        "peek_detection": "fanotify" if unavailable is None else f"unavailable: {unavailable}",
        "judge_hides": [*hiding.hidden, *(folder for folder, _ in hiding.decoys)],
    }
    if peeks:
        found["peeked"] = describe(peeks)
        found["peeks"] = [peek.to_json() for peek in peeks[:50]]
    return found


def hidden_held(workspace: Path) -> bool:
    """Whether the session's acts could not see hidden paths (its header says the record was
    private: the same mechanism hides the rest)."""
    try:
        with (workspace / ".epistemic" / "journal.jsonl").open(encoding="utf-8") as handle:
            header = json.loads(handle.readline())
    except (OSError, ValueError):
        return False
    held = (header.get("confinement") or {}).get("held") or []
    return "record-private" in held


def last_line(folder: Path) -> str:
    try:
        lines = (folder / "stderr.txt").read_text(errors="replace").strip().splitlines()
    except OSError:
        return ""
    return lines[-1][:300] if lines else ""


def run_agent(
    spec: str,
    task: Task,
    config: BenchConfig,
    workspace: Path,
    folder: Path,
    running: Running | None,
    hiding: list[str],
    started: list[int],
) -> int:
    """`epistemic run` on the task, its JSON events kept in events.jsonl."""
    import subprocess

    argv = [sys.executable, "-m", "epistemic_agent.cli", "run", "--model", spec]
    argv += ["-C", str(workspace), "--max-steps", str(config.max_steps), "--json"]
    argv += [*hiding, *config.extra_args, task.prompt]
    # git in a task's workspace must not find a repository around the output folder
    env = {**os.environ, "NO_COLOR": "1", "GIT_CEILING_DIRECTORIES": str(config.out)}
    env.pop("EPISTEMIC_EXPLAIN_ORACLE", None)
    with (folder / "events.jsonl").open("wb") as out, (folder / "stderr.txt").open("wb") as err:
        process = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=out, stderr=err, env=env, start_new_session=True
        )
        started.append(process.pid)
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
