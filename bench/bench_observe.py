"""Benchmark of change observation (src/epistemic_agent/observe*.py) against spawning bash.

Run from the repository root with the project's virtualenv (fanotify rows need root):

    .venv/bin/python bench/bench_observe.py              # 50 runs per row (about 30 s)
    .venv/bin/python bench/bench_observe.py --runs 10    # smoke run

It builds a workspace of 10,000 files in 500 directories (plus an ignored `.git` of 500
files) under a temporary directory, then times one call = `start()` + spawn + wait +
`finish()` for each method, round-robin so that background load hits all rows alike, and
prints Markdown tables: per-call cost (median, p90) with start and finish shown apart, the
ratio to spawning `bash -c true` alone against the 2x target, the same with a command that
writes 100 files, and one-time costs (the fanotify probe; one full scan of the workspace).
Nothing outside the temporary directory is written.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from epistemic_agent.execute.observe.base import (
    DEFAULT_IGNORE,
    Changes,
    Observer,
    SnapshotObserver,
    WorkspaceObserver,
    snapshot,
)
from epistemic_agent.execute.sandbox.confinement import Confinement
from epistemic_agent.execute.sandbox.platform import detect
from epistemic_agent.execute.shell import run_shell

BARE = "`bash -c true` alone"
SEED = 20_261_130
TARGET = 2.0  # per-call cost of observing must be at most this times the bare spawn
QUIET = "true"
WRITER = "mkdir -p out && for i in $(seq 100); do echo $i > out/f$i; done && rm -r pkg0/mod0"


class NoObserver(WorkspaceObserver):
    """The control row: nothing observed."""

    method = "none"

    def start(self) -> None:
        pass

    def finish(self) -> Changes:
        return Changes(method=self.method)


def build(root: Path, files: int, dirs: int) -> None:
    per_dir = files // dirs
    for d in range(dirs):
        folder = root / f"pkg{d // 25}" / f"mod{d}"
        folder.mkdir(parents=True)
        for f in range(per_dir):
            (folder / f"file{f}.py").write_text(f"x = {f}\n")
    git = root / ".git" / "objects"
    for i in range(500):
        (git / f"{i:02x}"[:2]).mkdir(parents=True, exist_ok=True)
        (git / f"{i:02x}"[:2] / f"obj{i}").write_bytes(b"\0" * 64)


def spawn(ws: Path, command: str) -> None:
    subprocess.run(["bash", "-c", command], cwd=ws, stdin=subprocess.DEVNULL, check=True)


class EnforcedObserver(WorkspaceObserver):
    """Observation plus what a non-mutating act also pays: the session's confinement of an
    observation (the workspace read-only; built once, as a session does), applied by the
    session's executor."""

    def __init__(self, inner: Observer, confinement: Confinement) -> None:
        super().__init__(inner.workspace)
        self.inner = inner
        self.confinement = confinement
        self.method = f"{confinement.mechanism}+{inner.method}"
        self.scratch = Path(confinement.scratch)

    def start(self) -> None:
        self.inner.start()

    def finish(self) -> Changes:
        return self.inner.finish()

    def spawn(self, ws: Path, command: str) -> None:
        """The session's own executor: fork, restrict, exec (no subprocess preexec_fn)."""
        capture = (self.scratch / "out", self.scratch / "err")  # reused, as a session does
        launch = self.confinement.launch("collect-info", capture)
        run_shell(command, ws, 60, self.scratch, launch=launch, capture=capture)


def timed_call(observer: Observer, ws: Path, command: str) -> tuple[float, float, float]:
    t0 = time.perf_counter()
    observer.start()
    t1 = time.perf_counter()
    if isinstance(observer, EnforcedObserver):
        observer.spawn(ws, command)
    else:
        spawn(ws, command)
    t2 = time.perf_counter()
    observer.finish()
    t3 = time.perf_counter()
    return t1 - t0, t2 - t1, t3 - t2


def restore(ws: Path, command: str) -> None:
    """Undo the writer command so that every run sees the same workspace."""
    if command == WRITER:
        shutil.rmtree(ws / "out", ignore_errors=True)
        (ws / "pkg0" / "mod0").mkdir(exist_ok=True)
        for f in range(20):
            (ws / "pkg0" / "mod0" / f"file{f}.py").write_text(f"x = {f}\n")


Samples = dict[str, list[tuple[float, float, float]]]


def measure(observers: dict[str, Observer], ws: Path, command: str, runs: int) -> Samples:
    """Rounds over all rows in a shuffled order (so that a slow row does not always precede
    the same one); the bare `bash -c true` spawn is one of the rows."""
    order = [BARE, *observers]
    samples: Samples = {name: [] for name in order}
    shuffle = random.Random(SEED).shuffle
    for observer in observers.values():  # warm-up
        timed_call(observer, ws, command)
        restore(ws, command)
    for _ in range(runs):
        shuffle(order)
        for name in order:
            if name == BARE:
                started = time.perf_counter()
                spawn(ws, QUIET)
                samples[name].append((0.0, time.perf_counter() - started, 0.0))
            else:
                samples[name].append(timed_call(observers[name], ws, command))
                restore(ws, command)
    return samples


