"""A progress bar on stderr for commands that run many tasks (`bench`, `bench --check-oracles`)."""

from __future__ import annotations

from typing import Any


class TaskProgress:
    """A progress bar on stderr, advanced once per finished task."""

    def __init__(self, total: int, label: str = "bench") -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        self.bar = Progress(
            TextColumn(label),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            TextColumn("{task.description}"),
            console=Console(stderr=True),
        )
        self.task = self.bar.add_task("", total=total)

    def __enter__(self) -> Any:
        self.bar.start()
        return self.advance

    def __exit__(self, *exc: object) -> None:
        self.bar.stop()

    def advance(self, row: dict[str, Any]) -> None:
        from rich.markup import escape

        verdict = "PASS" if row.get("passed") else "FAIL"
        if row.get("environment_error") or row.get("oracle_error"):
            verdict = "ENV ERROR" if row.get("environment_error") else "ERROR"
        if str(row.get("kind", "")).startswith("supervised"):
            alarms = len(row.get("alarms") or [])
            verdict = f"{row.get('session')}: {alarms} call(s) flagged or blocked"
        resumed = " (finished earlier)" if row.get("resumed") else ""
        self.bar.advance(self.task)
        name = escape(str(row["task"]))
        self.bar.update(self.task, description=f"{name}: {verdict}{resumed}")
