"""Judging a finished workspace: the judge's private folder, the oracle's run, its verdict.

Each task run gets a private folder (`Private`) made before the agent starts and hidden from
every act. The agent's session sees nothing of the task folder: the scripted model's file and
`prepare` are copied there first. Only after the session has ended does `judge()` copy the
oracle, its data, judgelib and a pristine rebuild of the workspace into it, and run the oracle
from there with a small, fixed environment (never EPISTEMIC_EXPLAIN_ORACLE, unless a maintainer
asked for explanations in `--check-oracles`).

The oracle's exit status and last line say what it decided: exit 0 with `PASS: ...`, exit 1
with `FAIL: ...`; exit 4 with `ENVIRONMENT ERROR: ...` is an environment error (the tasks'
`python3` does not run where the agent's code runs: judgerun.check_environment); anything else
(a crash, a time-out, no verdict line) is an oracle error. Neither error is a verdict on the
agent.

Before any agent starts, `judging_environment` finds the tasks' `python3` (interpreter.py)
and runs it through the launcher as the oracles will: a machine that cannot judge is said so
once, and no agent runs for nothing.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from functools import cache
from pathlib import Path

from ..core import struct
from .hiding import git_folders, task_copies
from .interpreter import Unusable, machine_python
from .readable import allow_list
from .tasks import Pristine, Task, TaskError, prepare_workspace

ORACLE_TIMEOUT = 900.0  # hang protection only: each run of the agent's code has its budget
HERE = Path(__file__).resolve().parent
JUDGELIB = HERE / "judgelib.py"
JUDGE_FILES = ("judgelib.py", "judgerun.py")  # standard library only, beside the oracle
ENVIRONMENT_EXIT = 4  # judgelib.main: the judging environment failed


@struct
class Verdict:
    """What the oracle decided: passed, its last line, and an oracle error or an environment
    error (both None when it decided at all)."""

    passed: bool
    line: str
    error: str | None = None
    environment: str | None = None


def environment_verdict(why: str) -> Verdict:
    """The judging environment failed (why): no verdict on the agent."""
    return Verdict(False, f"ERROR: the judging environment: {why}", None, why)


class Private:
    """A task run's private folders: `root` (hidden from the agent's acts and, later, from the
    code the oracle runs) and `scratch` (where the oracle's runs of the agent's code go). In a
    batch both lie in the batch's own folders (`Batch`), which every agent of the batch is
    hidden from, whenever their contents are made."""

    def __init__(self, within: Batch | None = None) -> None:
        judges, scratch = (within.judges, within.scratch) if within else (None, None)
        self.shared = scratch  # the batch's scratch folder, shared with other runs
        self.root = Path(tempfile.mkdtemp(prefix="epistemic-judge-", dir=judges))
        self.scratch = Path(tempfile.mkdtemp(prefix="epistemic-scratch-", dir=scratch))
        for name in ("session", "judge", "tmp", "home"):
            (self.root / name).mkdir()

    def session_copy(self, source: Path) -> Path:
        """A copy of a file the session process itself reads (the scripted model's turns)."""
        target = self.root / "session" / source.name
        shutil.copyfile(source, target)
        return target

    def remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)
        if self.shared is None:
            shutil.rmtree(self.scratch, ignore_errors=True)
            return
        # In a batch the empty folder stays until the batch ends: other runs' code is hidden
        # from it by name, and a name that vanished between listing and hiding would fail them.
        for entry in list(self.scratch.iterdir()):
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry, ignore_errors=True)
            else:
                entry.unlink(missing_ok=True)


class Batch:
    """The folders of one batch of task runs, made before any agent starts: `judges` (every
    run's private folder, and each task's pristine build) and `scratch` (the oracles' runs of
    the agent's code). Every agent is hidden from both; the code an oracle runs from `judges`
    and from the other runs' scratch folders."""

    def __init__(self) -> None:
        self.judges = Path(tempfile.mkdtemp(prefix="epistemic-bench-"))
        self.scratch = Path(tempfile.mkdtemp(prefix="epistemic-bench-scratch-"))
        self.pristine = Pristine(self.judges)

    @property
    def hidden(self) -> tuple[str, ...]:
        return (str(self.judges), str(self.scratch))

    def remove(self) -> None:
        shutil.rmtree(self.judges, ignore_errors=True)
        shutil.rmtree(self.scratch, ignore_errors=True)


