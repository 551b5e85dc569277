"""What the tests share: the repository root, the `epistemic` command and a runner for it,
workspace fixtures, and the fake model server with the clean environment its clients need.

The plain names (`ROOT`, `EPISTEMIC`, `cli_env`, `epistemic`, `epistemic_strict`, `eventually`,
`running_below`) are imported as `from conftest import ...`; pytest puts this folder on the
path (pyproject's `pythonpath`)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from fakeserver import FakeServer

ROOT = Path(__file__).resolve().parent.parent
EPISTEMIC = str(Path(sys.executable).with_name("epistemic"))
KEY = "test-key"  # the API key the fake model server's clients send
PROXY_VARS = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")
SDK_VARS = (
    "OPENAI_BASE_URL",
    "OPENAI_ORG_ID",
    "OPENAI_PROJECT_ID",
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_CUSTOM_HEADERS",
    "EPISTEMIC_MODEL",
    "EPISTEMIC_MODELS",
)


def cli_env(**overrides: str | None) -> dict[str, str]:
    """This process's environment for the `epistemic` command: no default model, and 300
    columns (rich folds lines at 80 when not on a terminal); `NAME=None` drops NAME."""
    env = {name: value for name, value in os.environ.items() if name != "EPISTEMIC_MODEL"}
    env["COLUMNS"] = "300"
    for name, value in overrides.items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    return env


def epistemic(
    *args: str,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
    input: str | None = None,
    timeout: float = 120,
    check: bool = False,
    no_traceback: bool = False,
) -> subprocess.CompletedProcess[str]:
    """Run the real `epistemic` command, its output captured as text, in `env` (by default
    `cli_env()`: no default model, wide columns); `check` raises on a non-zero exit,
    `no_traceback` fails the test when stderr shows a Python traceback."""
    done = subprocess.run(
        [EPISTEMIC, *args],
        cwd=cwd,
        env=cli_env() if env is None else env,
        input=input,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=check,
    )
    if no_traceback:
        assert "Traceback" not in done.stderr, done.stderr
    return done


def epistemic_strict(*args: str, **options: Any) -> subprocess.CompletedProcess[str]:
    """`epistemic(...)` for commands that must fail cleanly if they fail: never a traceback."""
    return epistemic(*args, no_traceback=True, **options)


def eventually(check: Callable[[], Any], what: str, seconds: float = 30) -> Any:
    """Poll `check` until it returns something true, and return that; fail after `seconds`."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if found := check():
            return found
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def running_below(pid: int, needle: str) -> bool:
    """Whether a process below `pid` (a child, a grandchild...) has `needle` in its command line
    (its arguments joined by spaces): a command a session started is running."""
    children: dict[int, list[int]] = {}
    commands: dict[int, str] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            command = (entry / "cmdline").read_bytes()
        except OSError:  # it ended meanwhile
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(parent, []).append(int(entry.name))
        commands[int(entry.name)] = command.replace(b"\0", b" ").decode(errors="replace")
    below = list(children.get(pid, []))
    while below:
        child = below.pop()
        if needle in commands.get(child, ""):
            return True
        below += children.get(child, [])
    return False


def pytest_sessionstart(session: pytest.Session) -> None:
    """Stop at once when a record or a git repository sits above the temporary folders: every
    workspace a test makes there would find it (the CLI takes the nearest one above as the
    workspace), and tests would fail far from the cause."""
    temp = Path(tempfile.gettempdir()).resolve()
    short = Path("/tmp").resolve()  # `short_tmp` makes folders there whatever TMPDIR says
    for folder in dict.fromkeys((temp, *temp.parents, short, *short.parents)):
        for marker in (".epistemic", ".git"):
            if (folder / marker).exists():
                pytest.exit(
                    f"{folder / marker} sits above every test's workspace (under {temp}) and "
                    "would capture them: remove it, or point TMPDIR elsewhere",
                    returncode=4,
                )


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Any:
    """Sessions a test of the default tier opens in this process (its fixtures' included) run
    unconfined, as on a machine with neither Landlock, namespaces nor bubblewrap, unless the
    test gives them a platform: the default tier must pass on such a machine too. Tests
    marked `system` keep what this machine has; so does the `epistemic` command."""
    if item.get_closest_marker("system") is not None:
        return (yield)
    with pytest.MonkeyPatch.context() as patch:
        unconfined(patch)
        return (yield)


def unconfined(patch: pytest.MonkeyPatch) -> None:
    """Make `Session.open` choose no confinement where it would detect the machine's."""
    from epistemic_agent import Session

    module = sys.modules[Session.__module__]  # where Session.open finds its platform
    detected = module.platform_for

    def platform_for(settings: Any) -> Any:
        if settings.platform is None and settings.enforce:
            return detected(type(settings)(enforce=False))
        return detected(settings)

    patch.setattr(module, "platform_for", platform_for)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """A fresh, empty workspace with no git repository: `tmp_path / "ws"`."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    return workspace


@pytest.fixture
def short_tmp() -> Iterator[Path]:
    """A fresh folder with a short path (`/tmp/t-XXXXXXXX`), for what must fit in 107 bytes, a
    Unix socket's address: `tmp_path` grows with the test's name and xdist's worker folder."""
    folder = Path(tempfile.mkdtemp(prefix="t-", dir="/tmp"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def systmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A `$TMPDIR` of the test's own, so that what a session writes there can be read back."""
    folder = tmp_path / "systmp"
    folder.mkdir()
    monkeypatch.setenv("TMPDIR", str(folder))
    return folder


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No proxy (the SDKs would send 127.0.0.1 through it), no stray SDK settings or models
    file, test keys. Modules that talk to a fake server use it for every test:
    `pytestmark = pytest.mark.usefixtures("clean_env")`."""
    for name in PROXY_VARS + SDK_VARS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "no-config"))
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)


@pytest.fixture
def server() -> Iterator[FakeServer]:
    """The fake model server (fakeserver.FakeServer), running on 127.0.0.1 for one test."""
    with FakeServer() as running:
        yield running


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
