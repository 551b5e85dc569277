"""Every benchmark, run side by side on this tree and on an earlier commit, in one run.

Run from the repository root with the project's virtualenv:

    .venv/bin/python bench/compare.py --base HEAD~1            # every benchmark, full size
    .venv/bin/python bench/compare.py --base 1966263 --quick   # smoke sizes
    .venv/bin/python bench/compare.py --base v0.1.0 bench_core bench_observe
    .venv/bin/python bench/compare.py --base HEAD~5 --scripts-from-here bench_confine

The earlier commit is checked out in a temporary worktree. Each benchmark script runs from its
own tree with that tree first on `PYTHONPATH` (each tree's scripts import that tree's modules),
alternating base, this tree, base, this tree (`--rounds`, default 2), so that the machine's
drift falls on both alike. Each script prints Markdown tables; every numeric cell is paired
with the same cell (same table header, same row label, same column) of the other tree, and
the pairs are printed as one table: the base's median over rounds, this tree's, and the ratio.
A cell only one tree prints is listed with a dash on the other side.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: The scripts and their smoke-size arguments (scripts that print no tables are left out).
SCRIPTS: dict[str, tuple[str, ...]] = {
    "bench_core": ("--quick",),
    "bench_verify": ("--quick",),
    "bench_exec_start": ("--quick",),
    "bench_confine": ("--quick",),
    "bench_observe": ("--runs", "10"),
    "bench_effects": ("--quick",),
    "bench_redact": (),
    "bench_versions": ("--runs", "3"),
    "bench_mcp_start": ("--quick",),
    "bench_tokens": (),
    "bench_cost": ("--steps", "8"),
}
#: A line `label: 12.3 unit` (a script that prints no table, such as bench_redact).
LABELLED = re.compile(r"^([A-Za-z][^|:]{0,80}):\s+(-?[\d,]*\.?\d+)\s*(\S*)")
NUMBER = re.compile(r"^\**\s*(-?[\d,]*\.?\d+)\s*(µs|ms|s|×|x|%|kB|MB/s|/s)?\**$")
Cell = tuple[str, str, str, str]  # script, table header, row label, column


def worktree(rev: str, folder: Path) -> Path:
    """A detached checkout of `rev` under `folder`."""
    tree = folder / "base"
    subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "add", "--detach", "--quiet", str(tree), rev],
        check=True,
    )
    return tree


def run_script(tree: Path, script: str, args: tuple[str, ...], scripts: Path | None = None) -> str:
    """The script's stdout, run from `tree` with `tree`'s sources first on the path; the
    script itself is `scripts`'s (default: `tree`'s own)."""
    env = {**os.environ, "PYTHONPATH": str(tree / "src")}
    done = subprocess.run(
        [sys.executable, str((scripts or tree) / "bench" / f"{script}.py"), *args],
        cwd=tree,
        env=env,
        capture_output=True,
        text=True,
        timeout=3600,
        check=False,
    )
    if done.returncode not in (0, 1):  # 1: a target missed, the tables are still printed
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        print(f"compare: {script} in {tree} exited {done.returncode}: {tail}", file=sys.stderr)
    return done.stdout


def cells(script: str, text: str) -> dict[Cell, float]:
    """Every numeric cell of every Markdown table in `text`, keyed by where it stands."""
    found: dict[Cell, float] = {}
    table: list[list[str]] = []
    for line in [*text.splitlines(), ""]:
        if line.startswith("|"):
            row = [cell.strip() for cell in line.strip().strip("|").split("|")]
            if not all(set(cell) <= set("-: ") for cell in row):
                table.append(row)
            continue
        if table:
            found.update(table_cells(script, table))
            table = []
        labelled = LABELLED.match(line)
        if labelled is not None:
            unit = labelled.group(3) or "value"
            found[(script, "", labelled.group(1).strip(), unit)] = number(labelled.group(2)) or 0.0
    return found


def table_cells(script: str, table: list[list[str]]) -> dict[Cell, float]:
    """A table's numeric cells. A row is named by its first cell; where that repeats (`mix` at
    100, 1,000 and 10,000 calls), by its first two, so that no row hides another."""
    header, rows = table[0], table[1:]
    repeated = {
        label for label in (row[0] for row in rows) if [r[0] for r in rows].count(label) > 1
    }
    found: dict[Cell, float] = {}
    for row in rows:
        label = row[0]
        if label in repeated and len(row) > 1 and len(header) > 1:
            label = f"{row[0]}, {header[1]} {row[1]}"
        for column, cell in zip(header[1:], row[1:], strict=False):
            value = number(cell)
            if value is not None:
                found[(script, " | ".join(header), label, column)] = value
    return found


def number(cell: str) -> float | None:
    match = NUMBER.match(cell.replace("\u2009", "").strip())
    if match is None:
        return None
    return float(match.group(1).replace(",", ""))


def compare(base: list[dict[Cell, float]], ours: list[dict[Cell, float]]) -> list[str]:
    """The paired table: each cell's median over the rounds, base then ours, and the ratio."""
    keys = list(dict.fromkeys([key for run in base + ours for key in run]))
    lines = [
        "| benchmark | row | column | base | this tree | this / base |",
        "|---|---|---|--:|--:|--:|",
    ]
    for key in keys:
        before = [run[key] for run in base if key in run]
        after = [run[key] for run in ours if key in run]
        b = statistics.median(before) if before else None
        a = statistics.median(after) if after else None
        ratio = f"{a / b:.2f}" if a is not None and b else "-"
        lines.append(f"| {key[0]} | {key[2]} | {key[3]} | {fmt(b)} | {fmt(a)} | {ratio} |")
    return lines


def fmt(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.3g}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--base", required=True, help="the commit to compare with")
    parser.add_argument("--quick", action="store_true", help="each script's smoke size")
    parser.add_argument("--rounds", type=int, default=2, help="runs of each tree (default 2)")
    parser.add_argument(
        "--scripts-from-here",
        action="store_true",
        help="run this tree's scripts on both trees' sources (cases the base's scripts lack; "
        "the scripts must use only what both trees have)",
    )
    parser.add_argument("scripts", nargs="*", help=f"a subset of: {', '.join(SCRIPTS)}")
    args = parser.parse_args()
    unknown = [name for name in args.scripts if name not in SCRIPTS]
    if unknown or args.rounds < 1:
        parser.error(f"unknown scripts: {', '.join(unknown)}" if unknown else "--rounds >= 1")
    with tempfile.TemporaryDirectory(prefix="epistemic-bench-") as folder:
        base_tree = worktree(args.base, Path(folder))
        try:
            for script in args.scripts or list(SCRIPTS):
                scripts = ROOT if args.scripts_from_here else None
                if scripts is None and not (base_tree / "bench" / f"{script}.py").is_file():
                    print(f"compare: {script} is not in {args.base}: skipped", file=sys.stderr)
                    continue
                extra = SCRIPTS[script] if args.quick else ()
                base, ours = [], []
                for _ in range(args.rounds):
                    base.append(cells(script, run_script(base_tree, script, extra, scripts)))
                    ours.append(cells(script, run_script(ROOT, script, extra)))
                print(f"\n### {script} (base {args.base}, {args.rounds} rounds each)\n")
                if not any(base) or not any(ours):
                    empty = "the base" if not any(base) else "this tree"
                    print(f"{script} printed no figures on {empty} (see its stderr above)\n")
                print("\n".join(compare(base, ours)), flush=True)
        finally:
            subprocess.run(
                ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(base_tree)],
                check=False,
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
