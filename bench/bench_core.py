"""Benchmark of recording a call: the gate + journal + report overhead of `Session.call`.

Run from the repository root with the project's virtualenv:

    .venv/bin/python bench/bench_core.py             # full run (1 to 2 minutes on 2 cores)
    .venv/bin/python bench/bench_core.py --quick     # smoke run (seconds)
    .venv/bin/python bench/bench_core.py --profile   # also cProfile 100 calls at 10,000

It prints Markdown tables to stdout, in this order:

1. the per-call cost of `Session.call` (gate, journal, report, head anchor) with the command
   stubbed out, over the last 100 calls at session lengths 100, 1,000 and 10,000, for a mix
   of acts with 2% reverts and for the same mix without reverts;
2. a naive design on the same journals: append one line, then `report.rebuild` from scratch;
3. the cost of spawning `bash -c true` (timed amid the windows of 1), and how the executor's
   wait compares with a blocking one;
4. the overhead targets, PASS/FAIL.

`epistemic verify`'s throughput is measured by bench_verify.py, and `epistemic exec`'s cold
start by bench_exec_start.py.

Everything is written under a temporary directory (tempfile's default, normally /tmp) that is
removed at the end. Nothing in the repository is modified. See bench/RESULTS.md for a run.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import itertools
import os
import pstats
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from unittest import mock

from timings import GOOD_CALLS, Stats, Target, print_table, print_targets, run_bench, us

from epistemic_agent.core.layout import Layout
from epistemic_agent.execute.shell import Execution, run_shell
from epistemic_agent.journal.log import FORMAT_VERSION, Record, encode, line_hash
from epistemic_agent.reports.rationale.report import rebuild
from epistemic_agent.session import shell_step
from epistemic_agent.session.session import Session, Settings

WINDOW = 100  # calls timed at the end of each session length
SEED = 20_240_611


@dataclass(frozen=True)
class Config:
    """How much work each measurement does (full or --quick)."""

    lengths: tuple[int, ...]
    naive_samples: dict[int, int]
    spawn_runs: int


FULL = Config((100, 1_000, 10_000), {100: 100, 1_000: 20, 10_000: 5}, 200)
QUICK = Config((100, 1_000), {100: 10, 1_000: 3}, 30)


# -- 1. session overhead with the command stubbed out ----------------------------------------


#: Calls the gate refuses, each for a different rule (10% of the mix in total).
BAD_CALLS: tuple[dict[str, str], ...] = (
    {"command": "ls -la src/ tests/ docs/", "type": "collect-info", "reason": "look"},
    {"command": "cat setup.cfg pyproject.toml", "reason": "See how the package is configured."},
    {"command": "cat README.md", "type": "explore", "reason": "Read the project overview first."},
    {"command": "python -m pytest -q tests", "type": "verify", "reason": "run pytest -q on tests"},
    {
        "command": "python -m pytest -q tests/test_rows.py",
        "type": "test-hypothesis",
        "reason": "Check what the row parser does with an empty trailing line in the input.",
    },
)
BAD_WEIGHT = 10


def call_mix(reverts: bool = True, seed: int = SEED) -> Iterator[dict[str, str]]:
    """An endless, reproducible stream of bash arguments: a mix of acts, ~10% rejected.

    Without `reverts`, the revert share goes to collect-info (the report's dead-ends
    section then stays empty).
    """
    rng = random.Random(seed)
    templates = [t for t in GOOD_CALLS if reverts or t.act != "revert"]
    weights = [t.weight for t in templates] + [BAD_WEIGHT]
    if not reverts:
        weights[0] += next(t.weight for t in GOOD_CALLS if t.act == "revert")
    kinds = [*templates, None]
    for i in itertools.count(1):
        kind = rng.choices(kinds, weights)[0]
        if kind is None:
            yield dict(rng.choice(BAD_CALLS))
        else:
            yield {
                "command": kind.command.format(i=i % 100),
                "type": kind.act,
                "reason": kind.reason,
            }


def stub_run_shell(
    command: str, cwd: Path, timeout: float, scratch: Path, **_options: object
) -> Execution:
    """`run_shell`'s contract without running anything: two empty output files, rc 0."""
    scratch.mkdir(parents=True, exist_ok=True)
    capture = _options.get("capture")
    paths: list[Path] = []
    for index, suffix in enumerate(("out", "err")):
        if isinstance(capture, tuple):  # the session's reusable capture files, as run_shell
            path = capture[index]
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644))
        else:
            handle, name = tempfile.mkstemp(prefix="call-", suffix="." + suffix, dir=scratch)
            os.close(handle)
            path = Path(name)
        paths.append(path)
    return Execution(0, False, 0.0, paths[0], paths[1], False)


