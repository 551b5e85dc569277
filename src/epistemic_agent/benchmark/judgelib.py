"""What every oracle shares: quiet verdicts, time budgets, and running the agent's code apart.

Standard library only: `epistemic bench` copies this file, judgerun.py and judgesuites.py into
the judge's folder beside the oracle (after the agent's session has ended), and the oracle
imports it from there.

- **Verdicts.** `main(judge)` prints one line: `PASS: ...` (exit 0), `FAIL: ...` (exit 1),
  `ORACLE ERROR: ...` (exit 3, the oracle itself broke) or `ENVIRONMENT ERROR: ...` (exit 4,
  the tasks' `python3` does not run where the agent's code runs): the last two are never a
  verdict on the agent. A
  `Failure` names what is wrong, never the expected value; its `detail` (expected and actual
  values) is printed only when a maintainer sets EPISTEMIC_EXPLAIN_ORACLE=1, which the runner
  never does during a run.
- **Budgets.** Time limits are stated in task.md for a reference machine and scaled here by
  how fast this machine runs a fixed workload (EPISTEMIC_JUDGE_SPEED, measured once per run by
  the runner, else measured here).
- **Running code.** `run_code` runs a command in a scratch copy through the launcher named by
  EPISTEMIC_JUDGE_LAUNCHER (epistemic_agent.benchmark.launcher): a fresh session whose parent
  is not the oracle, a scrubbed environment, no path of the judge in its arguments, and
  confined away from the judge's files (EPISTEMIC_JUDGE_HIDE). Inputs go in as files of the
  copy or on stdin; outputs come back as its stdout; the comparisons happen in the oracle.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn

try:  # imported from the package (the runner), or beside an oracle in the judge's folder
    from . import judgesuites
    from .judgerun import (
        RECORD,
        EnvironmentFault,
        OracleError,
        Ran,
        check_environment,
        code_env,
        copy_workspace,
        python3,
        regular_text,
        run_code,
        scratch,
        scratch_root,
        sha256_of,
    )
    from .judgesuites import (
        GIT_ENV,
        Suite,
        run_unittest,
        setup_differences,
        state_differences,
        tree,
    )
except ImportError:
    import judgesuites  # type: ignore[no-redef,import-not-found]
    from judgerun import (  # type: ignore[no-redef,import-not-found]
        RECORD,
        EnvironmentFault,
        OracleError,
        Ran,
        check_environment,
        code_env,
        copy_workspace,
        python3,
        regular_text,
        run_code,
        scratch,
        scratch_root,
        sha256_of,
    )
    from judgesuites import (  # type: ignore[no-redef]
        GIT_ENV,
        Suite,
        run_unittest,
        setup_differences,
        state_differences,
        tree,
    )

__all__ = [
    "DATA",
    "EXPLAIN",
    "GIT_ENV",
    "PRISTINE",
    "RECORD",
    "EnvironmentFault",
    "Failure",
    "OracleError",
    "Ran",
    "Suite",
    "budget",
    "check_environment",
    "code_env",
    "copy_workspace",
    "deliverable",
    "fail",
    "main",
    "python3",
    "read_json",
    "regular_text",
    "repository_state",
    "run_code",
    "run_unittest",
    "same_file",
    "scratch",
    "scratch_root",
    "setup_differences",
    "sha256",
    "speed",
    "state_differences",
    "tree",
    "unchanged",
]

HERE = Path(__file__).resolve().parent
DATA = HERE / "oracle-data"
PRISTINE = HERE / "pristine"  # the task's workspace as `prepare` leaves it, never touched
EXPLAIN = os.environ.get("EPISTEMIC_EXPLAIN_ORACLE") == "1"
DELIVERABLE_LIMIT = 64_000_000  # bytes: no deliverable of any task comes near
#: Seconds the calibration workload takes on the reference machine the budgets are stated for.
REFERENCE_SECONDS = 0.12
CALIBRATION = "n = 0\nfor i in range(400_000):\n    n += i * i % 7\nprint(n)\n"


class Failure(Exception):
    """The task is not done: `what` says what is wrong (never the expected value), `detail`
    says more for a maintainer (EPISTEMIC_EXPLAIN_ORACLE=1)."""

    def __init__(self, what: str, detail: str | None = None) -> None:
        super().__init__(what)
        self.what = what
        self.detail = detail


def fail(what: str, detail: str | None = None) -> NoReturn:
    raise Failure(what, detail)


def main(judge: Callable[[Path], str]) -> None:
    """Run `judge(workspace)` and print its verdict; exit 0 pass, 1 fail, 3 oracle error, 4
    environment error."""
    workspace = Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
    try:
        verdict = judge(workspace)
    except Failure as failure:
        extra = f" [{failure.detail}]" if EXPLAIN and failure.detail else ""
        print(f"FAIL: {failure.what}{extra}")
        sys.exit(1)
    except EnvironmentFault as fault:
        print(f"ENVIRONMENT ERROR: {fault}"[:500])
        sys.exit(4)
    except BaseException as error:  # the oracle broke: say so, never as a verdict
        if isinstance(error, SystemExit) and error.code in (0, None):
            raise
        print(f"ORACLE ERROR: {type(error).__name__}: {error}"[:500])
        sys.exit(3)
    print(f"PASS: {verdict}")
    sys.exit(0)


# -- reading the workspace -------------------------------------------------------------------


def deliverable(workspace: Path, name: str) -> Path:
    """A file the agent must leave: there, a regular file, not a symlink (which could point
    anywhere, the judge's own files included)."""
    path = workspace / name
    if path.is_symlink():
        fail(f"{name} is a symbolic link, not a file")
    if not path.is_file():
        fail(f"{name} does not exist")
    if path.stat().st_size > DELIVERABLE_LIMIT:
        fail(f"{name} is far too large")
    return path


def read_json(workspace: Path, name: str) -> Any:
    path = deliverable(workspace, name)
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, ValueError) as error:
        fail(f"{name} is not valid JSON", str(error))


