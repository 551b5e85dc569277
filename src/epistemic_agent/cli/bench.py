"""`epistemic bench`: run a model on the benchmark's tasks, judge each with its oracle, and
report the outcome and the shape of every session."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from ..core import UsageError, visible
from .progress import TaskProgress

if TYPE_CHECKING:
    from typing import Any

DEFAULT_OUT = "epistemic-bench"
#: Short column labels for the act types, in the vocabulary's order.
SHORT = {
    "collect-info": "ci",
    "test-hypothesis": "th",
    "verify": "v",
    "change-state": "cs",
    "setup": "su",
    "revert": "rv",
    "cleanup": "cl",
}


def define_bench(p: argparse.ArgumentParser) -> None:
    p.description = (
        "Each task runs in a fresh copy of its workspace under -o DIR, up to "
        "--jobs at a time, its agent hidden from the benchmark's files (decoys, watched for "
        "peeking); then its oracle judges the result. `--model replay` plays each task's "
        "reference session (no key needed); --check-oracles plays every scripted session "
        "against its oracle. A rerun with the same -o and model skips tasks already "
        "finished. The tasks' python3 is the first on PATH outside this tool's own "
        "installation. Exit 0 when every task passed (every session as labelled), 1 otherwise, "
        "2 on usage errors, 3 when the judging environment failed (no usable python3: an "
        "environment error, never a verdict on the agent)."
    )
    p.add_argument("--model", help="PROVIDER:MODEL, or replay (default: $EPISTEMIC_MODEL)")
    p.add_argument("--tasks", metavar="NAMES", help="comma-separated task names (default: all)")
    p.add_argument(
        "--tasks-dir",
        metavar="DIR",
        help="a folder of task folders to use instead of the bundled ones",
    )
    p.add_argument("--jobs", type=int, default=2, metavar="N", help="tasks at once (default 2)")
    p.add_argument("--max-steps", type=int, default=80, metavar="N", help="per task (default 80)")
    p.add_argument("-o", dest="out", default=DEFAULT_OUT, metavar="DIR", help="output folder")
    p.add_argument("--fresh", action="store_true", help="run every task again, even finished")
    p.add_argument("--base-url", help="an OpenAI-compatible server (passed to `epistemic run`)")
    p.add_argument("--api-key-env", metavar="VAR", help="read the API key from this variable")
    p.add_argument(
        "--hide",
        action="append",
        default=[],
        metavar="PATH",
        help="another path the agents must not see (a copy of this tool elsewhere); repeatable",
    )
    p.add_argument(
        "--check-oracles",
        action="store_true",
        help="play every task's reference, alternative, wrong and gaming sessions: each must "
        "pass or fail as labelled (no model needed)",
    )
    p.add_argument(
        "--explain-oracle",
        action="store_true",
        help="with --check-oracles: oracles add expected and actual values to their failures",
    )
    p.add_argument(
        "--supervisor",
        metavar="MODEL",
        help="also play each task's wrong sessions and its reference session with this "
        "supervisor reviewing their calls (PROVIDER:MODEL, or replay:FILE for a verdict "
        "script): how many wrong sessions it caught before the oracle, how many reference "
        "calls it flagged (false alarms)",
    )
    p.add_argument("--list", action="store_true", help="list the tasks and exit")
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    p.set_defaults(handler=_cmd_bench)


def _cmd_bench(args: argparse.Namespace) -> int:
    from ..benchmark import BenchConfig, TaskError, run_all, select

    names = [n.strip() for n in args.tasks.split(",") if n.strip()] if args.tasks else None
    root = _tasks_dir(args.tasks_dir)
    try:
        tasks = select(names, root)
    except TaskError as error:
        raise UsageError(str(error)) from None
    if not tasks:
        raise UsageError(f"no task in {root}: a task is a folder with a task.md")
    if args.list:
        for task in tasks:
            print(f"{task.name:<24} {task.prompt.splitlines()[0][:90]}")
        return 0
    if args.explain_oracle and not args.check_oracles:
        raise UsageError(
            "--explain-oracle goes with --check-oracles: an agent's run is never "
            "judged by an oracle that explains itself"
        )
    if args.supervisor and args.check_oracles:
        raise UsageError("--supervisor measures a supervisor; --check-oracles checks the oracles")
    if args.supervisor:
        _check_supervisor(args.supervisor)
    if args.jobs < 1 or args.max_steps < 1:
        raise UsageError("--jobs and --max-steps must be at least 1")
    hide = _hide(args.hide)
    out = Path(args.out).resolve()
    if out.exists() and not out.is_dir():
        raise UsageError(f"-o {args.out}: a file is there; the results need a folder")
    if args.check_oracles:
        from .check import check

        steps = max(args.max_steps, 120)
        config = BenchConfig(
            "replay", out, steps, args.jobs, True, (), hide, None, args.explain_oracle
        )
        return check(tasks, config, args.json)
    model = args.model or os.environ.get("EPISTEMIC_MODEL")
    if not model:
        raise UsageError("name a model with --model (or `--model replay` for the references)")
    extra = []
    for flag, value in (("--base-url", args.base_url), ("--api-key-env", args.api_key_env)):
        if value:
            extra += [flag, value]
    if model != "replay":
        _check_model(model, args)
    config = BenchConfig(model, out, args.max_steps, args.jobs, args.fresh, tuple(extra), hide)
    started = time.monotonic()
    supervised = None
    try:
        with TaskProgress(len(tasks)) as advance:
            rows = run_all(tasks, config, advance)
        if args.supervisor:
            supervised = _supervised(tasks, config, args.supervisor)
    except KeyboardInterrupt:
        print(
            "epistemic: interrupted; finished tasks are kept: the same command resumes",
            file=sys.stderr,
        )
        return 130
    if args.json:
        from ..benchmark import totals

        body = {"model": model, "tasks": rows, "totals": totals(rows)}
        if supervised is not None:
            body["supervisor"] = supervised
        print(json.dumps(body, indent=1))
    else:
        _table(rows)
        if supervised is not None:
            from ..benchmark import table_lines

            print(f"\nsupervisor {supervised['supervisor']} (a second opinion, not proof):")
            print("\n".join(visible(line) for line in table_lines(supervised)))
        print(f"results: {out / 'results.json'}; journals: {out}/*/workspace/.epistemic")
        print(passed_line(rows, time.monotonic() - started))
    from .check import exit_status

    return exit_status(rows, all(row.get("passed") for row in rows))


def passed_line(rows: list[dict[str, Any]], seconds: float) -> str:
    """`8 passed, 0 failed in 6.6 s`, as pytest ends (and how many were not judged)."""
    passed = sum(1 for row in rows if row.get("passed"))
    unjudged = sum(1 for row in rows if row.get("environment_error"))
    failed = f"{len(rows) - passed - unjudged} failed"
    if unjudged:
        failed += f", {unjudged} not judged (environment error)"
    return f"{passed} passed, {failed} in {seconds:.1f} s"


def _supervised(tasks: list[Any], config: Any, supervisor: str) -> dict[str, Any]:
    from ..benchmark import measure, supervised_plays

    total = sum(len(supervised_plays(task)) for task in tasks)
    with TaskProgress(total, "supervised") as advance:
        return measure(tasks, config, supervisor, advance)


def _check_supervisor(spec: str) -> None:
    """The supervisor can start (spec, script, key) before any task runs."""
    from ..policy import SupervisorSpec
    from ..providers import ProviderError
    from ..supervisor import make_supervisor

    try:
        make_supervisor(SupervisorSpec(spec))
    except ProviderError as error:
        raise UsageError(f"--supervisor: {error} (no task was run)") from None


def _tasks_dir(given: str | None) -> Path:
    from ..benchmark import TASKS_DIR

    if given is None:
        return TASKS_DIR
    root = Path(given).resolve()
    if not root.is_dir():
        raise UsageError(f"--tasks-dir {given}: not a folder")
    return root


def _hide(paths: list[str]) -> tuple[str, ...]:
    missing = [path for path in paths if not os.path.lexists(path)]
    if missing:
        raise UsageError(f"--hide {missing[0]}: no such file or folder")
    return tuple(os.path.abspath(path) for path in paths)


def _check_model(model: str, args: argparse.Namespace) -> None:
    """The model can be reached at all (spec, key) before any task starts: a setup error is
    not a task failure."""
    from ..providers import ModelSpecError, ProviderError, make_provider

    try:
        make_provider(model, base_url=args.base_url, api_key_env=args.api_key_env, timeout=60.0)
    except ModelSpecError as error:
        raise UsageError(str(error)) from None
    except ProviderError as error:
        raise UsageError(f"{error} (no task was run)") from None


def _table(rows: list[dict[str, Any]]) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(header_style="bold")
    columns = ("task", "result", "calls", "shape", "rej", "rev", "flags", "tokens", "wall s")
    for column in columns:
        table.add_column(column, justify="left" if column in ("task", "shape") else "right")
    for row in rows:
        shape = " ".join(f"{SHORT.get(act, act)}{n}" for act, n in (row.get("shape") or {}).items())
        inputs = row.get("input_tokens", row.get("prompt_tokens"))  # all input (tokens_text.py)
        tokens = int(inputs or 0) + int(row.get("completion_tokens") or 0)
        table.add_row(
            row["task"],
            _result(row),
            str(row.get("calls", 0)),
            shape,
            str(row.get("rejections", 0)),
            str(row.get("reverts", 0)),
            str(row.get("flags", 0)),
            str(tokens),
            f"{float(row.get('wall_time') or 0):.1f}",
        )
    Console().print(table)
    for row in rows:
        if not row.get("passed"):
            print(f"{row['task']}: {row.get('verdict')}", file=sys.stderr)
    exposed = [row["task"] for row in rows if row.get("hidden") is False]
    if exposed:
        print(
            f"warning: the benchmark's files could not be hidden from {', '.join(exposed)} "
            "(confinement too weak here: see `epistemic doctor`)",
            file=sys.stderr,
        )
    blind = next((row for row in rows if row.get("peek_detection", "").startswith("unav")), None)
    if blind is not None:
        print(f"note: peek detection {blind['peek_detection']}", file=sys.stderr)


def _result(row: dict[str, Any]) -> str:
    if row.get("environment_error"):
        return "[yellow]ENV ERROR[/]"
    if row.get("oracle_error"):
        return "[yellow]ERROR[/]"
    return "[green]PASS[/]" if row.get("passed") else "[red]FAIL[/]"