@dataclass
class Track:
    """One session on its own workspace, driven to one length; the samples of its window."""

    label: str
    length: int
    session: Session
    calls: Iterator[dict[str, str]]
    samples: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    rejected: int = 0

    def call(self) -> tuple[float, float]:
        """One call: (wall seconds, CPU seconds of this process, user + system)."""
        args = next(self.calls)
        cpu, started = time.process_time(), time.perf_counter()
        result = self.session.call("bash", args)
        elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
        self.rejected += result.status == "rejected"
        return elapsed, cpu

    def timed_call(self) -> None:
        elapsed, cpu = self.call()
        self.samples.append(elapsed)
        self.cpu.append(cpu)

    def fill(self) -> None:
        """Up to length - WINDOW calls through `session.call`, quickly: the gate, journal
        appends and fsyncs, the fold and page turns all run, but RATIONALE.md and the head
        anchor are written once at the end instead of after every append."""
        with mock.patch.object(self.session._recorder, "publish", lambda: None):
            while self.session.journal.position.last_seq < self.length - WINDOW:
                self.call()
        with self.session.journal.locked():
            self.session._recorder.publish()


@dataclass(frozen=True)
class Point:
    """The timed window at one session length, and the state of the report there."""

    stats: Stats
    cpu: Stats
    dead_ends: int
    report_bytes: int
    pages: int
    rejected: int
    snapshot: Path

    @classmethod
    def of(cls, track: Track, root: Path) -> Point:
        session = track.session
        assert session.journal.position.last_seq == track.length
        snapshot = root / f"journal-{track.label}-{track.length}.jsonl"
        shutil.copyfile(session.layout.journal, snapshot)
        return cls(
            Stats.of(track.samples),
            Stats.of(track.cpu),
            len(session.state.tally.reverts),
            session.layout.report.stat().st_size,
            session.report.totals.page,
            track.rejected,
            snapshot,
        )


@dataclass(frozen=True)
class Overhead:
    """Per-call cost at each length, for each mix, and `bash -c true` timed alongside."""

    points: dict[tuple[str, int], Point]
    spawn: Stats
    profile: str


MIXES = {"mix": True, "mix-no-reverts": False}


def measure_overhead(lengths: Sequence[int], root: Path, profile: bool) -> Overhead:
    """One session per (mix, length), filled to length - WINDOW; then the last WINDOW calls
    are timed round-robin across all sessions, with two `bash -c true` spawns per round, so
    that the machine's drift and noise hit every length and the spawn baseline alike."""
    with mock.patch.object(shell_step, "run_shell", stub_run_shell), ExitStack() as stack:
        tracks = []
        for label, reverts in MIXES.items():
            for length in lengths:
                workspace = root / f"{label}-{length}"
                workspace.mkdir()
                # gate + journal + report: observation and enforcement have their own
                # benchmark (bench_observe.py) and are off here, as the command is stubbed
                session = stack.enter_context(
                    Session(workspace, Settings(observe=False, enforce=False))
                )
                tracks.append(Track(label, length, session, call_mix(reverts)))
        for track in tracks:
            track.fill()
        os.sync()  # the fill's writeback should not land on the timed windows
        spawns = []
        for _ in range(WINDOW):
            for track in tracks:
                track.timed_call()
            spawns += [spawn_once(), spawn_once()]
        points = {(t.label, t.length): Point.of(t, root) for t in tracks}
        text = profile_window(tracks[len(lengths) - 1]) if profile else ""
    return Overhead(points, Stats.of(spawns), text)


