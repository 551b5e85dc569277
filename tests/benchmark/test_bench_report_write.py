"""bench/bench_report_write.py, run as bench/RESULTS.md section 15 runs it (quick): a table of
every way of writing the report and the anchor, each timed."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_bench_prints_a_time_for_every_way_of_writing() -> None:
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "bench_report_write.py"),
            "--quick",
            "--size",
            "4000",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    rows = re.findall(r"^\| (.+) \| ([0-9.]+) \|$", done.stdout, re.M)
    assert [name.split(",")[0] for name, _ in rows] == ["RATIONALE.md"] * 3 + ["head.json"] * 3
    assert all(float(micros) > 0 for _, micros in rows)


def test_bad_input_is_a_usage_error() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "bench_report_write.py"), "--size", "many"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and "Traceback" not in done.stderr
