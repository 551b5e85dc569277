"""What bench_core.py, bench_verify.py and bench_exec_start.py share: summaries of timings,
targets, padded Markdown tables, the machine's facts, the calls a typical session makes, and
the run around a measurement (machine table, all targets, total time).

Not a benchmark itself: the three scripts import it (a script's own folder is first on its
path).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import epistemic_agent

CLI = Path(sys.executable).parent / "epistemic"


@dataclass(frozen=True)
class Stats:
    """Summary of a list of durations, in seconds."""

    n: int
    mean: float
    p50: float
    p95: float
    min: float

    @classmethod
    def of(cls, samples: Sequence[float]) -> Stats:
        ordered = sorted(samples)
        p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
        mean, p50 = statistics.fmean(ordered), statistics.median(ordered)
        return cls(len(ordered), mean, p50, p95, ordered[0])


@dataclass(frozen=True)
class Target:
    name: str
    value: str
    limit: str
    ok: bool


# -- the calls a typical session makes ---------------------------------------------------------


@dataclass(frozen=True)
class Template:
    """One kind of accepted bash call: ~40-char command, ~100-char reason, share of the mix."""

    act: str
    command: str
    reason: str
    weight: int


GOOD_CALLS: tuple[Template, ...] = (
    Template(
        "collect-info",
        "grep -rn 'def parse_rows' src/ | head -n {i}",
        "Find where parse_rows is defined so I know which module owns CSV parsing "
        "before I touch it.",
        38,
    ),
    Template(
        "test-hypothesis",
        "python -m pytest -q tests/test_rows.py -k t{i}",
        "I believe parse_rows drops the final row; if this case passes with the full "
        "count, it is refuted.",
        14,
    ),
    Template(
        "verify",
        "python -m pytest -q -x tests/ --maxfail={i}",
        "Confirm the whole suite is still green after the loop fix, so the change is "
        "safe to hand over.",
        14,
    ),
    Template(
        "change-state",
        "sed -i 's/range(n - 1)/range(n)/' src/r{i}.py",
        "Fix the off-by-one in the row loop that the failing test pinned down as the "
        "cause of the loss.",
        12,
    ),
    Template(
        "setup",
        "python -m pip install -q pytest-timeout==2.{i}",
        "The suite relies on per-test timeouts; install the plugin so a hanging test "
        "fails fast instead.",
        5,
    ),
    Template(
        "revert",
        "git checkout -- src/rows.py src/util{i}.py",
        "The loop change broke header handling; undo it and go back to the last state "
        "where tests passed.",
        2,
    ),
    Template(
        "cleanup",
        "rm -rf build/ .pytest_cache/ /tmp/rows-{i}",
        "Remove the build output and caches I created myself so the workspace is left "
        "the way I found it.",
        5,
    ),
)


# -- output ------------------------------------------------------------------------------------


def print_table(title: str, headers: Sequence[str], rows: Sequence[Sequence[object]]) -> None:
    """A Markdown pipe table, padded so it also reads well in a terminal."""
    cells = [[str(c) for c in headers], *[[str(c) for c in row] for row in rows]]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    line = "| " + " | ".join(h.ljust(w) for h, w in zip(cells[0], widths, strict=True)) + " |"
    print(f"\n### {title}\n\n{line}")
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for row in cells[1:]:
        print("| " + " | ".join(c.rjust(w) for c, w in zip(row, widths, strict=True)) + " |")
    sys.stdout.flush()


def us(seconds: float) -> str:
    return f"{seconds * 1e6:,.0f}"


def ms(seconds: float) -> str:
    return f"{seconds * 1e3:,.1f}"


def verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def print_targets(title: str, targets: Sequence[Target]) -> None:
    rows = [[t.name, t.value, t.limit, verdict(t.ok)] for t in targets]
    print_table(title, ["target", "measured", "limit", "result"], rows)


def machine() -> list[tuple[str, str]]:
    """CPU model, cores, kernel, Python, the file system of the temp dir, and the date."""
    cpu = "?"
    with open("/proc/cpuinfo", encoding="utf-8") as handle:
        for line in handle:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    return [
        ("CPU", cpu),
        ("cores", str(os.cpu_count())),
        ("kernel", platform.release()),
        ("Python", f"{platform.python_version()} ({sys.executable})"),
        ("temp dir", f"{tempfile.gettempdir()} on {filesystem_of(tempfile.gettempdir())}"),
        ("date (UTC)", dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M")),
        ("load average at start", load_average()),
        ("source under test", source_revision()),
    ]


def source_revision() -> str:
    """The git commit, whether src/ differs from it, and a digest of the package's sources."""
    package = Path(epistemic_agent.__file__).parent
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*.py")):
        digest.update(path.read_bytes())
    try:
        head = git("rev-parse", "--short", "HEAD", cwd=package)
        dirty = git("status", "--porcelain", "--", ".", cwd=package)
    except (OSError, subprocess.CalledProcessError):
        return f"sha256(*.py) {digest.hexdigest()[:12]}"
    state = f"{len(dirty.splitlines())} file(s) changed in src" if dirty else "clean"
    return f"commit {head} ({state}), sha256(*.py) {digest.hexdigest()[:12]}"


def git(*args: str, cwd: Path) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def load_average() -> str:
    return " / ".join(f"{x:.2f}" for x in os.getloadavg()) + " (1 / 5 / 15 min)"


def filesystem_of(path: str) -> str:
    """The mount (type, device, mount point) with the longest prefix of `path`."""
    best = ("?", "?", "")
    real = os.path.realpath(path)
    with open("/proc/mounts", encoding="utf-8") as handle:
        for line in handle:
            device, point, kind = line.split()[:3]
            inside = real == point or real.startswith(point.rstrip("/") + "/")
            if inside and len(point) >= len(best[2]):
                best = (kind, device, point)
    return f"{best[0]} ({best[1]} mounted at {best[2]})"


# -- the run around a measurement --------------------------------------------------------------


def run_bench(measure: Callable[[Path], list[Target]]) -> int:
    """The machine's table, then `measure` in a temporary directory (removed at the end), then
    every target it returned and the total time. 2 when there is no `epistemic` to run."""
    if not CLI.exists():
        print(f"bench: no console script at {CLI}; run with the venv's python", file=sys.stderr)
        return 2
    print_table("Machine", ["what", "value"], machine())
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="epistemic-bench-") as tmp:
        targets = measure(Path(tmp))
    print_targets("All targets", targets)
    elapsed = time.perf_counter() - started
    print(f"\nTotal bench time {elapsed:.0f} s; load average at the end {load_average()}.")
    return 0
