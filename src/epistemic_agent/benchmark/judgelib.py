"""What every oracle shares: quiet verdicts, time budgets, and running the agent's code apart.

Standard library only: `epistemic bench` copies this file into the judge's folder beside the
oracle (after the agent's session has ended), and the oracle imports it from there.

- **Verdicts.** `main(judge)` prints one line: `PASS: ...` (exit 0), `FAIL: ...` (exit 1) or
  `ORACLE ERROR: ...` (exit 3, the oracle itself broke: never a verdict on the agent). A
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

import hashlib
import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NoReturn

HERE = Path(__file__).resolve().parent
DATA = HERE / "oracle-data"
PRISTINE = HERE / "pristine"  # the task's workspace as `prepare` leaves it, never touched
EXPLAIN = os.environ.get("EPISTEMIC_EXPLAIN_ORACLE") == "1"
#: Seconds the calibration workload takes on the reference machine the budgets are stated for.
REFERENCE_SECONDS = 0.12
CALIBRATION = "n = 0\nfor i in range(400_000):\n    n += i * i % 7\nprint(n)\n"
#: What a scratch copy of the workspace leaves out: the record, caches, the repository's own
#: git folder only where a task says so (see `copy_workspace`).
RECORD = (".epistemic", "RATIONALE.md", "__pycache__")
MARGIN = 30.0  # seconds the oracle waits past a budget before it kills the supervisor


class Failure(Exception):
    """The task is not done: `what` says what is wrong (never the expected value), `detail`
    says more for a maintainer (EPISTEMIC_EXPLAIN_ORACLE=1)."""

    def __init__(self, what: str, detail: str | None = None) -> None:
        super().__init__(what)
        self.what = what
        self.detail = detail


class OracleError(Exception):
    """The oracle could not judge (a launcher that failed, data of its own that is broken)."""


def fail(what: str, detail: str | None = None) -> NoReturn:
    raise Failure(what, detail)


def main(judge: Callable[[Path], str]) -> None:
    """Run `judge(workspace)` and print its verdict; exit 0 pass, 1 fail, 3 oracle error."""
    workspace = Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
    try:
        verdict = judge(workspace)
    except Failure as failure:
        extra = f" [{failure.detail}]" if EXPLAIN and failure.detail else ""
        print(f"FAIL: {failure.what}{extra}")
        sys.exit(1)
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
    return path


def read_json(workspace: Path, name: str) -> Any:
    path = deliverable(workspace, name)
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, ValueError) as error:
        fail(f"{name} is not valid JSON", str(error))


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


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
            else:
                mode = "x" if os.access(path, os.X_OK) else "-"
                found[rel] = (f"file{mode}", sha256(path))
    return found


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


# -- running the agent's code ----------------------------------------------------------------


class Ran:
    """What a run of the agent's code came to."""

    def __init__(self, status: dict[str, Any], stdout: bytes, stderr: bytes) -> None:
        self.exit: int | None = status.get("exit")
        self.signal: int | None = status.get("signal")
        self.timed_out = bool(status.get("timed_out"))
        self.seconds = float(status.get("seconds") or 0.0)
        self.confinement = str(status.get("confinement", "none"))
        self.stdout_bytes, self.stderr_bytes = stdout, stderr

    @property
    def ok(self) -> bool:
        return self.exit == 0 and not self.timed_out

    @property
    def stdout(self) -> str:
        return self.stdout_bytes.decode("utf-8", "replace")

    @property
    def stderr(self) -> str:
        return self.stderr_bytes.decode("utf-8", "replace")

    def tail(self) -> str:
        """The last line it printed (for explanations), or how it ended."""
        if self.timed_out:
            return "timed out"
        lines = [line.strip() for line in (self.stdout + "\n" + self.stderr).splitlines()]
        last = next((line for line in reversed(lines) if line), "")
        if self.signal is not None:
            return f"killed by signal {self.signal}" + (f": {last}" if last else "")
        return (last or f"exit {self.exit}")[:200]


def scratch_root() -> Path:
    """Where scratch copies go: a folder the code may write, apart from the judge's own."""
    root = os.environ.get("EPISTEMIC_JUDGE_SCRATCH") or tempfile.gettempdir()
    return Path(root)


@contextmanager
def scratch() -> Iterator[Path]:
    """A fresh folder with a neutral, random name for one run of the agent's code."""
    folder = scratch_root() / f"run-{secrets.token_hex(6)}"
    folder.mkdir(mode=0o700)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def copy_workspace(workspace: Path, into: Path, skip: Sequence[str] = ()) -> Path:
    """A copy of the finished workspace (links kept as links), without the record."""
    target = into / "work"
    ignored = {*RECORD, *skip}
    shutil.copytree(
        workspace,
        target,
        symlinks=True,
        ignore=lambda _folder, names: [name for name in names if name in ignored],
    )
    return target


