"""`epistemic bench --check-oracles`: the table of every scripted session against its label."""

from __future__ import annotations

import json
import sys

TYPE_CHECKING = False  # typing is not imported at run time: start-up cost
if TYPE_CHECKING:
    from typing import Any

    from .benchmark.runner import BenchConfig
    from .benchmark.tasks import Task


def check(tasks: list[Task], config: BenchConfig, as_json: bool) -> int:
    """Play them all; exit 0 when every session came out as labelled, 1 otherwise."""
    from .benchmark.check import CHECK_NAME, check_oracles, plays
    from .cli_bench import _progress

    total = sum(len(plays(task)) for task in tasks)
    try:
        with _progress(total) as advance:
            rows = check_oracles(tasks, config, advance)
    except KeyboardInterrupt:
        print("epistemic: interrupted", file=sys.stderr)
        return 130
    ok = all(row.get("ok") for row in rows)
    if as_json:
        print(json.dumps({"plays": rows, "ok": ok}, indent=1))
    else:
        _table(rows)
        print(
            f"{sum(bool(r.get('ok')) for r in rows)} of {len(rows)} as labelled; "
            f"details: {config.out / CHECK_NAME}"
        )
    return 0 if ok else 1


def _table(rows: list[dict[str, Any]]) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    table = Table(header_style="bold")
    for column in ("task", "kind", "session", "must", "got", "ok", "verdict"):
        table.add_column(column, overflow="fold")
    for row in rows:
        if row.get("oracle_error") or row.get("session_error"):
            got = "[yellow]ERROR[/]"
        else:
            got = "[green]PASS[/]" if row.get("passed") else "[red]FAIL[/]"
        table.add_row(
            escape(row["task"]),
            row["kind"],
            escape(row["session"]),
            row["expect"],
            got,
            "[green]yes[/]" if row.get("ok") else "[red]NO[/]",
            escape(str(row.get("verdict", ""))[:160]),
        )
    Console().print(table)
