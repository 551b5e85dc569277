"""`epistemic approve` and `deny` say what the session did with the answer, read from its
journal: taken (exit 0), or why not, each with its own exit status (docs/policy.md): the
session never decided in time (5), it stopped or was never there (4), the request is closed
(1). Sessions wait in another process, paused or killed as a failing machine would."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import EPISTEMIC, epistemic_strict, eventually

CHANGE = "The report asks for a marker file; creating it is the change itself."
REQUEST = Path(".epistemic") / "pending" / "1.request.json"


@pytest.fixture
def asking(ws: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[subprocess.Popen[str]]:
    """A change-state call waiting for an unsigned answer in another process."""
    monkeypatch.setenv("HOME", str(ws.parent / "home"))  # no key: answers go unsigned
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    argv = [EPISTEMIC, "exec", "--type", "change-state", "--reason", CHANGE,
            "--approve", "mutating", "--", "touch made.txt"]  # fmt: skip
    process = subprocess.Popen(
        argv, cwd=ws, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    eventually((ws / REQUEST).exists, "the request")
    yield process
    if process.poll() is None:
        os.kill(process.pid, signal.SIGCONT)
        process.kill()
    process.communicate()


def records(ws: Path, kind: str) -> list[dict[str, Any]]:
    lines = (ws / ".epistemic" / "journal.jsonl").read_text().splitlines()
    return [record for line in lines if (record := json.loads(line))["kind"] == kind]


def one_line(done: subprocess.CompletedProcess[str]) -> str:
    assert done.stdout == "", done.stdout
    lines = done.stderr.splitlines()
    assert len(lines) == 1, lines
    return lines[0]


def test_a_taken_denial_says_who_denied_it_unsigned(
    ws: Path, asking: subprocess.Popen[str]
) -> None:
    done = epistemic_strict(
        "deny", "1", "--as", "qa", "--unsigned", "--comment", "wrong file", cwd=ws
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "call 1 denied by qa (unsigned: the policy takes unsigned answers); " \
        "the session recorded it\n"  # fmt: skip
    assert records(ws, "approval")[0]["decision"] == "denied"
    assert asking.wait(30) == 2 and not (ws / "made.txt").exists()


@pytest.mark.system  # end to end, slow for the default tier
def test_a_session_that_does_not_decide_in_time_is_not_reported_as_deciding(
    ws: Path, asking: subprocess.Popen[str]
) -> None:
    """The session is paused: the answer lies in its folder, unread. `approve` says it heard
    nothing (exit 5), and the answer still counts once the session goes on."""
    os.kill(asking.pid, signal.SIGSTOP)
    done = epistemic_strict("approve", "1", "--as", "qa", "--unsigned", "--wait", "0.5", cwd=ws)
    assert done.returncode == 5, done
    line = one_line(done)
    assert "recorded no verdict on the answer to call 1 within 0.5 s" in line
    assert "approved" not in line and records(ws, "approval") == []
    os.kill(asking.pid, signal.SIGCONT)
    assert asking.wait(30) == 0 and (ws / "made.txt").exists()
    assert records(ws, "approval")[0]["by"] == "qa"
    again = epistemic_strict("approve", "1", "--as", "qa", "--unsigned", cwd=ws)
    assert again.returncode == 1 and "answered already" in one_line(again)


def test_a_session_that_dies_before_its_verdict_is_reported_gone(
    ws: Path, asking: subprocess.Popen[str]
) -> None:
    os.kill(asking.pid, signal.SIGSTOP)
    waiting = subprocess.Popen(
        [EPISTEMIC, "approve", "1", "--as", "qa", "--unsigned", "--wait", "60"],
        cwd=ws, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    eventually((ws / ".epistemic" / "pending" / "1.answer.json").exists, "the answer")
    asking.kill()
    asking.wait(30)
    out, err = waiting.communicate(timeout=30)
    assert waiting.returncode == 4, (out, err)
    assert out == "" and "stopped before it recorded a verdict" in err
    assert not (ws / "made.txt").exists()


def test_a_request_whose_session_is_gone_is_reported_gone(
    ws: Path, asking: subprocess.Popen[str]
) -> None:
    asking.kill()
    asking.wait(30)
    done = epistemic_strict("approve", "1", "--as", "qa", "--unsigned", cwd=ws)
    assert done.returncode == 4 and "is gone" in one_line(done)
    assert not (ws / ".epistemic" / "pending" / "1.answer.json").exists()


@pytest.mark.parametrize(
    ("wait", "said"),
    [
        ("-1", "--wait -1: give 0 to 86400 seconds"),
        ("nan", "--wait nan: give 0 to 86400 seconds"),
        ("inf", "--wait inf: give 0 to 86400 seconds"),
        ("soon", "argument --wait: invalid float value: 'soon'"),
    ],
)
def test_a_bad_wait_is_a_usage_error(ws: Path, wait: str, said: str) -> None:
    done = epistemic_strict("approve", "1", "--wait", wait, cwd=ws)
    assert done.returncode == 2 and said in done.stderr.splitlines()[-1], done.stderr
