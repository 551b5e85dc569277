"""Benchmark of `epistemic exec`'s cold start: `epistemic exec ... -- true` against its imports
alone, the standard-library floor and `python -c pass`, and where its imports go.

Run from the repository root with the project's virtualenv:

    .venv/bin/python bench/bench_exec_start.py           # full run: 30 rounds
    .venv/bin/python bench/bench_exec_start.py --quick   # smoke run: 5 rounds (seconds)

The four commands alternate, so that drift and noise hit all of them alike, with the bytecode
cached (a private PYTHONPYCACHEPREFIX, as an installed tool runs) and without (the package
compiled at every start); then `python -X importtime` lists the imports of `exec` that cost
most. Target: `exec` within 5x `python -c pass` (means). bench/cold_start.py compares the
cold start of several commits, with the noise.

Everything is written under a temporary directory (tempfile's default, normally /tmp) that is
removed at the end. Nothing in the repository is modified. See bench/RESULTS.md for a run.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from timings import CLI, Stats, Target, ms, print_table, run_bench

import epistemic_agent

COLD_REASON = "Check that the workspace is reachable before the real work starts on this task."
FULL_RUNS, QUICK_RUNS = 30, 5


def interpreter_of(script: Path) -> str:
    """The interpreter in a console script's shebang: the one `epistemic` really runs on."""
    first = script.read_text(encoding="utf-8").splitlines()[0]
    return first.removeprefix("#!").strip()


def exec_args(workspace: Path) -> list[str]:
    return ["exec", "--type", "collect-info", "--reason", COLD_REASON, "-C", str(workspace)]


@dataclass(frozen=True)
class PyEnv:
    """An environment to start Python in, and what to call it."""

    label: str
    env: dict[str, str]


def python_envs(root: Path) -> list[PyEnv]:
    """With a bytecode cache (a private PYTHONPYCACHEPREFIX) and without one for the package.

    The cached case is how an installed tool runs. The uncached case is this repository's
    environment when PYTHONDONTWRITEBYTECODE=1 and src/ has no __pycache__: every start
    compiles the package from source. Neither writes into the repository.
    """
    plain = {k: v for k, v in os.environ.items() if k != "PYTHONPYCACHEPREFIX"}
    cached = {k: v for k, v in plain.items() if k != "PYTHONDONTWRITEBYTECODE"}
    cached["PYTHONPYCACHEPREFIX"] = str(root / "pycache")
    source = Path(epistemic_agent.__file__)
    pyc = source.parent / "__pycache__" / f"{source.stem}.{sys.implementation.cache_tag}.pyc"
    state = "src/ has __pycache__" if pyc.exists() else "package compiled at every start"
    return [
        PyEnv("bytecode cached (PYTHONPYCACHEPREFIX)", cached),
        PyEnv(f"PYTHONDONTWRITEBYTECODE=1, {state}", plain | {"PYTHONDONTWRITEBYTECODE": "1"}),
    ]


