"""`epistemic bench --check-oracles`: the table of every scripted session against its label."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

    from ..benchmark import BenchConfig, Task


def check(tasks: list[Task], config: BenchConfig, as_json: bool) -> int:
    """Play them all; exit 0 when every session came out as labelled, 1 otherwise, 3 when the
    judging environment failed."""
    from ..benchmark import CHECK_NAME, check_oracles, plays
    from .progress import TaskProgress

    total = sum(len(plays(task)) for task in tasks)
    try:
        with TaskProgress(total) as advance:
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
    return exit_status(rows, ok)


EXIT_ENVIRONMENT = 3  # the judging environment failed: no verdict on the agents


def exit_status(rows: list[dict[str, Any]], ok: bool) -> int:
    """`epistemic bench`'s: 3 when the judging environment failed for any row, else 0 when
    `ok`, else 1."""
    if any(row.get("environment_error") for row in rows):
        return EXIT_ENVIRONMENT
    return 0 if ok else 1


#: Characters of the verdict a table shows when it is not printed on a terminal (the whole
#: verdict is in the JSON and in check-oracles.json).
VERDICT_WIDTH = 80


def _table(rows: list[dict[str, Any]]) -> None:
    """One line per play: the short cells whole, the verdict cut with an ellipsis to fit (the
    terminal's width, or VERDICT_WIDTH characters when not a terminal)."""
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    names = ("task", "kind", "session", "must", "got", "ok")
    got = "ENV ERROR"  # the widest cell of its column
    shown = [[row["task"], row["kind"], row["session"], row["expect"], got, "yes"] for row in rows]
    widths = [max([len(name), *(len(cells[i]) for cells in shown)]) for i, name in enumerate(names)]
    frame = 3 * (len(names) + 1) + 1  # a border and two spaces of padding a column, one more
    console = Console()
    room = console.width - sum(widths) - frame
    if not console.is_terminal:  # a log or a pipe: wide enough for every short cell
        room = VERDICT_WIDTH
        console = Console(width=sum(widths) + frame + room)
    room = max(room, 12)
    table = Table(header_style="bold")
    for name, width in zip(names, widths, strict=True):
        table.add_column(name, no_wrap=True, width=width)
    table.add_column("verdict", no_wrap=True, width=room)
    for row in rows:
        if row.get("environment_error"):
            got = "[yellow]ENV ERROR[/]"
        elif row.get("oracle_error") or row.get("session_error"):
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
            escape(_cut_to(str(row.get("verdict", "")), room)),
        )
    console.print(table)


def _cut_to(text: str, width: int) -> str:
    """One line of at most `width` characters, ending in … when cut."""
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"
