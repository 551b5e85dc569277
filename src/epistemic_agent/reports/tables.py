"""Terminal tables, drawn with rich (imported only by the commands that print tables).

Every cell is a `rich.text.Text`, never a markup string: a command such as `ls [bold]x` or a
reason holding `[/]` is shown as recorded. Control characters and line breaks are shown as
escapes (`safetext.one_line`), so one call is one row. The table takes the terminal's width
(COLUMNS, else the terminal, else 80): the command and reason cells are cut with `…`; the
numbers never are (the whole text is in `--json`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import IO

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..core import one_line
from ..journal import CallView

#: The colour of each fate (journal/view.py); any other word (a newer writer's) is plain.
STATUS_STYLE = {
    "ran": "green",
    "failed": "red",
    "rejected": "red",
    "denied": "red",
    "aborted": "yellow",
    "unknown": "yellow",
}


def status_style(status: object) -> str:
    """The style of a status: total, whatever the journal holds."""
    return STATUS_STYLE.get(status, "") if isinstance(status, str) else ""


#: The widest the act and status columns get; the least the command and reason columns get.
ACT_MAX, STATUS_MAX, COMMAND_MIN, REASON_MIN = 15, 34, 12, 8
FRAME = 3 * 6 + 1  # six columns: a border and a space each side, and the last border


def calls_table(
    views: Sequence[CallView], width: int | None = None, file: IO[str] | None = None
) -> None:
    rows = [_cells(view) for view in views]
    console = Console(highlight=False, width=width, file=file)
    widths = _widths(rows, console.width)
    table = Table(show_lines=False, header_style="bold")
    for (name, justify), size in zip(COLUMNS, widths, strict=True):
        table.add_column(
            name,
            justify=justify,  # type: ignore[arg-type]
            no_wrap=True,
            overflow="ellipsis",
            width=size,
        )
    for view, cells in zip(views, rows, strict=True):
        texts = [Text(cell) for cell in cells]
        texts[2].stylize(status_style(view.fate))
        table.add_row(*texts)
    console.print(table)


COLUMNS = (
    ("seq", "right"),
    ("act", "left"),
    ("status", "left"),
    ("rc", "right"),
    ("command", "left"),
    ("reason", "left"),
)


def _cells(view: CallView) -> list[str]:
    """The row's text, one line per cell (line breaks and escapes shown as escapes)."""
    status = view.fate if view.fate != "rejected" else f"rejected ({view.rule})"
    status += "".join(f" ⚠ {flag.get('flag')}" for flag in view.flags)
    code = "" if view.returncode is None else str(view.returncode)
    cells = (str(view.seq), view.act or "-", status, code, view.command, view.reason)
    return [one_line(str(cell)) for cell in cells]


def _widths(rows: list[list[str]], total: int) -> list[int]:
    """Each column's width: the numbers (seq, rc) whole; act, status, command and reason as
    wide as their longest cell, then narrowed in turn (the widest for its weight first) until
    the table fits the terminal, none below its least width."""
    widths = [
        max([len(name), *(len(row[i]) for row in rows)]) for i, (name, _) in enumerate(COLUMNS)
    ]
    widths[1], widths[2] = min(widths[1], ACT_MAX), min(widths[2], STATUS_MAX)
    while sum(widths) + FRAME > total:
        narrower = [i for i in SHRINKABLE if widths[i] > LEAST[i]]
        if not narrower:
            break
        widest = max(narrower, key=lambda i: widths[i] / WEIGHT[i])
        widths[widest] -= 1
    return widths


#: The columns that may be narrowed, how much each resists it, and the least width of each.
SHRINKABLE = (1, 2, 4, 5)
WEIGHT = {1: 4.0, 2: 1.0, 4: 3.0, 5: 2.0}
LEAST = {1: 6, 2: 8, 4: COMMAND_MIN, 5: REASON_MIN}
