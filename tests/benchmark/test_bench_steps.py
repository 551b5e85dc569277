"""bench/bench_steps.py runs, quick, on this tree, and its breakdown covers every step: a
step it can no longer find (renamed, moved) fails here, not when the numbers are next
wanted."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.system  # runs a benchmark script

ROOT = Path(__file__).resolve().parents[2]


def test_bench_steps_quick_prints_a_breakdown_with_every_step_timed() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "bench_steps.py"), "--quick"],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    rows = re.findall(r"^\| (?:↳ )?([^|]+?) \| ([0-9.]+) \| ([0-9.]+) \|$", done.stdout, re.M)
    steps = {name: (float(a), float(b)) for name, a, b in rows}
    for step in ("run (confined)", "fork and exec bash", "journal append (all records)"):
        assert steps[step][0] > 0 and steps[step][1] > 0, (step, done.stdout)
    assert "wall clock per call, everything in" in done.stdout
    assert re.search(r"^Per-call wall at 300 / at 200: [0-9.]+×", done.stdout, re.M)
