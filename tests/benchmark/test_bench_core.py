"""bench/bench_core.py, bench_verify.py and bench_exec_start.py run, quick, on this tree: a
script the results rest on that no longer runs is a defect, found here rather than when the
numbers are next wanted."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.system  # runs a benchmark script (minutes)

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("script", "table"),
    [
        ("bench_core", r"^\|\s+mix \|\s+100 \|(\s+[0-9,]+\s+\|){4}"),
        ("bench_verify", r"^\|\s+verify_journal\(\) in-process \|\s+1 \|"),
        ("bench_exec_start", r"^\|\s+`epistemic exec \.\.\. -- true`, bytecode cached"),
    ],
)
def test_a_bench_quick_prints_its_tables(script: str, table: str) -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / f"{script}.py"), "--quick"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    assert re.search(table, done.stdout, re.M), done.stdout
    assert "All targets" in done.stdout and "Total bench time" in done.stdout
