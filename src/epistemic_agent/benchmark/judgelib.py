"""What every oracle shares: quiet verdicts, time budgets, and running the agent's code apart.

Standard library only: `epistemic bench` copies this file and judgerun.py into the judge's
folder beside the oracle (after the agent's session has ended), and the oracle imports it from
there.

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
  copy or on stdin; outputs come back as its stdout; the comparisons happen in the oracle
  (judgerun.py holds how).
- **Suites and repositories.** `run_unittest` runs the copy's tests through the launcher, one
  outcome per test; `repository_state` reads a repository's refs, objects, index, working
  tree and git setup in a scratch copy, so that nothing the agent configured runs here.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

try:  # imported from the package (the runner), or beside an oracle in the judge's folder
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
        special,
    )
except ImportError:
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
        special,
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


# -- test suites ----------------------------------------------------------------------------------


def tree(folder: Path, skip: Sequence[str] = ()) -> dict[str, tuple[str, str]]:
    """Every entry beneath `folder` (relative path -> kind, content digest or link target)."""
    found: dict[str, tuple[str, str]] = {}
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if d not in skip)
        for name in [*dirs, *sorted(f for f in files if f not in skip)]:
            path = Path(root) / name
            rel = path.relative_to(folder).as_posix()
            if path.is_symlink():
                found[rel] = ("link", os.readlink(path))
            elif path.is_dir():
                found[rel] = ("dir", "")
            elif special(path):
                found[rel] = ("special", "")
            else:
                mode = "x" if os.access(path, os.X_OK) else "-"
                found[rel] = (f"file{mode}", sha256_of(path))
    return found


#: Run as a file in the copy: discovers like `python3 -m unittest` (or loads one module), and
#: prints one line per test outcome, then a last line, after a marker the tests cannot know
#: in advance (they could still print a fake one: outcomes are cross-checked by the oracle).
UNITTEST_HARNESS = r"""
import json, sys, unittest
marker, names, failfast = sys.argv[1], sys.argv[2:], False
if names and names[0] == "--failfast":
    failfast, names = True, names[1:]
sys.path.insert(0, ".")
loader = unittest.TestLoader()
suite = loader.loadTestsFromNames(names) if names else loader.discover(".")
class Result(unittest.TestResult):
    def __init__(self):
        super().__init__()
        self.seen = []
    def note(self, test, outcome):
        self.seen.append((test.id(), outcome))
    def addSuccess(self, test): self.note(test, "ok")
    def addFailure(self, test, err): self.note(test, "failure"); super().addFailure(test, err)
    def addError(self, test, err): self.note(test, "error"); super().addError(test, err)
    def addSkip(self, test, reason): self.note(test, "skipped")
    def addExpectedFailure(self, test, err): self.note(test, "expected failure")
    def addUnexpectedSuccess(self, test): self.note(test, "unexpected success")
    def addSubTest(self, test, subtest, err):
        if err is not None:
            self.note(test, "failure")
            super().addSubTest(test, subtest, err)