def wall(argv: Sequence[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=True)
    return time.perf_counter() - started


@dataclass(frozen=True)
class ColdStart:
    env: PyEnv
    exec_: Stats
    imports: Stats
    stdlib: Stats
    python: Stats
    exec_imports: list[tuple[str, int, int, int]]


#: What `epistemic exec` imports, without doing anything: isolates import cost from the rest.
IMPORTS_ONLY = "import shlex, epistemic_agent.cli, epistemic_agent.session.session"
#: The standard-library modules those pull in that cost most: a floor for the imports.
STDLIB_FLOOR = "import argparse, dataclasses, hashlib, json, pathlib, shlex, subprocess, typing"


def measure_cold_start(runs: int, env: PyEnv, workspace: Path) -> ColdStart:
    """Alternate `epistemic exec -- true`, its imports alone, the heaviest standard-library
    modules alone and `python -c pass`, so that drift and noise hit all of them alike."""
    workspace.mkdir(exist_ok=True)
    python = interpreter_of(CLI)
    commands = [
        [str(CLI), *exec_args(workspace), "--", "true"],
        [python, "-c", IMPORTS_ONLY],
        [python, "-c", STDLIB_FLOOR],
        [python, "-c", "pass"],
    ]
    for _ in range(3):  # a small existing journal, a warm bytecode cache and page cache
        for command in commands:
            wall(command, env.env)
    times: list[list[float]] = [[] for _ in commands]
    for _ in range(runs):
        for command, samples in zip(commands, times, strict=True):
            samples.append(wall(command, env.env))
    module = ["-m", "epistemic_agent.cli", *exec_args(workspace), "--", "true"]
    exec_, imports, stdlib, bare = (Stats.of(samples) for samples in times)
    return ColdStart(env, exec_, imports, stdlib, bare, import_times(module, env.env))


IMPORT_LINE = re.compile(r"import time:\s+(\d+)\s+\|\s+(\d+)\s+\|(\s*)(\S+)")


def import_times(args: Sequence[str], env: dict[str, str]) -> list[tuple[str, int, int, int]]:
    """(module, nesting depth, self µs, cumulative µs) for each import `python ARGS` makes."""
    argv = [interpreter_of(CLI), "-X", "importtime", *args]
    done = subprocess.run(argv, capture_output=True, text=True, env=env, check=True)
    found = []
    for line in done.stderr.splitlines():
        match = IMPORT_LINE.match(line)
        if match:
            depth = (len(match[3]) - 1) // 2
            found.append((match[4], depth, int(match[1]), int(match[2])))
    return found


# -- reporting --------------------------------------------------------------------------------


def report_cold_start(colds: Sequence[ColdStart]) -> list[Target]:
    rows: list[tuple[str, Stats]] = []
    targets = []
    for cold in colds:
        label = cold.env.label
        rows.append((f"`epistemic exec ... -- true`, {label}", cold.exec_))
        rows.append((f"`python -c '{IMPORTS_ONLY}'`, {label}", cold.imports))
        rows.append((f"`python -c '{STDLIB_FLOOR}'`, {label}", cold.stdlib))
        rows.append((f"`python -c pass`, {label}", cold.python))
        ratio = cold.exec_.mean / cold.python.mean
        median_ratio = cold.exec_.p50 / cold.python.p50
        value = f"{ratio:.2f}× (median {median_ratio:.2f}×)"
        name = f"cold start, {label}: exec / python -c pass (means)"
        targets.append(Target(name, value, "≤ 5×", ratio <= 5))
    print_table(
        "Cold start, ms (wall; the commands alternated)",
        ["command", "runs", "mean", "median", "p95", "min"],
        [[name, s.n, ms(s.mean), ms(s.p50), ms(s.p95), ms(s.min)] for name, s in rows],
    )
    for cold in colds:
        report_imports(cold)
    return targets


def report_imports(cold: ColdStart) -> None:
    """Top imports of `epistemic exec`, and where the rest of its start-up goes."""
    top = sorted(cold.exec_imports, key=lambda item: -item[3])[:10]
    print_table(
        f"`python -X importtime -m epistemic_agent.cli exec ...`, {cold.env.label}: "
        "top 10 by cumulative µs",
        ["module", "depth", "self µs", "cumulative µs"],
        [[f"`{name}`", depth, f"{own:,}", f"{cum:,}"] for name, depth, own, cum in top],
    )
    imports = cold.imports.p50 - cold.python.p50
    floor = cold.stdlib.p50 - cold.python.p50
    rest = cold.exec_.p50 - cold.imports.p50
    print(
        f"\nMedians: exec {ms(cold.exec_.p50)} ms = interpreter start {ms(cold.python.p50)} ms"
        f" + imports {ms(imports)} ms (of which {ms(floor)} ms would be the standard-library"
        f" floor alone) + the rest {ms(rest)} ms (argument parsing, opening the session, the"
        " gate, journal appends and fsyncs, spawning bash, report and anchor writes)."
        f" {len(cold.exec_imports)} modules imported per -X importtime."
    )


def measure(runs: int, root: Path) -> list[Target]:
    workspace = root / "cold"
    colds = [measure_cold_start(runs, env, workspace) for env in python_envs(root)]
    return report_cold_start(colds)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="fewer rounds: a smoke run")
    options = parser.parse_args(argv)
    runs = QUICK_RUNS if options.quick else FULL_RUNS
    return run_bench(lambda root: measure(runs, root))


if __name__ == "__main__":
    sys.exit(main())
