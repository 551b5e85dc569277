"""A session killed with SIGKILL at any moment of a call (before its declaration is written,
while its command runs, while its outcome is written): the act dies with it, nothing it would
have written later appears, and the next `epistemic exec` recovers the call into a journal that
`epistemic verify` calls intact, never tampered."""

from __future__ import annotations

import json
import random
import shutil
import signal
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from conftest import EPISTEMIC

pytestmark = pytest.mark.system  # 51 sessions killed mid-call, each act's tree checked

CHANGE = "Regenerate the build output the task asks for; it writes the workspace."
LOOK = "See what the killed session left behind before going on with the task."
RUNS = 1.0  # seconds the command runs
#: Output all along, in the background (for three times RUNS); the command itself ends after
#: RUNS; a background job and a process that left the act's process group each write a file
#: after twice RUNS: only something that outlived the call (or its session) can.
ACT = (
    f"(for i in $(seq 1 150); do echo output line $i; sleep {RUNS * 3 / 150}; done) & "
    f"(sleep {2 * RUNS}; touch late-background) & "
    f"setsid -f sh -c 'sleep {2 * RUNS}; touch late-escaped'; "
    f"sleep {RUNS}; echo done"
)
LATE = ("late-background", "late-escaped")
TRIALS = 51
PARALLEL = 8


def declared(ws: Path) -> bool:
    journal = ws / ".epistemic" / "journal.jsonl"
    try:
        return b'"kind":"call"' in journal.read_bytes()
    except FileNotFoundError:
        return False


def kill_at(process: subprocess.Popen[bytes], ws: Path, phase: int, rng: random.Random) -> float:
    """Kill the session in one of three phases; the time of the kill (wall clock)."""
    if phase == 0:  # from its start to about its declaration
        time.sleep(rng.uniform(0.0, 0.6))
    else:
        deadline = time.monotonic() + 30
        while not declared(ws) and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.005)
        # while the command runs, or about when it ends and its outcome is written
        time.sleep(rng.uniform(0.0, RUNS) if phase == 1 else RUNS + rng.uniform(-0.02, 0.08))
    killed = time.time()
    process.send_signal(signal.SIGKILL)
    process.wait()
    return killed


def trial(root: Path, number: int) -> str | None:
    """One kill; what went wrong, or None."""
    rng = random.Random(number)
    ws = root / f"trial-{number}"
    ws.mkdir()
    command = [EPISTEMIC, "exec", "-C", str(ws), "--type", "change-state", "--reason", CHANGE]
    process = subprocess.Popen(
        [*command, "--", ACT], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    killed = kill_at(process, ws, number % 3, rng)
    time.sleep(0.2)  # the next process recovers the call while a surviving act would still write
    after = [EPISTEMIC, "exec", "-C", str(ws), "--type", "collect-info", "--reason", LOOK]
    done = subprocess.run([*after, "--", "true"], capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        return f"trial {number}: the next exec failed: {done.stderr[-500:]}"
    checked = subprocess.run(
        [EPISTEMIC, "verify", str(ws), "--json"], capture_output=True, text=True, timeout=120
    )
    status = json.loads(checked.stdout)["status"] if checked.stdout else "no output"
    if checked.returncode != 0 or status != "intact":
        return f"trial {number} (phase {number % 3}): verify says {status}: {checked.stdout}"
    time.sleep(max(0.0, killed + 2 * RUNS + 0.5 - time.time()))  # what survived wrote by now
    late = [name for name in LATE if (ws / name).exists()]
    if late:
        return f"trial {number} (phase {number % 3}): {late} written after the kill"
    shutil.rmtree(ws, ignore_errors=True)
    return None


def test_a_session_killed_at_any_moment_leaves_no_act_and_an_intact_record(
    tmp_path: Path,
) -> None:
    with ThreadPoolExecutor(PARALLEL) as pool:  # about 25 s here: most of a trial is waiting
        problems = [p for p in pool.map(lambda n: trial(tmp_path, n), range(TRIALS)) if p]
    assert not problems, "\n".join(problems)