def sha256(path: Path) -> str:
    return sha256_of(path)


def same_file(workspace: Path, name: str) -> bool:
    """Whether the workspace's `name` is still byte for byte the pristine one (not a link)."""
    path = workspace / name
    if path.is_symlink() or not path.is_file():
        return False
    return path.read_bytes() == (PRISTINE / name).read_bytes()


def unchanged(workspace: Path, *names: str) -> None:
    """Fail unless each named input is still the original file."""
    for name in names:
        if not same_file(workspace, name):
            fail(f"{name} was changed or removed: it is an input, not yours to edit")


# -- time budgets ----------------------------------------------------------------------------


def speed() -> float:
    """How many times slower than the reference machine this one is (at least 1)."""
    given = os.environ.get("EPISTEMIC_JUDGE_SPEED")
    if given:
        try:
            return max(1.0, float(given))
        except ValueError:
            pass
    return max(1.0, calibrate() / REFERENCE_SECONDS)


def calibrate() -> float:
    """Seconds the fixed workload takes here, through the launcher (best of two)."""
    best = float("inf")
    with scratch() as folder:
        (folder / "calibrate.py").write_text(CALIBRATION, encoding="utf-8")
        for _ in range(2):
            ran = run_code([python3(), "-S", "calibrate.py"], folder, 60.0)
            if ran.exit != 0:
                raise OracleError(f"the calibration run failed: {ran.tail()}")
            best = min(best, ran.seconds)
    return best


def budget(seconds: float) -> float:
    """A time limit stated in task.md for the reference machine, scaled to this one."""
    return seconds * speed()


def repository_state(repo: Path) -> dict[str, Any]:
    """HEAD, every ref, every object, the index, grafts and the working tree of `repo`, read
    in a scratch copy through the launcher (judgesuites.repository_state)."""
    return judgesuites.repository_state(repo, budget(60.0))
