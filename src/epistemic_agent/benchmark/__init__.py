"""A benchmark of coding tasks with independent oracles, and the runner behind `epistemic bench`.

Each task is a folder under `tasks/` (format: docs/benchmark.md): the prompt, the starting
workspace, an optional `prepare` script, a hidden `oracle`, a reference session that solves the
task with well-typed calls, and plausible wrong solutions the oracle must fail.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core import front_door

# -- the front door: what other packages may use of this one ---------------------------

if TYPE_CHECKING:
    from .check import CHECK_NAME as CHECK_NAME
    from .check import check_oracles as check_oracles
    from .check import plays as plays
    from .config import BenchConfig as BenchConfig
    from .runner import run_all as run_all
    from .runner import totals as totals
    from .supervised import measure as measure
    from .supervised import supervised_plays as supervised_plays
    from .supervised import table_lines as table_lines
    from .tasks import TASKS_DIR as TASKS_DIR
    from .tasks import Task as Task
    from .tasks import TaskError as TaskError
    from .tasks import select as select

#: public name -> "submodule:attribute", imported when first used
EXPORTS = {
    "BenchConfig": "config:BenchConfig",
    "CHECK_NAME": "check:CHECK_NAME",
    "TASKS_DIR": "tasks:TASKS_DIR",
    "Task": "tasks:Task",
    "TaskError": "tasks:TaskError",
    "check_oracles": "check:check_oracles",
    "measure": "supervised:measure",
    "plays": "check:plays",
    "run_all": "runner:run_all",
    "select": "tasks:select",
    "supervised_plays": "supervised:supervised_plays",
    "table_lines": "supervised:table_lines",
    "totals": "runner:totals",
}
__all__ = [
    "CHECK_NAME",
    "TASKS_DIR",
    "BenchConfig",
    "Task",
    "TaskError",
    "check_oracles",
    "measure",
    "plays",
    "run_all",
    "select",
    "supervised_plays",
    "table_lines",
    "totals",
]

if not TYPE_CHECKING:  # type checkers read the imports above
    __getattr__ = front_door(__name__, EXPORTS)