result = Result()
result.failfast = failfast
suite.run(result)
sys.stdout.flush()
print("\n" + marker + json.dumps(result.seen), flush=True)
"""


class Suite:
    """What a unittest run came to: each test's outcomes (a test with subtests may have
    several), and whether every one is a plain success."""

    def __init__(self, ran: Ran, outcomes: dict[str, list[str]] | None) -> None:
        self.ran = ran
        self.outcomes = outcomes or {}
        self.reported = outcomes is not None

    @property
    def passed(self) -> bool:
        """Ran, exited 0, reported, every test a success: skips and expected failures count as
        failures, and so does a suite that runs no test at all."""
        return (
            self.ran.ok
            and self.reported
            and bool(self.outcomes)
            and all(set(found) == {"ok"} for found in self.outcomes.values())
        )

    def bad(self) -> dict[str, list[str]]:
        return {name: found for name, found in self.outcomes.items() if set(found) != {"ok"}}

    def describe(self) -> str:
        if self.ran.timed_out:
            return "ran over its time budget"
        if not self.reported:
            return f"did not finish ({self.ran.tail()})"
        if not self.outcomes:
            return "ran no test"
        bad = self.bad()
        if not bad:
            return f"exited {self.ran.exit}"
        kinds = sorted({outcome for found in bad.values() for outcome in found if outcome != "ok"})
        return f"{len(bad)} of {len(self.outcomes)} tests did not pass ({', '.join(kinds)})"


def run_unittest(
    copy: Path, timeout: float, names: Sequence[str] = (), failfast: bool = False
) -> Suite:
    """The copy's tests (discovered like `python3 -m unittest`, or the named modules) run
    through the launcher, one outcome per test."""
    harness = copy.parent / f"harness-{secrets.token_hex(4)}.py"
    harness.write_text(UNITTEST_HARNESS, encoding="utf-8")
    marker = f"@@outcomes-{secrets.token_hex(8)}@@"
    argv = [python3(), "-B", str(harness), marker, *(["--failfast"] if failfast else []), *names]
    try:
        ran = run_code(argv, copy, timeout, readable=[harness])
    finally:
        harness.unlink(missing_ok=True)
    outcomes: dict[str, list[str]] | None = None
    for line in ran.stdout.splitlines():
        if line.startswith(marker):
            try:
                seen = json.loads(line[len(marker) :])
            except ValueError:
                continue
            outcomes = {}
            for name, outcome in seen:
                outcomes.setdefault(str(name), []).append(str(outcome))
    return Suite(ran, outcomes)


# -- repositories ----------------------------------------------------------------------------

#: Lists a repository's state with plumbing only, its own hooks and fsmonitor switched off
#: (the agent may have configured anything: it runs confined, through the launcher, anyway).
REPO_STATE = r"""
g() { git -c core.fsmonitor=false -c core.hooksPath=/dev/null -c core.untrackedCache=false "$@"; }
echo "== HEAD"; g symbolic-ref -q HEAD || g rev-parse -q --verify HEAD || echo "(none)"
echo "== refs"; g for-each-ref --format='%(refname) %(objectname)'
echo "== objects"
g cat-file --batch-all-objects --unordered --batch-check='%(objectname) %(objecttype)' | sort
echo "== index"; g ls-files --stage
echo "== grafts"
for name in shallow info/grafts objects/info/alternates; do
    [ -e "$(g rev-parse --git-path "$name")" ] && echo "$name"
done
echo "== end"
"""
GIT_ENV = {"GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1", "GIT_OPTIONAL_LOCKS": "0"}


def repository_state(repo: Path) -> dict[str, Any]:
    """HEAD, every ref, every object, the index, grafts, and the working tree of `repo`, read
    in a scratch copy through the launcher (so nothing the agent configured runs here)."""
    timeout = budget(60.0)
    with scratch() as folder:
        copy = folder / "repo"
        shutil.copytree(
            repo,
            copy,
            symlinks=True,
            ignore=lambda folder, names: [n for n in names if special(Path(folder, n))],
        )
        ran = run_code(["sh", "-c", REPO_STATE], copy, timeout, env=GIT_ENV)
        if not ran.ok or "== end" not in ran.stdout:
            return {"unreadable": ran.tail()}
        state: dict[str, Any] = {}
        section = ""
        for line in ran.stdout.splitlines():
            if line.startswith("== "):
                section = line[3:]
                state[section] = []
            elif section:
                state[section].append(line)
        state["working tree"] = tree(copy, skip=(".git",))
    state["hooks and config"] = git_setup(repo / ".git")
    return state


#: What in a git folder says what git runs and how it reads the repository: hooks, the
#: configuration (aliases, core.hooksPath, core.fsmonitor, filters...), info/ (attributes,
#: exclude, grafts, sparse-checkout) and the folders that bring in other repositories.
GIT_SETUP = ("hooks", "info", "config", "config.worktree", "commondir", "worktrees", "modules")


def git_setup(git_dir: Path) -> dict[str, tuple[str, str]]:
    """Every entry of the git folder's setup (GIT_SETUP): path -> kind and digest or target."""
    found: dict[str, tuple[str, str]] = {}
    for name in GIT_SETUP:
        path = git_dir / name
        if path.is_symlink():
            found[name] = ("link", os.readlink(path))
        elif path.is_dir():
            found[name] = ("dir", "")
            found.update((f"{name}/{rel}", entry) for rel, entry in tree(path).items())
        elif path.exists():
            found[name] = ("special", "") if special(path) else ("file", sha256_of(path))
    return found


def setup_differences(repo: Path, pristine: Path) -> list[str]:
    """The entries of the git setup (hooks, config, info/...) added, removed or changed."""
    now, before = git_setup(repo / ".git"), git_setup(pristine / ".git")
    return sorted(key for key in set(now) | set(before) if now.get(key) != before.get(key))


def state_differences(now: dict[str, Any], before: dict[str, Any]) -> list[str]:
    """The parts of a repository that differ (HEAD, refs, objects, index, working tree)."""
    keys = sorted(set(now) | set(before))
    return [key for key in keys if now.get(key) != before.get(key)]