def median_ms(values: list[float]) -> float:
    return statistics.median(values) * 1e3


def p90_ms(values: list[float]) -> float:
    return statistics.quantiles(values, n=10)[-1] * 1e3


def table(samples: Samples, against: str) -> str:
    """One row per method: medians of start, spawn+wait, finish, the observer's own part
    (start + finish) and the whole call; the ratio is taken to the `against` row's call."""
    base = median_ms([sum(row) for row in samples[against]])
    verdicts = against == BARE
    lines = [
        "| method | start ms | spawn+wait ms | finish ms | observer ms | per call ms | p90 ms "
        f"| ratio to {'bare spawn' if verdicts else 'no observation'} |"
        + (f" target ≤ {TARGET:g}x |" if verdicts else ""),
        "|---|--:|--:|--:|--:|--:|--:|--:|" + (":-:|" if verdicts else ""),
    ]
    for name in [BARE, *(name for name in samples if name != BARE)]:
        rows = samples[name]
        totals = [sum(row) for row in rows]
        total = median_ms(totals)
        start, run, finish = (median_ms([row[i] for row in rows]) for i in range(3))
        own = median_ms([row[0] + row[2] for row in rows])
        cells = [name, f"{start:.3f}", f"{run:.2f}", f"{finish:.3f}", f"{own:.3f}"]
        cells += [f"{total:.2f}", f"{p90_ms(totals):.2f}", f"{total / base:.2f}x"]
        if verdicts:
            cells.append("" if name == BARE else "PASS" if total / base <= TARGET else "FAIL")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def once(action: Callable[[], object], repeats: int = 5) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--dirs", type=int, default=500)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-observe-") as tmp:
        ws = Path(tmp) / "ws"
        build(ws, args.files, args.dirs)
        report(ws, args)


def _confinement(ws: Path) -> Confinement:
    """The confinement a session would build for this workspace (its record folder guarded)."""
    scratch = Path(tempfile.mkdtemp(prefix="bench-observe-scratch-"))
    record = ws / ".epistemic"
    record.mkdir(exist_ok=True)
    return Confinement(detect(), ws, scratch, record, ())


def report(ws: Path, args: argparse.Namespace) -> None:
    ignored = frozenset(DEFAULT_IGNORE)
    started = time.perf_counter()
    from epistemic_agent.execute.observe import fanotify_kernel
    from epistemic_agent.execute.observe.fanotify import FanotifyObserver

    usable = fanotify_kernel.available(ws)
    probe_ms = (time.perf_counter() - started) * 1e3
    observers: dict[str, Observer] = {"no observation": NoObserver(ws)}
    if usable:
        observers["fanotify"] = FanotifyObserver(ws)
        confinement = _confinement(ws)
        if confinement.mechanism != "none":
            enforced = EnforcedObserver(FanotifyObserver(ws), confinement)
            observers[f"{enforced.method} (a non-mutating act)"] = enforced
    observers["snapshot"] = SnapshotObserver(ws)
    print(f"# Observation benchmark ({args.runs} runs per row, medians)\n")
    print(f"- workspace: {args.files:,} files in {args.dirs} directories (+500 in ignored .git)")
    print(f"- python {platform.python_version()}, kernel {platform.release()}, ", end="")
    print(f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}, euid {os.geteuid()}")
    print(f"- fanotify usable: {usable}" + ("" if usable else " (not root, or not supported)"))
    print(f"- python: `{sys.executable}`")
    quiet = measure(observers, ws, QUIET, args.runs)
    print("\n## Per call, command `bash -c true` (the target)\n")
    print(table(quiet, BARE))
    busy = measure(observers, ws, WRITER, max(5, args.runs // 2))
    print("\n## Per call, a command that writes 100 files and deletes a directory of 20 files\n")
    print("The command's own work is in spawn+wait (it varies with the machine's load); the")
    print("observer's own cost is start + finish.\n")
    print(table(busy, "no observation"))
    print("\n## One-time and reference costs\n")
    print("| what | ms |\n|---|--:|")
    print(f"| fanotify probe on first use (imports ctypes, makes the group) | {probe_ms:.2f} |")
    scan = once(lambda: snapshot(str(ws), ignored))
    print(f"| one full scan: os.scandir + lstat of every entry (the baseline) | {scan:.2f} |")
    walk = once(lambda: [os.lstat(os.path.join(d, f)) for d, _, fs in os.walk(ws) for f in fs])
    print(f"| one full scan: os.walk + os.lstat (no pruning of .git) | {walk:.2f} |")


if __name__ == "__main__":
    main()
