"""Benchmark of the static effect classifier (`epistemic_agent.effects.classify.classify`).

Run from the repository root with the project's virtualenv:

    .venv/bin/python bench/bench_effects.py            # about 10 s
    .venv/bin/python bench/bench_effects.py --quick    # about 2 s

It prints Markdown tables to stdout:

1. the one-time cost, each in a fresh interpreter: `import epistemic_agent.effects.classify` (which
   must not import tree_sitter) and the first `classify` (which imports tree_sitter and
   tree_sitter_bash and builds the parser);
2. microseconds per `classify` for short, medium and long commands (median and p90 of
   several rounds), next to the bare tree-sitter parse of the same text;
3. the target (a typical command well under 1 ms), PASS/FAIL.

Nothing is written outside a temporary directory (the bytecode cache of part 1).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

from epistemic_agent.effects.classify import classify
from epistemic_agent.effects.syntax import parse

COMMANDS: dict[str, list[str]] = {
    "short": ["ls -la", "git status", "rm -rf build", "cat README.md", "pwd"],
    "medium": [
        "cd src && rm -rf build > /dev/null 2>&1",
        "git log --oneline -n 5 | head -3",
        "grep -rn 'def main' src | sort | uniq -c > counts.txt",
        "find . -name '*.pyc' -delete && echo cleaned",
        "python -c 'import sys; print(sys.version)'",
    ],
    "long": [
        "find . -name '*.py' -exec grep -l foo {} + | xargs sed -i 's/a/b/' && echo done > log.txt",
        'for f in $(git ls-files \'*.py\'); do if grep -q TODO "$f"; then echo "$f" >> todo.txt;'
        " fi; done; sort -o todo.txt todo.txt && wc -l todo.txt",
        "set -euo pipefail; cd /tmp && curl -fsSL https://x/y.tgz -o y.tgz && tar -xzf y.tgz -C"
        " out && bash -c 'cd out && make install' | tee install.log",
        "cat <<'EOF' > script.sh\n#!/bin/sh\necho hello $USER\nrm -rf /tmp/cache\nEOF\n"
        "chmod +x script.sh && ./script.sh 2>&1 | awk '{print > \"out.txt\"}'",
    ],
}
TARGET_US = 1000.0

COLD = """
import time
t0 = time.perf_counter()
import dataclasses, re
t1 = time.perf_counter()
import epistemic_agent.effects.classify as effects
t2 = time.perf_counter()
import sys
lazy = "tree_sitter" not in sys.modules and "epistemic_agent.effects.programs" not in sys.modules
effects.classify("ls -la")
t3 = time.perf_counter()
effects.classify("git status")
t4 = time.perf_counter()
print((t1 - t0) * 1000, (t2 - t1) * 1000, (t3 - t2) * 1000, (t4 - t3) * 1000, lazy)
"""


def cold_start(runs: int, cached: bool) -> list[list[float]]:
    """Fresh interpreters; with `cached`, bytecode lives in a temporary PYTHONPYCACHEPREFIX
    (warmed by one discarded run), else every module is compiled (PYTHONDONTWRITEBYTECODE)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    out = []
    with tempfile.TemporaryDirectory() as cache:
        if cached:
            env["PYTHONPYCACHEPREFIX"] = cache
        else:
            env["PYTHONDONTWRITEBYTECODE"] = "1"
        for i in range(runs + cached):
            done = subprocess.run(
                [sys.executable, "-c", COLD], check=True, capture_output=True, text=True, env=env
            )
            *numbers, lazy = done.stdout.split()
            if not (cached and i == 0):
                out.append([float(n) for n in numbers] + [float(lazy == "True")])
    return out


def per_call(func: object, commands: list[str], rounds: int, loops: int) -> list[float]:
    """Microseconds per call, one sample per round (each round: loops x every command)."""
    samples = []
    call = func if callable(func) else classify
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(loops):
            for command in commands:
                call(command)
        samples.append((time.perf_counter() - start) / (loops * len(commands)) * 1e6)
    return samples


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer rounds")
    args = parser.parse_args()
    rounds, loops, cold_runs = (5, 40, 3) if args.quick else (15, 200, 7)

    print(f"## One-time cost (fresh interpreter, ms, median of {cold_runs})\n")
    print("| step | bytecode cached | compiled each time |")
    print("|---|---|---|")
    warm, compiled = cold_start(cold_runs, cached=True), cold_start(cold_runs, cached=False)
    steps = (
        "`import dataclasses, re` (stdlib the module needs; the CLI has them already)",
        "`import epistemic_agent.effects.classify` (API only: no tree_sitter, no program tables)",
        "first `classify` (imports tree_sitter, the program tables; builds the parser)",
        "second `classify`",
    )
    for i, step in enumerate(steps):
        a, b = (statistics.median(run[i] for run in runs) for runs in (warm, compiled))
        print(f"| {step} | {a:.2f} | {b:.2f} |")
    lazy = all(run[4] for run in warm + compiled)
    print(f"| tree_sitter and the tables not loaded by the import alone | {lazy} | {lazy} |")

    classify("warm up")
    print(f"\n## Per call (µs; {rounds} rounds of {loops} loops)\n")
    print("| commands | chars (mean) | classify p50 | classify p90 | parse only p50 |")
    print("|---|---|---|---|---|")
    verdict = True
    for size, commands in COMMANDS.items():
        full = sorted(per_call(classify, commands, rounds, loops))
        bare = sorted(per_call(parse, commands, rounds, loops))
        chars = statistics.mean(len(c) for c in commands)
        p90 = full[int(len(full) * 0.9) - 1] if len(full) > 1 else full[0]
        print(
            f"| {size} ({len(commands)}) | {chars:.0f} | {statistics.median(full):.1f} "
            f"| {p90:.1f} | {statistics.median(bare):.1f} |"
        )
        if size in ("short", "medium"):
            verdict &= statistics.median(full) < TARGET_US
    print("\n## Target\n")
    print(
        f"| target | result |\n|---|---|\n| typical (short, medium) command p50 < "
        f"{TARGET_US:.0f} µs | **{'PASS' if verdict else 'FAIL'}** |"
    )
    return 0 if verdict else 1


if __name__ == "__main__":
    raise SystemExit(main())
