"""`epistemic exec`'s cold start on this tree and earlier commits, sample by sample, with the noise.

Run from the repository root with the project's virtualenv:

    .venv/bin/python bench/cold_start.py --base 1966263 --rounds 40
    .venv/bin/python bench/cold_start.py --base 1966263 --base c75ff62 --rounds 30

Each commit is checked out in a temporary worktree. Every round runs, once each and in an order
that rotates from round to round: `epistemic exec --type collect-info ... -- true` on every tree
(its console-script entry point, `epistemic_agent.cli:main`, with that tree first on
`PYTHONPATH`), the same on this tree a second time in its own workspace (the *control*), every
module this tree's `exec` loads imported alone (what is left of `exec` is the call's own work),
the standard-library ones alone (the floor no layout of the package can go below), and
`python -c pass`. The bytecode is cached (a private
`PYTHONPYCACHEPREFIX`); each workspace has seen the command before, as in a session.

Drift (another process, the CPU's clock) then falls on every tree alike, and the control tells
how far two runs of the very same code differ: the noise. For each tree the table gives the
median, its ratio to `python -c pass`, and its ratio to this tree with a 95% interval from
resampling whole rounds (so each resample keeps the pairing). A difference is beyond the noise
when that interval leaves out 1.00; the control's own interval shows what the method can tell.
The interval covers the noise within one run; runs on different occasions can differ by more
(bench/RESULTS.md, section 13), so a difference at the interval's edge wants a second run.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REASON = "Check that the workspace is reachable before the real work starts on this task."
ENTRY = "import sys; from epistemic_agent.cli import main; sys.exit(main())"
RESAMPLES = 2000
THIS, CONTROL, PYTHON = "this tree", "this tree, again (control)", "`python -c pass`"
FLOOR = "the standard-library modules this tree's `exec` loads, alone"
IMPORTS = "every module this tree's `exec` loads, alone"
#: Prints, at exit, every module the process loaded.
LIST_MODULES = (
    "import atexit, sys; atexit.register(lambda: sys.stderr.write("
    "'MODULES ' + ' '.join(sorted(sys.modules)) + '\\n')); "
)


@dataclass(frozen=True)
class Subject:
    """One command to time, and where it runs."""

    label: str
    argv: list[str]
    env: dict[str, str]


def environment(tree: Path, cache: Path) -> dict[str, str]:
    """`tree`'s sources first on the path, its bytecode cached apart from the repository."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(tree / "src")
    env["PYTHONPYCACHEPREFIX"] = str(cache)
    return env


def exec_subject(label: str, tree: Path, folder: Path) -> Subject:
    workspace = folder / f"workspace-{len(list(folder.glob('workspace-*')))}"
    workspace.mkdir()
    argv = [sys.executable, "-c", ENTRY, "exec", "--type", "collect-info", "--reason", REASON]
    argv += ["-C", str(workspace), "--", "true"]
    return Subject(label, argv, environment(tree, folder / "pycache"))


def loaded_modules(exec_: Subject) -> list[str]:
    """Every module one run of `exec_` loads (after a first run: a cached call)."""
    wall(exec_)
    argv = [exec_.argv[0], "-c", LIST_MODULES + ENTRY, *exec_.argv[3:]]
    done = subprocess.run(argv, env=exec_.env, capture_output=True, text=True, check=True)
    names = next(line for line in done.stderr.splitlines() if line.startswith("MODULES "))
    return names.split()[1:]


def standard_modules(exec_: Subject) -> list[str]:
    """The standard-library modules one run of `exec_` loads."""
    stdlib = sys.stdlib_module_names
    return [n for n in loaded_modules(exec_) if n.partition(".")[0] in stdlib]


def importer(label: str, names: list[str], exec_: Subject) -> Subject:
    """A process that imports `names`, in `exec_`'s environment, and does nothing else."""
    code = f"import importlib\nfor name in {names!r}:\n    importlib.import_module(name)\n"
    return Subject(label, [exec_.argv[0], "-c", code], exec_.env)


def floor_subject(exec_: Subject) -> Subject:
    """The standard-library modules `exec_` needs, alone: what no layout of the package can
    go below (their imports, and their share of the interpreter's teardown)."""
    return importer(FLOOR, standard_modules(exec_), exec_)


