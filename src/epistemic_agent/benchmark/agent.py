"""The agent's side of one task run: `epistemic run` in its own process, hidden from the
benchmark's files (hiding.py), reading nothing but what its task needs (readable.py), and
watched while it works (peek.py) and after (peek_record.py)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from .hiding import plan
from .interpreter import task_env
from .judge import Private
from .peek import Watch, describe
from .peek_record import named
from .readable import allow_list
from .tasks import Task

if TYPE_CHECKING:
    from typing import Any

    from .config import BenchConfig, Running

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
    spec = model_for(task, model)
    if spec.startswith("replay:"):  # the session reads its script from a private copy
        spec = "replay:" + str(private.session_copy(Path(spec.removeprefix("replay:"))))
    home = Path(tempfile.mkdtemp(prefix="epistemic-bench-home-"))
    reads = allow_list(home)
    tasks_root = task.folder.parent
    hiding = plan(config.out, workspace, private.root, extra, tasks_root, reads.copies)
    trees = {f"tasks/{task.name}": (task.folder, False), "tasks": (private.root / "decoy", True)}
    watch = Watch(trees)
    unavailable = watch.start()
    pids: list[int] = []
    env = {"PATH": reads.path_env, "HOME": str(home)}
    options = [*hiding.argv(), *reads.argv()]
    try:
        code = run_agent(spec, task, config, workspace, folder, running, options, pids, env)
    finally:
        held = guarantees_held(workspace)
        hidden = {"record-private", "reads-allow-listed"} <= held
        peeks = watch.finish(pids[0] if pids else None, confined=hidden)
        peeks += named(workspace, sorted(path.name for path in tasks_root.iterdir()))
        shutil.rmtree(home, ignore_errors=True)
    found: dict[str, Any] = {
        "exit_code": code,
        "python3": reads.python,
        "hidden": hidden,
        "reads_allow_listed": "reads-allow-listed" in held,
        "peek_detection": "fanotify" if unavailable is None else f"unavailable: {unavailable}",
        "judge_hides": [*hiding.hidden, *(folder for folder, _ in hiding.decoys)],
    }
    if peeks:
        found["peeked"] = describe(peeks)
        found["peeks"] = [peek.to_json() for peek in peeks[:50]]
    return found


def guarantees_held(workspace: Path) -> set[str]:
    """The guarantees the session's header says held: `record-private` (the same mechanism
    hides the rest) and `reads-allow-listed` (only with an allow-list in force) among them."""
    try:
        with (workspace / ".epistemic" / "journal.jsonl").open(encoding="utf-8") as handle:
            header = json.loads(handle.readline())
    except (OSError, ValueError):
        return set()
    confinement = header.get("confinement") or {}
    held = {str(key) for key in confinement.get("held") or []}
    if confinement.get("readable") is None:
        held.discard("reads-allow-listed")  # held only vacuously: no allow-list was set
    return held


def last_line(folder: Path) -> str:
    try:
        lines = (folder / "stderr.txt").read_text(errors="replace").strip().splitlines()
    except OSError:
        return ""
    return lines[-1][:300] if lines else ""


def run_command() -> list[str]:
    """How `epistemic run` is started: this interpreter, with this process's import path but
    not its working folder (-P: a folder that holds the session's scratch would be importable,
    and the session refuses to start). The folders PYTHONPATH put on the path are handed over
    on the command line, since the environment the session (and so every act) gets has no
    PYTHONPATH."""
    given = [os.path.abspath(p) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    if not given:
        return [sys.executable, "-P", "-m", "epistemic_agent.cli"]
    source = (
        f"import sys; sys.path[:0] = {given!r}; "
        "from epistemic_agent.cli.app import main; sys.exit(main())"
    )
    return [sys.executable, "-P", "-c", source]


def run_agent(
    spec: str,
    task: Task,
    config: BenchConfig,
    workspace: Path,
    folder: Path,
    running: Running | None,
    hiding: list[str],
    started: list[int],
    own_env: dict[str, str] | None = None,
) -> int:
    """`epistemic run` on the task, its JSON events kept in events.jsonl. Its environment is
    the tasks' (interpreter.task_env: no VIRTUAL_ENV, PYTHONPATH...), which its acts inherit."""
    argv = [*run_command(), "run", "--model", spec]
    argv += ["-C", str(workspace), "--here", "--max-steps", str(config.max_steps), "--json"]
    argv += [*hiding, *config.extra_args, task.prompt]
    # git in a task's workspace must not find a repository around the output folder
    env = {**task_env(), "NO_COLOR": "1", "GIT_CEILING_DIRECTORIES": str(config.out)}
    env.update(own_env or {})
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
