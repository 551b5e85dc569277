"""bench/bench_core.py runs, quick, on this tree: a script the results rest on that no longer
runs is a defect, found here rather than when the numbers are next wanted."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.system  # runs a benchmark script (minutes)

ROOT = Path(__file__).resolve().parents[2]


def test_bench_core_quick_prints_its_tables() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "bench_core.py"), "--quick"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    assert re.search(r"^\|\s+mix \|\s+100 \|(\s+[0-9,]+\s+\|){4}", done.stdout, re.M), done.stdout
    assert "Total bench time" in done.stdout
