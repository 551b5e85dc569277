"""A benchmark of coding tasks with independent oracles, and the runner behind `epistemic bench`.

Each task is a folder under `tasks/` (format: docs/benchmark.md): the prompt, the starting
workspace, an optional `prepare` script, a hidden `oracle`, a reference session that solves the
task with well-typed calls, and plausible wrong solutions the oracle must fail.
"""

from __future__ import annotations

from pathlib import Path

TASKS_DIR = Path(__file__).resolve().parent / "tasks"