def imports_subject(exec_: Subject) -> Subject:
    """Every module `exec_` loads, alone: `exec_` less this is the call's own work."""
    return importer(IMPORTS, loaded_modules(exec_), exec_)


def wall(subject: Subject) -> float:
    started = time.perf_counter()
    done = subprocess.run(subject.argv, env=subject.env, capture_output=True, check=False)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"cold_start: {subject.label} failed: {done.stderr.decode()[-600:]}")
    return elapsed


def measure(subjects: Sequence[Subject], rounds: int, warm: int = 3) -> dict[str, list[float]]:
    """Seconds per subject and round; the first `warm` rounds (caches, a first journal) dropped."""
    times: dict[str, list[float]] = {s.label: [] for s in subjects}
    for index in range(warm + rounds):
        shift = index % len(subjects)
        for subject in [*subjects[shift:], *subjects[:shift]]:
            elapsed = wall(subject)
            if index >= warm:
                times[subject.label].append(elapsed)
    return times


def ratio_interval(
    ours: Sequence[float], theirs: Sequence[float], seed: int = 0
) -> tuple[float, float, float]:
    """median(theirs) / median(ours), and a 95% interval from resampling whole rounds."""
    if len(ours) != len(theirs) or not ours:
        raise ValueError("paired samples of the same, non-zero length are needed")
    rng = random.Random(seed)
    rounds = range(len(ours))
    ratios = []
    for _ in range(RESAMPLES):
        picked = [rng.choice(rounds) for _ in rounds]
        mine = statistics.median(ours[i] for i in picked)
        ratios.append(statistics.median(theirs[i] for i in picked) / mine)
    ratios.sort()
    low, high = ratios[int(0.025 * RESAMPLES)], ratios[int(0.975 * RESAMPLES) - 1]
    return statistics.median(theirs) / statistics.median(ours), low, high


def verdict(low: float, high: float) -> str:
    if low > 1.0:
        return "slower, beyond the noise"
    if high < 1.0:
        return "faster, beyond the noise"
    return "within the noise"


def table(times: dict[str, list[float]]) -> list[str]:
    python = statistics.median(times[PYTHON])
    lines = [
        "| tree | median ms | × `python -c pass` | ÷ this tree | 95% interval | difference |",
        "|---|--:|--:|--:|--:|---|",
    ]
    for label, samples in times.items():
        median = statistics.median(samples)
        cells = [label, f"{median * 1000:.1f}", f"{median / python:.2f}×"]
        if label in (THIS, PYTHON, FLOOR, IMPORTS):
            cells += ["1.00" if label == THIS else "", "", ""]
        else:
            ratio, low, high = ratio_interval(times[THIS], samples)
            cells += [f"{ratio:.3f}", f"{low:.3f}–{high:.3f}", verdict(low, high)]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def worktree(rev: str, folder: Path) -> Path:
    tree = folder / f"tree-{rev}"
    subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "add", "--detach", "--quiet", str(tree), rev],
        check=True,
    )
    return tree


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--base", action="append", default=[], help="a commit to compare with")
    parser.add_argument("--rounds", type=int, default=30, help="measured rounds (default 30)")
    args = parser.parse_args()
    if args.rounds < 2:
        parser.error("--rounds must be at least 2")
    with tempfile.TemporaryDirectory(prefix="epistemic-cold-") as name:
        folder = Path(name)
        trees = {rev: worktree(rev, folder) for rev in args.base}
        try:
            subjects = [exec_subject(f"`{rev}`", tree, folder) for rev, tree in trees.items()]
            ours = exec_subject(THIS, ROOT, folder)
            subjects += [ours, exec_subject(CONTROL, ROOT, folder)]
            subjects += [imports_subject(ours), floor_subject(ours)]
            subjects.append(Subject(PYTHON, [sys.executable, "-c", "pass"], os.environ.copy()))
            times = measure(subjects, args.rounds)
        finally:
            for tree in trees.values():
                subprocess.run(
                    ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)],
                    check=False,
                )
    print(f"### `epistemic exec ... -- true`, cold, bytecode cached: {args.rounds} rounds\n")
    print("\n".join(table(times)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
