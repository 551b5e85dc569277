"""Benchmarks of the accountable tool layer: gate + journal + report overhead, verify, start-up.

Run from the repository root with the project's virtualenv:

    .venv/bin/python bench/bench_core.py             # full run (1.5 to 3 minutes on 2 cores)
    .venv/bin/python bench/bench_core.py --quick     # smoke run (seconds)
    .venv/bin/python bench/bench_core.py --profile   # also cProfile 100 calls at 10,000

It prints Markdown tables to stdout, in this order:

1. the per-call cost of `Session.call` (gate, journal, report, head anchor) with the command
   stubbed out, over the last 100 calls at session lengths 100, 1,000 and 10,000, for a mix
   of acts with 2% reverts and for the same mix without reverts;
2. a naive design on the same journals: append one line, then `report.rebuild` from scratch;
3. the cost of spawning `bash -c true` (timed amid the windows of 1), and how the executor's
   wait compares with a blocking one;
4. the overhead targets, PASS/FAIL;
5. `verify_journal` throughput on a synthetic 1,000,000-entry journal, in-process and via the CLI;
6. cold start of `epistemic exec ... -- true` against `python -c pass`, and `-X importtime`.

Everything is written under a temporary directory (tempfile's default, normally /tmp) that is
removed at the end. Nothing in the repository is modified. See bench/RESULTS.md for a run.
"""

from __future__ import annotations

import argparse
import cProfile
import datetime as dt
import hashlib
import io
import itertools
import json
import os
import platform
import pstats
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from unittest import mock

from epistemic_agent.core.layout import Layout
from epistemic_agent.core.vocabulary import is_mutating
from epistemic_agent.execute.shell import Execution, run_shell
from epistemic_agent.journal.log import FORMAT_VERSION, Position, Record, encode, line_hash
from epistemic_agent.journal.verify import verify_journal
from epistemic_agent.reports.rationale.report import rebuild
from epistemic_agent.session import session as session_module
from epistemic_agent.session import shell_step
from epistemic_agent.session.session import Session, Settings

WINDOW = 100  # calls timed at the end of each session length
SEED = 20_240_611
CLI = Path(sys.executable).parent / "epistemic"
COLD_REASON = "Check that the workspace is reachable before the real work starts on this task."


@dataclass(frozen=True)
class Config:
    """How much work each measurement does (full or --quick)."""

    lengths: tuple[int, ...]
    naive_samples: dict[int, int]
    spawn_runs: int
    verify_entries: int
    verify_repeats: int
    cold_runs: int


FULL = Config((100, 1_000, 10_000), {100: 100, 1_000: 20, 10_000: 5}, 200, 1_000_000, 3, 30)
QUICK = Config((100, 1_000), {100: 10, 1_000: 3}, 30, 100_000, 1, 5)


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
    package = Path(session_module.__file__).parent
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


# -- 1. session overhead with the command stubbed out ----------------------------------------


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


# -- 5. verify throughput --------------------------------------------------------------------


def session_line() -> Record:
    return {
        "kind": "session",
        "session": "5f1c" * 8,
        "started": "2026-01-01T00:00:00.000Z",
        "tool_version": "0.1.0",
        "workspace": "/tmp/bench-workspace",
        "git_head": None,
        "user": "bench",
        "host": "bench-host",
        "pid": 4242,
        "python": platform.python_version(),
    }


def synthetic_records(count: int) -> Iterator[Record]:
    """A session line, then call/outcome pairs shaped like the real ones (~300 bytes a line)."""
    yield session_line()
    for n in range(2, count + 1):
        seq = n // 2
        stamp = f"2026-01-01T{seq // 3600 % 24:02d}:{seq // 60 % 60:02d}:{seq % 60:02d}.000Z"
        if n % 2 == 0:
            template = GOOD_CALLS[seq % len(GOOD_CALLS)]
            yield {
                "kind": "call",
                "seq": seq,
                "t": stamp,
                "tool": "bash",
                "act": template.act,
                "mutating": is_mutating(template.act),
                "reason": template.reason,
                "command": template.command.format(i=seq % 100),
                "pid": 4242,
            }
        else:
            yield {
                "kind": "outcome",
                "seq": seq,
                "t": stamp,
                "ok": True,
                "outcome": "rc=0 — (no output)",
                "duration": 0.004213,
                "returncode": 0,
                "timed_out": False,
                "evidence": {},
            }