def judge(
    task: Task,
    workspace: Path,
    private: Private,
    hidden: tuple[str, ...] = (),
    speed: float | None = None,
    explain: bool = False,
    pristine: Pristine | None = None,
) -> Verdict:
    """Copy the oracle in, run it on the finished workspace, read its verdict."""

    folder = private.root / "judge"
    try:
        _lay_out(task, folder)
        if pristine is not None:
            pristine.copy(task, folder / "pristine")
        else:
            prepare_workspace(task, folder / "pristine", private.root / "tmp")
    except (OSError, TaskError) as error:
        return Verdict(False, f"oracle error: cannot set up the judge: {error}", str(error))
    try:
        env = oracle_env(private, (str(private.root), *hidden), speed, explain)
    except Unusable as error:
        return environment_verdict(str(error))
    argv = [sys.executable, "-I", "-B", str(folder / "oracle"), str(workspace)]
    try:
        done = subprocess.run(
            argv,
            cwd=workspace,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=ORACLE_TIMEOUT * (speed or 1.0),
            check=False,
        )
    except subprocess.TimeoutExpired:
        why = f"the oracle did not finish within {ORACLE_TIMEOUT * (speed or 1.0):g} s"
        return Verdict(False, f"oracle error: {why}", why)
    except OSError as error:
        return Verdict(False, f"oracle error: cannot run it: {error}", str(error))
    return verdict_of(done.returncode, done.stdout, done.stderr)


def _lay_out(task: Task, folder: Path) -> None:
    """The oracle, its data and judgelib, copied from the task folder (after the session)."""
    shutil.copyfile(task.folder / "oracle", folder / "oracle")
    data = task.folder / "oracle-data"
    if data.is_dir():
        shutil.copytree(data, folder / "oracle-data", ignore=shutil.ignore_patterns("__pycache__"))
    for name in JUDGE_FILES:
        shutil.copyfile(HERE / name, folder / name)


def oracle_env(
    private: Private, hidden: tuple[str, ...], speed: float | None, explain: bool
) -> dict[str, str]:
    """The oracle's whole environment: the agent's PATH (readable.py), nothing inherited."""
    reads = allow_list(None)
    env = {
        "PATH": reads.path_env,
        "HOME": str(private.root / "home"),
        "TMPDIR": str(private.root / "tmp"),
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "PYTHONDONTWRITEBYTECODE": "1",
        "EPISTEMIC_JUDGE_LAUNCHER": json.dumps(launcher_argv()),
        "EPISTEMIC_JUDGE_HIDE": json.dumps(list(hidden)),
        "EPISTEMIC_JUDGE_SCRATCH": str(private.scratch),
        "EPISTEMIC_JUDGE_PYTHON3": python3(),
        "EPISTEMIC_JUDGE_READABLE": json.dumps(reads.paths),
    }
    if private.shared is not None:
        env["EPISTEMIC_JUDGE_SHARED"] = str(private.shared)
    if speed is not None:
        env["EPISTEMIC_JUDGE_SPEED"] = f"{speed:.3f}"
    if explain:
        env["EPISTEMIC_EXPLAIN_ORACLE"] = "1"
    return env


def python3() -> str:
    """The tasks' interpreter (interpreter.py): the machine's, never this tool's environment."""
    return machine_python().path


def launcher_argv() -> list[str]:
    """How judgelib starts the launcher: this interpreter, isolated, importing this copy of
    the package (its path is the package's, never the judge's)."""
    package_root = str(Path(__file__).resolve().parents[2])
    source = (
        f"import sys; sys.path.insert(0, {package_root!r}); "
        "from epistemic_agent.benchmark.launcher import main; main()"
    )
    return [sys.executable, "-I", "-S", "-B", "-c", source]