def profile_window(track: Track) -> str:
    """cProfile over WINDOW more calls of a track (after its timed window)."""
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(WINDOW):
        track.call()
    profiler.disable()
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out)
    stats.sort_stats("tottime").print_stats(15)
    stats.sort_stats("cumulative").print_stats("epistemic_agent", 20)
    return out.getvalue()


def measure_stub(runs: int, root: Path) -> Stats:
    """What the stub itself costs (two mkstemp files), to show how much of the overhead it is."""
    scratch = root / "stub"
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        done = stub_run_shell("true", root, 1.0, scratch)
        samples.append(time.perf_counter() - started)
        done.discard()
    return Stats.of(samples)


# -- 2. the naive design: append, then re-read and re-render everything ------------------------


def naive_record(seq: int) -> Record:
    return {
        "kind": "call",
        "seq": seq,
        "t": "2026-01-01T00:00:00.000Z",
        "tool": "bash",
        "act": "collect-info",
        "mutating": False,
        "reason": GOOD_CALLS[0].reason,
        "command": GOOD_CALLS[0].command.format(i=seq % 100),
        "pid": 4242,
    }


def measure_naive(snapshot: Path, samples: int, root: Path) -> Stats:
    """Per call: append one chained JSON line (no fsync), then `rebuild` the whole report."""
    workspace = root / f"naive-{snapshot.stem}"
    layout = Layout(workspace)
    layout.record.mkdir(parents=True)
    shutil.copyfile(snapshot, layout.journal)
    position = rebuild(layout)  # warm-up, untimed; also gives the chain head
    head, lines, seq = position.head, position.lines, position.last_seq
    timings = []
    for _ in range(samples):
        seq += 1
        lines += 1
        body = encode({"prev": head, "n": lines, "v": FORMAT_VERSION, **naive_record(seq)})
        started = time.perf_counter()
        with layout.journal.open("ab") as out:
            out.write(body + b"\n")
        rebuild(layout)
        timings.append(time.perf_counter() - started)
        head = line_hash(body)
    shutil.rmtree(workspace)
    return Stats.of(timings)


# -- 3. spawning a process -------------------------------------------------------------------


def spawn_once() -> float:
    started = time.perf_counter()
    subprocess.run(["bash", "-c", "true"], check=True)
    return time.perf_counter() - started


def popen_wait(command: str, timeout: float | None) -> float:
    """Wall time of Popen(bash -c command) then wait(): blocking, or polling if timeout."""
    started = time.perf_counter()
    process = subprocess.Popen(["bash", "-c", command], stdin=subprocess.DEVNULL)
    process.wait(timeout=timeout)
    return time.perf_counter() - started


def executor_once(command: str, root: Path) -> float:
    started = time.perf_counter()
    done = run_shell(command, root, 120.0, root / "run-shell")
    elapsed = time.perf_counter() - started
    done.discard()
    return elapsed