def write_journal(layout: Layout, count: int) -> Position:
    """A valid hash-chained journal of `count` lines and the head anchor that matches it."""
    layout.record.mkdir(parents=True, exist_ok=True)
    position = Position()
    batch: list[bytes] = []
    with layout.journal.open("wb") as out:
        for record in synthetic_records(count):
            full = {"prev": position.head, "n": position.lines + 1, "v": FORMAT_VERSION}
            full.update(record)
            body = encode(full)
            position.advance(body, full)
            batch.append(body)
            if len(batch) >= 10_000:
                out.write(b"\n".join(batch) + b"\n")
                batch.clear()
        if batch:
            out.write(b"\n".join(batch) + b"\n")
    layout.head.write_text(json.dumps(position.to_json()), encoding="ascii")
    return position


@dataclass(frozen=True)
class VerifyResult:
    entries: int
    size: int
    build: float
    in_process: Stats
    cli: Stats


def measure_verify(count: int, repeats: int, root: Path) -> VerifyResult:
    layout = Layout(root / "verify")
    started = time.perf_counter()
    position = write_journal(layout, count)
    build = time.perf_counter() - started
    os.sync()  # timed reads from a warm page cache, with no writeback of the build going on
    runs = []
    for _ in range(repeats):
        started = time.perf_counter()
        result = verify_journal(layout.journal, layout.head)
        runs.append(time.perf_counter() - started)
        assert result.status == "intact" and result.lines == count, result.to_json()
        assert not result.notes and result.head == position.head, result.to_json()
    cli_runs = []
    for _ in range(repeats):
        started = time.perf_counter()
        done = subprocess.run(
            [str(CLI), "verify", str(layout.workspace)], capture_output=True, text=True, check=False
        )
        cli_runs.append(time.perf_counter() - started)
        assert done.returncode == 0 and f"intact: {count} line(s)" in done.stdout, done
    size = layout.journal.stat().st_size
    shutil.rmtree(layout.workspace)
    return VerifyResult(count, size, build, Stats.of(runs), Stats.of(cli_runs))


# -- 6. cold start ---------------------------------------------------------------------------


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
    source = Path(session_module.__file__)
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


def print_targets(title: str, targets: Sequence[Target]) -> None:
    rows = [[t.name, t.value, t.limit, verdict(t.ok)] for t in targets]
    print_table(title, ["target", "measured", "limit", "result"], rows)


def report_verify(result: VerifyResult) -> Target:
    rate = result.entries / result.in_process.p50
    cli_rate = result.entries / result.cli.p50
    print_table(
        f"verify: {result.entries:,} entries, {result.size / 1e6:,.0f} MB "
        f"({result.size / result.entries:.0f} B/entry; built in {result.build:.1f} s)",
        ["how", "runs", "median s", "min s", "entries/s (median)"],
        [
            [
                "verify_journal() in-process",
                result.in_process.n,
                f"{result.in_process.p50:.2f}",
                f"{result.in_process.min:.2f}",
                f"{rate:,.0f}",
            ],
            [
                "`epistemic verify DIR` wall",
                result.cli.n,
                f"{result.cli.p50:.2f}",
                f"{result.cli.min:.2f}",
                f"{cli_rate:,.0f}",
            ],
        ],
    )
    return Target("verify_journal throughput", f"{rate:,.0f} entries/s", "≥ 200,000", rate >= 2e5)


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


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="smaller sizes: a smoke run")
    parser.add_argument(
        "--profile", action="store_true", help="also cProfile 100 calls at the largest length"
    )
    options = parser.parse_args(argv)
    if not CLI.exists():
        print(f"bench: no console script at {CLI}; run with the venv's python", file=sys.stderr)
        return 2
    print_table("Machine", ["what", "value"], machine())
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="epistemic-bench-") as tmp:
        targets = run_all(QUICK if options.quick else FULL, Path(tmp), options.profile)
    print_targets("All targets", targets)
    elapsed = time.perf_counter() - started
    print(f"\nTotal bench time {elapsed:.0f} s; load average at the end {load_average()}.")
    return 0


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
    verify = measure_verify(config.verify_entries, config.verify_repeats, root)
    targets.append(report_verify(verify))
    workspace = root / "cold"
    colds = [measure_cold_start(config.cold_runs, env, workspace) for env in python_envs(root)]
    targets += report_cold_start(colds)
    return targets


if __name__ == "__main__":
    sys.exit(main())
