"""Terminal tables, drawn with rich (imported only by the commands that print tables)."""

from __future__ import annotations

from collections.abc import Sequence

from .records import CallView

_STATUS_STYLE = {"ran": "green", "rejected": "red", "unknown": "yellow"}


def calls_table(views: Sequence[CallView]) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(show_lines=False, header_style="bold")
    for name, justify in (
        ("seq", "right"),
        ("act", "left"),
        ("status", "left"),
        ("rc", "right"),
        ("command", "left"),
        ("reason", "left"),
    ):
        table.add_column(name, justify=justify, overflow="fold")  # type: ignore[arg-type]
    for view in views:
        status = view.status if view.status != "rejected" else f"rejected ({view.rule})"
        status += "".join(f" ⚠ {flag.get('flag')}" for flag in view.flags)
        style = _STATUS_STYLE.get(view.status, "")
        code = "" if view.returncode is None else str(view.returncode)
        table.add_row(
            str(view.seq),
            view.act or "-",
            f"[{style}]{status}[/]",
            code,
            _cut(view.command, 60),
            _cut(view.reason, 80),
        )
    Console().print(table)


def _cut(text: str, width: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"
