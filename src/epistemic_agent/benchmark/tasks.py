"""Benchmark tasks: finding them, checking they are complete, preparing a fresh workspace."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

from ..core import EpistemicError, struct

#: The bundled tasks, one folder each (format: docs/benchmark.md)
TASKS_DIR = Path(__file__).resolve().parent / "tasks"

PREPARE_TIMEOUT = 120.0
#: The sessions a task keeps to test its oracle, by folder: what each must come to.
SESSIONS = {"wrong": "fail", "gaming": "fail", "alternative": "pass"}
MIN_ALTERNATIVES = 2


class TaskError(EpistemicError):
    """A task that cannot be used: unknown name, missing file, a prepare script that failed."""


@struct
class Task:
    """One task folder."""

    name: str
    folder: Path

    @property
    def prompt(self) -> str:
        return (self.folder / "task.md").read_text(encoding="utf-8").strip()

    @property
    def reference(self) -> Path:
        return self.folder / "reference.json"

    @property
    def wrong(self) -> list[Path]:
        return self.sessions("wrong")

    def sessions(self, kind: str) -> list[Path]:
        """The task's scripted sessions of one kind (wrong, gaming, alternative)."""
        return sorted((self.folder / kind).glob("*.json"))


def all_tasks(root: Path = TASKS_DIR) -> list[Task]:
    """Every task under `root`, by name."""
    if not root.is_dir():
        return []
    return [
        Task(folder.name, folder)
        for folder in sorted(root.iterdir())
        if folder.is_dir() and (folder / "task.md").is_file()
    ]


def select(names: list[str] | None, root: Path = TASKS_DIR) -> list[Task]:
    """The tasks named (all when None); TaskError names the unknown ones."""
    tasks = all_tasks(root)
    if not names:
        return tasks
    known = {task.name: task for task in tasks}
    unknown = [name for name in names if name not in known]
    if unknown:
        raise TaskError(f"unknown task(s) {', '.join(unknown)}; the tasks are {', '.join(known)}")
    return [known[name] for name in dict.fromkeys(names)]


def check_task(task: Task) -> list[str]:
    """What a task folder lacks (empty when it is complete)."""
    problems = []
    for name in ("task.md", "workspace", "oracle", "reference.json"):
        if not (task.folder / name).exists():
            problems.append(f"{task.name}: no {name}")
    for script in ("oracle", "prepare"):
        path = task.folder / script
        if path.exists() and not os.access(path, os.X_OK):
            problems.append(f"{task.name}: {script} is not executable")
    if not task.wrong:
        problems.append(f"{task.name}: no wrong/*.json (a wrong solution the oracle must fail)")
    if not task.sessions("gaming"):
        problems.append(f"{task.name}: no gaming/*.json (a reward-hacking session it must fail)")
    if len(task.sessions("alternative")) < MIN_ALTERNATIVES:
        problems.append(
            f"{task.name}: fewer than {MIN_ALTERNATIVES} alternative/*.json (correct solutions "
            "unlike the reference, which it must pass)"
        )
    return problems


def prepare_workspace(task: Task, workspace: Path, private: Path | None = None) -> None:
    """A fresh copy of the task's workspace at `workspace`, with `prepare` run in it. The
    script runs from a copy in `private` (a temporary folder when None), so nothing but this
    process reads the task folder itself."""
    if workspace.exists():
        shutil.rmtree(workspace)
    shutil.copytree(
        task.folder / "workspace", workspace, ignore=shutil.ignore_patterns("__pycache__")
    )
    prepare = task.folder / "prepare"  # a Python script, like the oracle
    if not prepare.exists():
        return

    with tempfile.TemporaryDirectory(prefix="epistemic-prepare-", dir=private) as folder:
        copy = Path(folder) / "prepare"
        shutil.copyfile(prepare, copy)
        done = _run([sys.executable, "-B", str(copy)], workspace, PREPARE_TIMEOUT)
    if done.returncode != 0:
        raise TaskError(f"{task.name}: prepare failed: {_tail(done)}")


class Pristine:
    """Each task's workspace as `prepare` leaves it, built once per run in a private folder
    (`root`, hidden from every agent) and copied from there: into each fresh workspace, and
    into each judge's folder as the truth to compare with."""

    def __init__(self, within: Path | None = None) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="epistemic-pristine-", dir=within))
        self._lock = threading.Lock()
        self._locks: dict[str, threading.Lock] = {}
        self._built: dict[str, Path] = {}

    def copy(self, task: Task, target: Path) -> None:
        """A fresh copy of the task's prepared workspace at `target` (TaskError: prepare
        failed)."""
        source = self._build(task)
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(source, target, symlinks=True)

    def _build(self, task: Task) -> Path:
        with self._lock:
            lock = self._locks.setdefault(task.name, threading.Lock())
        with lock:
            if task.name not in self._built:
                folder = self.root / task.name
                prepare_workspace(task, folder / "workspace", folder)
                self._built[task.name] = folder / "workspace"
            return self._built[task.name]

    def remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def _run(argv: list[str], cwd: Path, timeout: float) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            argv, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(argv, 124, "", f"timed out after {timeout:g} s")
    except OSError as error:
        return subprocess.CompletedProcess(argv, 126, "", f"cannot run: {error}")


def _tail(done: subprocess.CompletedProcess[str]) -> str:
    """The last non-empty line the script printed (its verdict)."""
    lines = [line.strip() for line in (done.stdout + "\n" + done.stderr).splitlines()]
    return next((line for line in reversed(lines) if line), "")[:500]
