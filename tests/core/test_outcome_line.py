"""The outcome line: a test runner's summary when the output holds one, and for a failure the
line that says why. pytest and unittest are run for real here; the other runners' outputs are
as they print them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from epistemic_agent.core.outcome_line import EXCERPT, excerpt, outcome_line, runner_summary

PASSING = "".join(f"def test_{n}():\n    assert {n!r}\n\n" for n in ("one", "two", "three"))
FAILING = 'def test_ok():\n    assert 1\n\ndef test_bad():\n    assert 1 == 2, "one is not two"\n'
UNITTEST_OK = (
    "import unittest\n\nclass T(unittest.TestCase):\n"
    "    def test_a(self):\n        self.assertEqual(1, 1)\n"
    "    def test_b(self):\n        self.assertEqual(2, 2)\n"
)
UNITTEST_BAD = UNITTEST_OK.replace("self.assertEqual(2, 2)", "self.assertEqual(1, 2)")


def run(folder: Path, *args: str, ci: bool = False) -> tuple[str, str, int]:
    """Run Python in `folder`; `ci`: as on a CI machine (pytest prints more there)."""
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "BUILD_NUMBER")}
    env.update({"CI": "true"} if ci else {})
    done = subprocess.run(
        [sys.executable, *args], cwd=folder, capture_output=True, text=True, timeout=120, env=env
    )
    return done.stdout, done.stderr, done.returncode


@pytest.mark.system  # end to end, slow for the default tier
@pytest.mark.parametrize("quiet", [True, False])
def test_a_passing_pytest_is_summed_up_by_its_tally_not_its_progress_dots(
    tmp_path: Path, quiet: bool
) -> None:
    (tmp_path / "test_a.py").write_text(PASSING)
    flags = ["-q"] if quiet else []
    stdout, stderr, code = run(tmp_path, "-m", "pytest", "-p", "no:cacheprovider", *flags)
    assert code == 0
    line = excerpt(stdout, stderr, failed=False)
    assert line.startswith("3 passed in ") and line.endswith("s"), line
    assert "[100%]" not in line and "=" not in line


@pytest.mark.system  # end to end, slow for the default tier
@pytest.mark.parametrize("ci", [False, True])
def test_a_failing_pytest_gives_its_tally_and_the_failed_assertion(
    tmp_path: Path, ci: bool
) -> None:
    (tmp_path / "test_b.py").write_text(FAILING)
    stdout, stderr, code = run(tmp_path, "-m", "pytest", "-q", "-p", "no:cacheprovider", ci=ci)
    assert code == 1
    line = outcome_line(stdout, stderr, failed=True)
    assert line.startswith("1 failed, 1 passed in ")
    assert line.endswith(": FAILED test_b.py::test_bad - AssertionError: one is not two")


def test_unittest_gives_how_many_ran_and_its_verdict(tmp_path: Path) -> None:
    (tmp_path / "ut_ok.py").write_text(UNITTEST_OK)
    (tmp_path / "ut_bad.py").write_text(UNITTEST_BAD)
    stdout, stderr, code = run(tmp_path, "-m", "unittest", "ut_ok")
    assert code == 0
    assert excerpt(stdout, stderr, failed=False).startswith("Ran 2 tests in ")
    assert excerpt(stdout, stderr, failed=False).endswith("s: OK")
    stdout, stderr, code = run(tmp_path, "-m", "unittest", "ut_bad")
    assert code == 1
    line = excerpt(stdout, stderr, failed=True)
    assert line.startswith("Ran 2 tests in ")
    assert line.endswith("s: FAILED (failures=1): AssertionError: 1 != 2"), line


CARGO_FAILED_OUT = """
running 2 tests
test tests::it_works ... ok
test tests::it_fails ... FAILED

failures:

---- tests::it_fails stdout ----

thread 'tests::it_fails' (31925) panicked at src/lib.rs:6:21:
assertion `left == right` failed: one is not two
  left: 1
 right: 2


failures:
    tests::it_fails

test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.10s

"""
CARGO_FAILED_ERR = """   Compiling rs v0.1.0 (/tmp/rs)
    Finished `test` profile [unoptimized + debuginfo] target(s) in 0.76s
     Running unittests src/lib.rs (target/debug/deps/rs-a35a48c092d3f767)
