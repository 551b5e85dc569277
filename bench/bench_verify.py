"""Benchmark of `epistemic verify`: its throughput on a synthetic journal, in-process and via
the CLI.

Run from the repository root with the project's virtualenv:

    .venv/bin/python bench/bench_verify.py           # full run: 1,000,000 entries
    .venv/bin/python bench/bench_verify.py --quick   # smoke run: 100,000 entries (seconds)

The journal is a valid hash chain with a head anchor: a session line, then call/outcome pairs
shaped like the real ones (about 300 bytes a line). `verify_journal` reads it from a warm page
cache, then `epistemic verify DIR` does, each `--repeats` times; the table gives the median
and the entries per second, and the target is at least 200,000 entries a second in-process.

Everything is written under a temporary directory (tempfile's default, normally /tmp) that is
removed at the end. Nothing in the repository is modified. See bench/RESULTS.md for a run.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from timings import CLI, GOOD_CALLS, Stats, Target, print_table, run_bench

from epistemic_agent.core.layout import Layout
from epistemic_agent.core.vocabulary import is_mutating
from epistemic_agent.journal.log import FORMAT_VERSION, Position, Record, encode
from epistemic_agent.journal.verify import verify_journal

FULL = (1_000_000, 3)  # entries, repeats
QUICK = (100_000, 1)


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


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="smaller sizes: a smoke run")
    options = parser.parse_args(argv)
    entries, repeats = QUICK if options.quick else FULL
    return run_bench(lambda root: [report_verify(measure_verify(entries, repeats, root))])


if __name__ == "__main__":
    sys.exit(main())