def verdict_of(code: int, stdout: str, stderr: str) -> Verdict:
    """Exit 0 with PASS or exit 1 with FAIL is a verdict; exit 4 with ENVIRONMENT ERROR an
    environment error; anything else an oracle error."""
    lines = [line.strip() for line in stdout.splitlines() if line.strip()]
    last = lines[-1][:500] if lines else ""
    if code == 0 and last.startswith("PASS:"):
        return Verdict(True, last)
    if code == 1 and last.startswith("FAIL:"):
        return Verdict(False, last)
    if code == ENVIRONMENT_EXIT and last.startswith("ENVIRONMENT ERROR:"):
        return environment_verdict(last.removeprefix("ENVIRONMENT ERROR:").strip())
    errors = [line.strip() for line in stderr.splitlines() if line.strip()]
    why = last.removeprefix("ORACLE ERROR:").strip() or (errors[-1] if errors else "")
    why = why[:400] or "no verdict line"
    return Verdict(False, f"oracle error: exit {code}: {why}", why)


@struct(frozen=True)
class Judging:
    """The judging environment as checked before any agent starts: the tasks' interpreter, how
    much slower than the reference machine this one is, or why it cannot judge (`problem`)."""

    python3: str | None
    speed: float
    problem: str | None = None


#: Run in the oracle's environment: the tasks' python3 through the launcher, then the speed.
READY = (
    "import sys; sys.path.insert(0, sys.argv[1]); import judgelib as j\n"
    "try:\n"
    "    j.check_environment()\n"
    "except j.EnvironmentFault as fault:\n"
    "    print('ENVIRONMENT ERROR:', fault); sys.exit(4)\n"
    "print(j.speed() if sys.argv[2] == 'measure' else 1.0)\n"
)


def judging_environment(speed: float | None = None) -> Judging:
    """Find the tasks' `python3` and run it through the launcher as an oracle will; measure the
    machine's slowness with it (judgelib.speed) unless `speed` is given. Asked once per PATH."""
    return _judging(speed, os.environ.get("PATH", ""))


@cache
def _judging(speed: float | None, _path: str) -> Judging:
    try:
        python = machine_python()
    except Unusable as error:
        return Judging(None, speed or 1.0, str(error))
    private = Private()
    try:
        env = oracle_env(private, (str(private.root),), None, False)
        wanted = "measure" if speed is None else "given"
        argv = [sys.executable, "-I", "-B", "-c", READY, str(JUDGELIB.parent), wanted]
        try:
            done = subprocess.run(
                argv, env=env, capture_output=True, text=True, timeout=300, check=False
            )
        except subprocess.TimeoutExpired:
            why = f"python3 ({python.path}) did not run through the launcher within 300 s"
            return Judging(python.path, speed or 1.0, why)
    finally:
        private.remove()
    said = verdict_of(done.returncode, done.stdout, "")
    if said.environment is not None:
        return Judging(python.path, speed or 1.0, said.environment)
    try:  # a launcher that cannot start here is each oracle's error to report
        measured = float(done.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        measured = 1.0
    return Judging(python.path, speed if speed is not None else max(1.0, measured))


def measure_speed() -> float:
    """The machine's slowness against the reference one (judging_environment)."""
    return judging_environment().speed


def run_oracle(task: Task, workspace: Path, explain: bool = False) -> tuple[bool, str]:
    """The task's judge on a finished workspace (laid out as `epistemic bench` does): passed,
    and its verdict line (an oracle error never passes)."""
    batch = Batch()
    try:
        private = Private(batch)
        copies = [task.folder.parent, *task_copies()]
        hidden = (str(batch.judges), *map(str, copies), *map(str, git_folders(copies)))
        verdict = judge(task, workspace, private, hidden, measure_speed(), explain, batch.pristine)
    finally:
        batch.remove()
    return verdict.passed, verdict.line
