"""The error root (core/errors.py): each error a command can end in maps to its documented exit
status (docs/cli.md, "Exit statuses") and its hint, through the one handler in `main`."""

from __future__ import annotations

import argparse
import ast
import inspect
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from conftest import EPISTEMIC
from epistemic_agent.agent.compaction import ContextTooSmall
from epistemic_agent.approvals.sessions import AmbiguousRequest
from epistemic_agent.benchmark.tasks import TaskError
from epistemic_agent.cli import app
from epistemic_agent.cli.config_merge import MergeError
from epistemic_agent.core.errors import (
    EpistemicError,
    ProviderError,
    SupervisorUnavailable,
    UsageError,
)
from epistemic_agent.core.identity import GitTimeout
from epistemic_agent.core.sshsig import SealError
from epistemic_agent.core.toml import TomlError
from epistemic_agent.execute.sandbox.confinement import ConfinementError
from epistemic_agent.journal.catalog import UnknownSession
from epistemic_agent.journal.log import JournalError
from epistemic_agent.journal.schema.parse import RecordError
from epistemic_agent.journal.sealing import NotSealed
from epistemic_agent.journal.sessions import ReadError
from epistemic_agent.journal.verify import Verification
from epistemic_agent.policy.rules import PolicyError
from epistemic_agent.policy.trust import TrustError
from epistemic_agent.providers.base import ModelSpecError
from epistemic_agent.providers.models import ModelConfigError
from epistemic_agent.providers.replay import ScriptError
from epistemic_agent.reports.trace.model import TraceError
from epistemic_agent.session.session import SessionNotOpen
from epistemic_agent.supervisor.script import SupervisorScriptError

SALVAGE = (
    "to continue after its last good line: `epistemic verify --salvage /w` (the damaged "
    "journal and its evidence are kept under .epistemic/damaged/)"
)


def ending_in(
    error: BaseException, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> tuple[int, str]:
    """`main`'s exit status and stderr when the command it runs raises `error`."""

    def handler(args: argparse.Namespace) -> int:
        raise error

    parser = argparse.ArgumentParser()
    parser.set_defaults(handler=handler)
    monkeypatch.setattr(app, "build_parser", lambda *args, **kwargs: parser)
    status = app.main([])
    return status, capsys.readouterr().err


CASES: list[tuple[Callable[[], BaseException], int, str]] = [
    (lambda: UsageError("--ticket is empty"), 2, "--ticket is empty"),
    (lambda: UnknownSession("no session 12ab"), 2, "no session 12ab"),
    (lambda: AmbiguousRequest("call 3 waits in 2 sessions"), 2, "call 3 waits in 2 sessions"),
    (lambda: PolicyError("p.toml:1: bad\np.toml:4: worse"), 2, "p.toml:1: bad\n|p.toml:4: worse"),
    (lambda: ReadError("no journal here"), 2, "no journal here"),
    (lambda: TraceError("a.py: no call changed it"), 2, "a.py: no call changed it"),
    (lambda: SealError("ssh-keygen not found"), 2, "ssh-keygen not found"),
    (lambda: GitTimeout("git took too long"), 2, "git took too long"),
    (lambda: TomlError("bad TOML"), 2, "bad TOML"),
    (lambda: ModelConfigError("models.toml: bad"), 2, "models.toml: bad"),
    (lambda: ScriptError("script s.json: bad"), 2, "script s.json: bad"),
    (lambda: ContextTooSmall("the window is too small"), 2, "the window is too small"),
    (lambda: SupervisorScriptError("verdicts: bad"), 2, "verdicts: bad"),
    (lambda: TaskError("no task 'x'"), 2, "no task 'x'"),
    (lambda: MergeError("not valid JSON"), 2, "not valid JSON"),
    (lambda: ModelSpecError("bad model spec"), 2, "bad model spec"),
    (lambda: SupervisorUnavailable("no key"), 2, "no key"),
    (lambda: ProviderError("no API key", status=401), 5, "no API key"),
    (lambda: NotSealed(Verification("tampered", 3, "ab", "line 2 edited")), 1, "line 2 edited"),
    (lambda: JournalError("the chain breaks at line 3"), 74, "the chain breaks at line 3"),
    (
        lambda: JournalError("the chain breaks", journal=Path("/w/.epistemic/journal.jsonl")),
        74,
        f"the chain breaks; {SALVAGE}",
    ),
    (lambda: TrustError(13, "trusted: cannot write"), 74, "[Errno 13] trusted: cannot write"),
    (lambda: ConfinementError(1, "cannot confine"), 74, "[Errno 1] cannot confine"),
    (lambda: FileNotFoundError(2, "No such file", "f"), 2, "[Errno 2] No such file: 'f'"),
    (lambda: PermissionError(13, "Permission denied"), 2, "[Errno 13] Permission denied"),
    (lambda: IsADirectoryError(21, "Is a directory"), 2, "[Errno 21] Is a directory"),
    (lambda: OSError(28, "No space left on device"), 74, "[Errno 28] No space left on device"),
    (lambda: KeyboardInterrupt(), 130, "interrupted"),
]


@pytest.mark.parametrize(("make", "status", "said"), CASES, ids=[c[2][:30] for c in CASES])
def test_each_error_ends_in_its_documented_status_and_lines(
    make: Callable[[], BaseException],
    status: int,
    said: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, err = ending_in(make(), monkeypatch, capsys)
    assert code == status
    assert err == "".join(f"epistemic: {line}\n" for line in said.split("\n|"))


def test_the_domain_errors_share_the_root() -> None:
    for made, _, _ in CASES:
        error = made()
        if not isinstance(error, (OSError, KeyboardInterrupt)) or isinstance(
            error, (TrustError, ConfinementError)
        ):
            assert isinstance(error, EpistemicError), type(error)
    # they are still what callers catch them as
    assert isinstance(TomlError("x"), ValueError) and isinstance(TrustError(1, "x"), OSError)


@pytest.mark.parametrize(
    "error",
    [ValueError("a bug"), RecordError("a writer's bug"), SessionNotOpen("open it first")],
)
def test_anything_else_is_a_bug_and_keeps_its_traceback(
    error: Exception, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(type(error)):
        ending_in(error, monkeypatch, capsys)


def test_main_has_one_handler_for_errors() -> None:
    tree = ast.parse(textwrap.dedent(inspect.getsource(app.main)))
    caught = [ast.unparse(h.type) for h in ast.walk(tree) if isinstance(h, ast.ExceptHandler)]
    assert caught == ["KeyboardInterrupt", "BrokenPipeError", "(EpistemicError, OSError)"]


def test_a_reader_that_goes_away_ends_in_141(tmp_path: Path) -> None:
    """`epistemic ... | head`: the output's reader leaves; the command exits 141, silently."""
    lines = "".join(f'"cat file{n}.txt"\n' for n in range(5000))
    reader = subprocess.Popen(
        [EPISTEMIC, "classify", "--batch"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=tmp_path,
    )
    assert reader.stdout is not None and reader.stdin is not None
    reader.stdout.close()  # the reader is gone before the first line is written
    _, err = reader.communicate(lines.encode(), timeout=120)
    assert reader.returncode == 141, err
    assert err == b""


def test_the_module_entry_point_exits_as_main_does(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "epistemic_agent.cli", "log", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr.startswith("epistemic: no journal at ")