def measure_spawn_context(runs: int, root: Path) -> list[tuple[str, Stats]]:
    """How the executor's wait compares with a blocking wait (variants alternated)."""
    variants: list[tuple[str, Callable[[str], float]]] = [
        ("`Popen(...).wait()` (blocking)", lambda c: popen_wait(c, None)),
        ("`Popen(...).wait(timeout=120)` (polls)", lambda c: popen_wait(c, 120.0)),
        ("`executor.run_shell(...)`", lambda c: executor_once(c, root)),
    ]
    rows = []
    for command, count in (("true", runs), ("sleep 0.02", max(10, runs // 4))):
        samples: list[list[float]] = [[] for _ in variants]
        for _ in range(count):
            for (_, run), taken in zip(variants, samples, strict=True):
                taken.append(run(command))
        rows += [
            (f"{name}, `bash -c '{command}'`", Stats.of(taken))
            for (name, _), taken in zip(variants, samples, strict=True)
        ]
    return rows


# -- reporting -------------------------------------------------------------------------------


OVERHEAD_HEADERS = (
    *("mix", "calls", "mean", "p50", "p95", "CPU mean"),
    *("rejected", "pages", "dead ends", "RATIONALE kB"),
)


def report_overhead(over: Overhead, stub: Stats) -> None:
    rows = []
    for (label, length), point in over.points.items():
        ours, kb = point.stats, f"{point.report_bytes / 1e3:,.1f}"
        times = [us(ours.mean), us(ours.p50), us(ours.p95), us(point.cpu.mean)]
        rejected = f"{point.rejected} ({100 * point.rejected / length:.0f}%)"
        rows.append([label, f"{length:,}", *times, rejected, point.pages, point.dead_ends, kb])
    print_table(
        f"Per-call cost of Session.call, µs, command stubbed out (last {WINDOW} calls)",
        OVERHEAD_HEADERS,
        rows,
    )
    print(
        f"\nThe stub executor alone (two mkstemp files, unlinked later) costs {us(stub.mean)} µs"
        f" mean (p50 {us(stub.p50)}); it is included above, as the real executor does the same."
    )


def report_naive(over: Overhead, naive: dict[int, Stats]) -> None:
    rows = []
    for length, base in naive.items():
        ours = over.points["mix", length].stats
        ratio = f"{base.mean / ours.mean:,.1f}×"
        rows.append([f"{length:,}", us(ours.mean), base.n, us(base.mean), us(base.p50), ratio])
    print_table(
        "Naive design (append + `report.rebuild`) vs ours (mix), µs per call",
        ["calls", "ours mean", "naive n", "naive mean", "naive p50", "naive / ours"],
        rows,
    )


def report_spawn(spawn: Stats, context: list[tuple[str, Stats]]) -> None:
    rows = [("`subprocess.run(['bash', '-c', 'true'])`, amid the windows", spawn), *context]
    print_table(
        "Process spawn, µs",
        ["what", "n", "mean", "p50", "p95"],
        [[name, s.n, us(s.mean), us(s.p50), us(s.p95)] for name, s in rows],
    )


def overhead_targets(over: Overhead, label: str) -> list[Target]:
    lengths = sorted(length for name, length in over.points if name == label)
    first = over.points[label, lengths[0]].stats
    last = over.points[label, lengths[-1]].stats
    growth, versus = last.mean / first.mean, last.mean / over.spawn.mean
    return [
        Target(
            f"{label}: per-call mean at {lengths[-1]:,} / at {lengths[0]:,}",
            f"{growth:.2f}× (p50 {last.p50 / first.p50:.2f}×)",
            "≤ 1.5×",
            growth <= 1.5,
        ),
        Target(
            f"{label}: per-call mean at {lengths[-1]:,} / `bash -c true` spawn",
            f"{versus:.2f}× ({us(last.mean)} vs {us(over.spawn.mean)} µs; "
            f"p50 {last.p50 / over.spawn.p50:.2f}×)",
            "≤ 0.5×",
            versus <= 0.5,
        ),
    ]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="smaller sizes: a smoke run")
    parser.add_argument(
        "--profile", action="store_true", help="also cProfile 100 calls at the largest length"
    )
    options = parser.parse_args(argv)
    config = QUICK if options.quick else FULL
    return run_bench(lambda root: run_all(config, root, options.profile))


def run_all(config: Config, root: Path, profile: bool) -> list[Target]:
    over = measure_overhead(config.lengths, root, profile)
    naive = {
        length: measure_naive(over.points["mix", length].snapshot, samples, root)
        for length, samples in config.naive_samples.items()
    }
    report_overhead(over, measure_stub(200, root))
    report_naive(over, naive)
    report_spawn(over.spawn, measure_spawn_context(config.spawn_runs, root))
    targets = [t for label in MIXES for t in overhead_targets(over, label)]
    print_targets("Overhead targets", targets)
    if over.profile:
        print(f"\n### cProfile: {WINDOW} more calls of mix at {config.lengths[-1]:,}\n")
        print("```\n" + over.profile.strip() + "\n```")
    return targets


if __name__ == "__main__":
    sys.exit(main())
