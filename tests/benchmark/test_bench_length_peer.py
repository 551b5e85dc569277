"""bench/bench_length.py and bench/bench_peer.py run, at smoke sizes, on this tree: a script the
results rest on that no longer runs is a defect, found here rather than when the numbers are next
wanted. Only the tables and the exit status are checked, never the timings.

bench_peer.py installs mini-swe-agent from the registry into a virtualenv of its own; that runs
only when EPISTEMIC_BENCH_PEER=1, as `.ci/run` sets it (otherwise `--no-peer`: our side and the
floor alone)."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from conftest import ROOT

pytestmark = pytest.mark.system  # runs benchmark scripts

ROW = r"\|\s+[0-9.]+\s+\|"  # a cell holding a number


def bench(script: str, *args: str, timeout: float = 280) -> str:
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / script), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    assert (
        "Sessions ran with confinement" in done.stdout or "Ours ran with confinement" in done.stdout
    )
    assert "### Targets" in done.stdout and re.search(r"\| (PASS|FAIL) \|$", done.stdout, re.M)
    assert "Total bench time" in done.stdout
    return done.stdout


def test_bench_length_prints_run_and_mcp_costs_at_each_length() -> None:
    out = bench("bench_length.py", "--calls", "20,40", "--rounds", "1")
    assert re.search(r"^\| 40 \| 21–40 \| 1 " + ROW + r"\s+[0-9.]+× \|\s+[0-9.]+ \|$", out, re.M), (
        out
    )
    mcp = out.split("`epistemic mcp`", 1)[1]
    assert re.search(r"^\| 20 \| 11–20 \| 1 " + ROW, mcp, re.M), out
    assert re.search(
        r"^\| mcp: at 40 ÷ at 20 calls \| ≤ 1.2× \| [0-9.]+× \| (PASS|FAIL) \|$", out, re.M
    )


def test_bench_peer_without_the_peer_prints_our_per_step_cost() -> None:
    out = bench("bench_peer.py", "--no-peer", "--steps", "5,10", "--rounds", "1")
    assert re.search(r"^\| 10 \| 1 " + ROW + r" not run \| not run \|", out, re.M), out
    assert re.search(r"^\| 10 \| ours ≤ 4× bash -c true \| [0-9.]+× \| (PASS|FAIL) \|$", out, re.M)


@pytest.mark.timeout(900)
@pytest.mark.skipif(
    os.environ.get("EPISTEMIC_BENCH_PEER") != "1",
    reason="installs mini-swe-agent from the registry: set EPISTEMIC_BENCH_PEER=1",
)
def test_bench_peer_side_by_side_with_mini_swe_agent() -> None:
    out = bench("bench_peer.py", "--steps", "5,10", "--rounds", "1", timeout=900)
    assert re.search(r"^\| 10 \| 1 " + ROW + ROW[2:] * 3 + r"\s+[0-9.]+× \|", out, re.M), out
    assert re.search(r"^\| 10 \| ours ≤ 0.5× mini \(its `mini` command\) \|", out, re.M), out