error: test failed, to rerun pass `--lib`
"""
GO_FAILED = (
    "--- FAIL: TestSum (0.00s)\n    sum_test.go:9: got 1, want 2\nFAIL\nexit status 1\n"
    "FAIL\texample.com/m\t0.002s\n"
)
JEST_FAILED_ERR = """FAIL ./sum.test.js
  ✕ adds (3 ms)

  ● adds

    expect(received).toBe(expected) // Object.is equality

    Expected: 4
    Received: 3

Test Suites: 1 failed, 1 total
Tests:       1 failed, 2 passed, 3 total
Snapshots:   0 total
Time:        0.412 s
Ran all test suites.
"""
VITEST_PASSED = """ ✓ sum.test.js (3 tests) 2ms

 Test Files  1 passed (1)
      Tests  3 passed (3)
   Start at  14:07:01
   Duration  312ms
"""


@pytest.mark.parametrize(
    ("stdout", "stderr", "failed", "expected"),
    [
        (
            CARGO_FAILED_OUT,
            CARGO_FAILED_ERR,
            True,
            "test result: FAILED. 1 passed; 1 failed; finished in 0.10s: tests::it_fails",
        ),
        (
            "\nrunning 3 tests\n...\ntest result: ok. 3 passed; 0 failed; 0 ignored; "
            "0 measured; 0 filtered out; finished in 0.00s\n\n",
            CARGO_FAILED_ERR.replace("error: test failed, to rerun pass `--lib`\n", ""),
            False,
            "test result: ok. 3 passed; 0 failed; finished in 0.00s",
        ),
        ("ok  \texample.com/m\t0.002s\n", "", False, "ok example.com/m 0.002s"),
        (GO_FAILED, "", True, "FAIL example.com/m 0.002s: sum_test.go:9: got 1, want 2"),
        ("", JEST_FAILED_ERR, True, "Tests: 1 failed, 2 passed, 3 total: Received: 3"),
        (VITEST_PASSED, "", False, "Tests 3 passed (3)"),
        (
            "compiling\n",
            "cc: error: no input files\nmake: *** [Makefile:2: all] Error 2\n",
            True,
            "cc: error: no input files",
        ),
        ("", "make: *** [Makefile:2: all] Error 2\n", True, "make: *** [Makefile:2: all] Error 2"),
        (
            "",
            "npm error missing script: tset\nnpm error A complete log of this run can be "
            "found in: /root/.npm/_logs/x-debug-0.log\n",
            True,
            "npm error missing script: tset",
        ),
    ],
)
def test_other_runners_summaries_and_wrappers(
    stdout: str, stderr: str, failed: bool, expected: str
) -> None:
    assert outcome_line(stdout, stderr, failed) == expected


def test_without_a_summary_the_old_choice_stands() -> None:
    assert excerpt("first\nsecond\n", "", failed=False) == "first"
    assert excerpt("out\n", "err one\nerr two\n", failed=True) == "err two"
    assert runner_summary("OK\n", "") is None  # a bare OK is no runner's verdict
    assert excerpt("OK\n", "", failed=False) == "OK"


@given(st.text(), st.text(), st.booleans())
def test_the_excerpt_is_one_line_of_what_was_printed_and_never_longer_than_its_cap(
    stdout: str, stderr: str, failed: bool
) -> None:
    line = excerpt(stdout, stderr, failed)
    assert len(line) <= EXCERPT
    assert "\n" not in line and "\r" not in line
    if not (stdout + stderr).strip():
        assert line == ""


@pytest.mark.system  # end to end, slow for the default tier
def test_the_live_view_and_the_record_pick_the_same_line(tmp_path: Path) -> None:
    """The live view's ✗ line shows what the outcome record keeps, from the same picker."""
    from epistemic_agent.agent.live.rows import finish_line
    from epistemic_agent.session.results import CallResult

    (tmp_path / "test_b.py").write_text(FAILING)
    stdout, stderr, code = run(tmp_path, "-m", "pytest", "-q", "-p", "no:cacheprovider")
    result = CallResult("ran", 3, "bash", "verify", returncode=code, stdout=stdout, stderr=stderr)
    shown = finish_line(result, 400).plain
    assert shown.endswith("· " + outcome_line(stdout, stderr, failed=True)), shown
    assert "1 failed, 1 passed in " in shown