def python3() -> str:
    """The `python3` the agent's commands get from PATH, as the real interpreter (a version
    manager's shim costs a few hundred milliseconds a start: asked once)."""
    global _python3
    if _python3 is None and os.environ.get("EPISTEMIC_JUDGE_PYTHON3"):
        _python3 = os.environ["EPISTEMIC_JUDGE_PYTHON3"]  # resolved once by the runner
    if _python3 is None:
        found = shutil.which("python3") or "python3"
        _python3 = found
        try:
            with open(found, "rb") as handle:
                script = handle.read(2) == b"#!"
        except OSError:
            script = False
        if script:
            done = subprocess.run(
                [found, "-c", "import sys; print(sys.executable)"],
                capture_output=True,
                text=True,
                timeout=60,
                check=False,
            )
            real = done.stdout.strip()
            if done.returncode == 0 and os.path.isfile(real):
                _python3 = real
    return _python3


_python3: str | None = None


def code_env(home: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    """The whole environment the agent's code gets."""
    env = {
        "PATH": os.environ.get("PATH") or "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(home),
        "TMPDIR": str(home),
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONHASHSEED": "0",
    }
    env.update(extra or {})
    return env


def run_code(
    argv: list[str],
    cwd: Path,
    timeout: float,
    *,
    stdin: bytes = b"",
    env: dict[str, str] | None = None,
    fsize: int | None = None,
    writable: Sequence[Path] = (),
) -> Ran:
    """Run the agent's code (`argv`, in the scratch folder `cwd`) through the launcher. It may
    write `cwd`, its own temp folder and `writable`, nothing else."""
    home = cwd.parent / f"home-{secrets.token_hex(4)}"  # cwd is a scratch folder's copy
    home.mkdir(mode=0o700, exist_ok=True)
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        with tempfile.TemporaryFile() as feed:
            feed.write(stdin)
            feed.seek(0)
            spec = {
                "argv": argv,
                "cwd": str(cwd),
                "tmp": str(home),
                "env": code_env(home, env),
                "timeout": timeout,
                "stdin": feed.fileno(),
                "stdout": out.fileno(),
                "stderr": err.fileno(),
                "fsize": fsize,
                "writable": [str(path) for path in writable],
                "confine": True,
                "hide": json.loads(os.environ.get("EPISTEMIC_JUDGE_HIDE") or "[]"),
            }
            status = _launch(spec, (feed.fileno(), out.fileno(), err.fileno()), timeout)
        out.seek(0)
        err.seek(0)
        ran = Ran(status, out.read(), err.read())
    shutil.rmtree(home, ignore_errors=True)
    return ran


def _launcher() -> list[str]:
    given = os.environ.get("EPISTEMIC_JUDGE_LAUNCHER")
    if given:
        return list(json.loads(given))
    return [sys.executable, "-I", "-m", "epistemic_agent.benchmark.launcher"]


def _launch(spec: dict[str, Any], fds: tuple[int, ...], timeout: float) -> dict[str, Any]:
    spec_read, spec_write = os.pipe()
    status_read, status_write = os.pipe()
    try:
        process = subprocess.Popen(
            [*_launcher(), str(spec_read), str(status_write)],
            pass_fds=(spec_read, status_write, *fds),
            stdin=subprocess.DEVNULL,
            env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C.UTF-8"},
            cwd="/",
        )
    except OSError as error:
        raise OracleError(f"cannot start the launcher: {error}") from None
    finally:
        os.close(spec_read)
        os.close(status_write)
    with os.fdopen(spec_write, "wb") as handle:
        handle.write(json.dumps(spec).encode())
    process.wait()
    lines = _read_status(status_read, timeout + MARGIN)
    found = [json.loads(line) for line in lines if line.strip()]
    final = next((line for line in reversed(found) if "supervisor" not in line), None)
    if final is None:
        for line in found:
            if "supervisor" in line:
                _kill(int(line["supervisor"]))
        raise OracleError("the launcher gave no outcome (it died, or the run hung past its budget)")
    if "error" in final:
        raise OracleError(str(final["error"]))
    return dict(final)


def _read_status(fd: int, wait: float) -> list[str]:
    """The status lines, until the supervisor closes the pipe or `wait` seconds pass."""
    import select

    chunks = []
    deadline = time.monotonic() + wait
    with os.fdopen(fd, "rb") as handle:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            ready, _, _ = select.select([handle], [], [], left)
            if not ready:
                break
            chunk = os.read(handle.fileno(), 65536)
            if not chunk:
                break
            chunks.append(chunk)
    return b"".join(chunks).decode("utf-8", "replace").splitlines()


def _kill(pid: int) -> None:
    import contextlib
    import signal

    with contextlib.suppress(OSError):
        os.kill(pid, signal.SIGKILL)


# -- running unittest suites -----------------------------------------------------------------

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
        ran = run_code(argv, copy, timeout)
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
    with scratch() as folder:
        copy = folder / "repo"
        shutil.copytree(repo, copy, symlinks=True)
        ran = run_code(["sh", "-c", REPO_STATE], copy, budget(60.0), env=GIT_ENV)
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
    return state


def state_differences(now: dict[str, Any], before: dict[str, Any]) -> list[str]:
    """The parts of a repository that differ (HEAD, refs, objects, index, working tree)."""
    keys = sorted(set(now) | set(before))
    return [key for key in keys if now.get(key) != before.get(key)]
