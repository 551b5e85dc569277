"""Running the agent's code apart from its judge (judgelib's engine; standard library only).

`run_code` runs a command in a scratch folder through the launcher named by
EPISTEMIC_JUDGE_LAUNCHER (epistemic_agent.benchmark.launcher): a fresh session whose parent is
not the oracle, a scrubbed environment, no path of the judge in its arguments, and confined away
from the judge's files (EPISTEMIC_JUDGE_HIDE). Inputs go in as files of the copy or on stdin;
outputs come back as its stdout and stderr; the comparisons happen in the oracle.

A run that went wrong is the agent's failure only if the environment is sound: the first time
one does, `check_environment` runs a one-line script with the same `python3`, in a scratch
folder of its own, confined the same way. When that fails too, the judging environment is at
fault (`EnvironmentFault`: the oracle reports an environment error, never a verdict).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import secrets
import select
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

#: What a scratch copy of the workspace leaves out: the record and caches.
RECORD = (".epistemic", "RATIONALE.md", "__pycache__")
MARGIN = 30.0  # seconds the oracle waits past a budget before it kills the supervisor
OUTPUT_LIMIT = 16_000_000  # bytes of each of the code's streams the oracle reads
FILE_LIMIT = 1 << 30  # the largest file the code may write (RLIMIT_FSIZE), its output included


class OracleError(Exception):
    """The oracle could not judge (a launcher that failed, data of its own that is broken)."""


class EnvironmentFault(Exception):
    """The judging environment failed, not the agent's work: the tasks' `python3` does not run
    where the agent's code runs."""


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


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


def others() -> list[str]:
    """The other runs' scratch folders beside this one's, when the runner shares a folder
    between them (EPISTEMIC_JUDGE_SCRATCH is then one entry of it): hidden from the code."""
    root = os.environ.get("EPISTEMIC_JUDGE_SCRATCH")
    if not root or os.environ.get("EPISTEMIC_JUDGE_SHARED") != str(Path(root).parent):
        return []
    mine = Path(root)
    try:
        return [str(entry) for entry in mine.parent.iterdir() if entry != mine]
    except OSError:
        return []


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
    """A copy of the finished workspace (links kept as links), without the record and without
    special files (a named pipe would hang the copy)."""
    target = into / "work"
    ignored = {*RECORD, *skip}

    def leave_out(folder: str, names: list[str]) -> list[str]:
        return [name for name in names if name in ignored or special(Path(folder, name))]

    shutil.copytree(workspace, target, symlinks=True, ignore=leave_out)
    return target


def special(path: Path) -> bool:
    """Neither a folder, a regular file nor a symlink: a pipe, a socket, a device."""
    try:
        mode = path.lstat().st_mode
    except OSError:
        return True
    return not (stat.S_ISDIR(mode) or stat.S_ISREG(mode) or stat.S_ISLNK(mode))


def regular_text(path: Path, limit: int = 4_000_000) -> str | None:
    """The text of a regular file that is not a link and not too large; None otherwise."""
    if path.is_symlink() or special(path) or not path.is_file():
        return None
    if path.stat().st_size > limit:
        return None
    return path.read_text(encoding="utf-8", errors="surrogateescape")


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
    readable: Sequence[Path] = (),
) -> Ran:
    """Run the agent's code (`argv`, in the scratch folder `cwd`) through the launcher. It may
    write `cwd`, its own temp folder and `writable`, nothing else, and read those, `readable`
    (a harness of the judge's) and the agent's allow-list. A run that went wrong in an
    environment that is not sound raises EnvironmentFault (check_environment)."""
    ran = _run(argv, cwd, timeout, stdin, env, fsize, writable, readable)
    if not ran.ok:
        check_environment()
    return ran


PROBE = "print('python3 runs')\n"
PROBE_TIMEOUT = 60.0
_sound = False  # check_environment succeeded in this process


def check_environment() -> None:
    """Raise EnvironmentFault unless the tasks' `python3` runs a one-line script through the
    launcher, confined as the agent's code is, in a fresh scratch folder the agent's code never
    touched. Once it has, never asked again in this process."""
    global _sound
    if _sound:
        return
    with scratch() as folder:
        work = folder / "work"
        work.mkdir()
        (work / "probe.py").write_text(PROBE, encoding="utf-8")
        ran = _run([python3(), "-B", "probe.py"], work, PROBE_TIMEOUT, b"", None, None, (), ())
    if ran.ok and ran.stdout.strip() == "python3 runs":
        _sound = True
        return
    if ran.timed_out:
        why = f"did not run a one-line script within {PROBE_TIMEOUT:g} s"
    else:
        why = f"cannot run a one-line script where the agent's code runs: {ran.tail()}"
    raise EnvironmentFault(f"python3 ({python3()}) {why}")


def _run(
    argv: list[str],
    cwd: Path,
    timeout: float,
    stdin: bytes,
    env: dict[str, str] | None,
    fsize: int | None,
    writable: Sequence[Path],
    readable: Sequence[Path],
) -> Ran:
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
                "fsize": FILE_LIMIT if fsize is None else fsize,
                "writable": [str(path) for path in writable],
                "confine": True,
                "hide": [*json.loads(os.environ.get("EPISTEMIC_JUDGE_HIDE") or "[]"), *others()],
                "readable": _readable([*writable, *readable]),
            }
            status = _launch(spec, (feed.fileno(), out.fileno(), err.fileno()), timeout)
        out.seek(0)
        err.seek(0)
        ran = Ran(status, out.read(OUTPUT_LIMIT), err.read(OUTPUT_LIMIT))
    shutil.rmtree(home, ignore_errors=True)
    return ran


def _readable(more: Sequence[Path]) -> list[str] | None:
    """What the code may read besides its copy and temp folder (EPISTEMIC_JUDGE_READABLE, the
    agent's allow-list), `more` added; None (everything) when unset."""
    given = os.environ.get("EPISTEMIC_JUDGE_READABLE")
    if not given:
        return None
    return [*json.loads(given), *(str(path) for path in more)]


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
    try:
        with os.fdopen(spec_write, "wb") as handle:
            handle.write(json.dumps(spec).encode())
    except BrokenPipeError:
        pass  # the launcher died before reading its spec: its missing outcome says so below
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
    with contextlib.suppress(OSError):
        os.kill(pid, signal.SIGKILL)
