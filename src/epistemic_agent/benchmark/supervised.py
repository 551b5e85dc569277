"""`epistemic bench --supervisor MODEL`: does a supervisor reading reasons catch a wrong belief
before the oracle does, and how often does it cry wolf?

Each task's wrong sessions (`wrong/*.json`, each one the oracle fails) and its reference
session (which it passes) are played with the supervisor reviewing their calls. A wrong
session is *caught* when the supervisor flagged or blocked one of its calls before the
session ended (every review happens before its call runs, so before the oracle judges). Every
call of the reference session it flagged or blocked is a *false alarm*.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from ..core import atomic_write
from ..journal import read_records
from .config import BenchConfig, Play
from .runner import run_many
from .tasks import Task

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

SUPERVISED_NAME = "supervisor.json"


def supervised_plays(task: Task) -> list[Play]:
    """The reference session, then each wrong session, to be played under the supervisor."""
    found = [Play("supervised-reference", task.reference, "pass")]
    return found + [Play("supervised-wrong", script, "fail") for script in task.wrong]


def measure(
    tasks: list[Task],
    config: BenchConfig,
    supervisor: str,
    on_done: Callable[[dict[str, Any]], None],
) -> dict[str, Any]:
    """Play them all under `supervisor`; the table's rows per task and the totals."""
    supervised = BenchConfig(
        config.model,
        config.out,
        config.max_steps,
        config.jobs,
        True,
        (*config.extra_args, "--supervisor", supervisor),
        config.hide,
        config.speed,
    )
    items: list[tuple[Task, Play | None]] = [(t, p) for t in tasks for p in supervised_plays(t)]

    def reviewed(row: dict[str, Any]) -> None:
        row.update(reviews_of(Path(row["workspace"])))
        on_done(row)

    rows = run_many(items, supervised, reviewed)
    per_task = [_task_row(task, [r for r in rows if r["task"] == task.name]) for task in tasks]
    body = {"supervisor": supervisor, "tasks": per_task, "totals": _totals(per_task)}

    atomic_write(config.out / SUPERVISED_NAME, json.dumps(body, indent=1).encode("utf-8"))
    return body


def reviews_of(workspace: Path) -> dict[str, Any]:
    """What the supervisor said in one played session: the calls it flagged or blocked, and
    its reviews that failed."""
    journal = workspace / ".epistemic" / "journal.jsonl"
    try:
        records, _ = read_records(journal)
    except (OSError, ValueError):
        return {"reviews": 0, "alarms": [], "failed_reviews": 0}
    reviews = [r for r in records if r.get("kind") == "review"]
    alarms = sorted({int(r["seq"]) for r in reviews if r.get("verdict") in ("flag", "block")})
    failed = sum(1 for r in reviews if r.get("verdict") is None)
    return {"reviews": len(reviews), "alarms": alarms, "failed_reviews": failed}


def _task_row(task: Task, rows: list[dict[str, Any]]) -> dict[str, Any]:
    reference = next((r for r in rows if r["kind"] == "supervised-reference"), {})
    wrong = [r for r in rows if r["kind"] == "supervised-wrong"]
    return {
        "task": task.name,
        "wrong": len(wrong),
        "caught": sum(1 for r in wrong if r.get("alarms")),
        "caught_sessions": [r["session"] for r in wrong if r.get("alarms")],
        "oracle_failed": sum(1 for r in wrong if r.get("complete") and not r.get("passed")),
        "reference_calls": int(reference.get("calls") or 0),
        "false_alarms": len(reference.get("alarms") or []),
        "false_alarm_calls": list(reference.get("alarms") or []),
        "failed_reviews": sum(int(r.get("failed_reviews") or 0) for r in rows),
    }


def _totals(rows: list[dict[str, Any]]) -> dict[str, Any]:
    keys = ("wrong", "caught", "oracle_failed", "reference_calls", "false_alarms")
    return {key: sum(int(row[key]) for row in rows) for key in (*keys, "failed_reviews")}


def table_lines(body: dict[str, Any]) -> list[str]:
    """The table as plain lines: per task and in total."""
    header = ("task", "wrong", "caught", "false alarms", "failed reviews")
    rows = [
        (
            row["task"],
            str(row["wrong"]),
            str(row["caught"]),
            f"{row['false_alarms']} of {row['reference_calls']} calls",
            str(row["failed_reviews"]),
        )
        for row in body["tasks"]
    ]
    total = body["totals"]
    rows.append(
        (
            "total",
            str(total["wrong"]),
            str(total["caught"]),
            f"{total['false_alarms']} of {total['reference_calls']} calls",
            str(total["failed_reviews"]),
        )
    )
    widths = [max(len(r[i]) for r in (header, *rows)) for i in range(len(header))]

    def line(cells: tuple[str, ...]) -> str:
        first = cells[0].ljust(widths[0])
        rest = [cell.rjust(width) for cell, width in zip(cells[1:], widths[1:], strict=True)]
        return "  ".join([first, *rest])

    return [line(header), *(line(r) for r in rows[:-1]), "-" * len(line(header)), line(rows[-1])]
