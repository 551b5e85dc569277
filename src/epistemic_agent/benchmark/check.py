"""`epistemic bench --check-oracles`: every oracle tested both ways, through the real runner.

Each task's scripted sessions are played as an agent would be run (hidden from the benchmark's
files, watched, judged after the session): its reference and its alternative solutions must
pass; its wrong solutions and its gaming sessions (careless and reward-hacking moves) must fail.
A row is as labelled (`ok`) only when the session ran to its end, the oracle decided (an oracle
error is never as labelled) and its verdict is the one expected.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from ..core import atomic_write
from ..providers import ScriptError, load_script
from .config import BenchConfig, Play
from .runner import run_many
from .tasks import SESSIONS, Task

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

KINDS = ("reference", "alternative", "wrong", "gaming")
CHECK_NAME = "check-oracles.json"


def plays(task: Task) -> list[Play]:
    """The task's sessions, reference first."""
    found = [Play("reference", task.reference, "pass")]
    for kind in ("alternative", "wrong", "gaming"):
        found += [Play(kind, script, SESSIONS[kind]) for script in task.sessions(kind)]
    return found


def malformed(play: Play) -> str | None:
    """Why a session file cannot be played (the scripted model's own check), or None."""
    try:
        load_script(play.script)
    except ScriptError as error:
        return str(error)
    return None


def check_oracles(
    tasks: list[Task], config: BenchConfig, on_done: Callable[[dict[str, Any]], None]
) -> list[dict[str, Any]]:
    """Play every session of every task; one row each, with `ok`."""
    items: list[tuple[Task, Play | None]] = []
    rows: list[dict[str, Any]] = []
    for task in tasks:
        for play in plays(task):
            problem = malformed(play)
            if problem is None:
                items.append((task, play))
                continue
            row = _row(task, play, verdict=f"malformed session: {problem}", error=problem)
            rows.append(row)
            on_done(row)

    def judged(row: dict[str, Any]) -> None:
        row["ok"] = as_labelled(row)
        on_done(row)

    rows += run_many(items, config, judged)
    order = {(task.name, play.kind, play.script.stem): n for n, (task, play) in _indexed(tasks)}
    rows.sort(key=lambda row: order.get((row["task"], row["kind"], row["session"]), 0))
    _save(config.out, rows)
    return rows


def _indexed(tasks: list[Task]) -> list[tuple[int, tuple[Task, Play]]]:
    return list(enumerate((task, play) for task in tasks for play in plays(task)))


def _row(task: Task, play: Play, *, verdict: str, error: str) -> dict[str, Any]:
    return {
        "task": task.name,
        "kind": play.kind,
        "session": play.script.stem,
        "expect": play.expect,
        "passed": False,
        "verdict": verdict,
        "session_error": error,
        "complete": False,
        "ok": False,
    }


def as_labelled(row: dict[str, Any]) -> bool:
    """Ran to its end, judged, and the verdict the label asks for."""
    if not row.get("complete") or row.get("oracle_error") or row.get("session_error"):
        return False
    return bool(row.get("passed")) == (row.get("expect") == "pass")


def _save(out: Path, rows: list[dict[str, Any]]) -> None:
    body = {"plays": rows, "ok": all(row.get("ok") for row in rows)}
    atomic_write(out / CHECK_NAME, json.dumps(body, indent=1).encode("utf-8"))
