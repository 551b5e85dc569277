"""The oracles' own pieces: the refactors test-authoring requires tests to pass on really keep
every promise of dates.py (else a correct suite would fail), the verdict protocol, and
judgelib's suites, where a skipped or expected-failure test is never a success."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import textwrap
from datetime import date, timedelta
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from epistemic_agent.benchmark import TASKS_DIR, judgelib
from epistemic_agent.benchmark.judge import Private, launcher_argv, verdict_of

TASK = TASKS_DIR / "test-authoring"


def load(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"dates_{path.stem.replace('-', '_')}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ORIGINAL = load(TASK / "workspace" / "dates.py")
REFACTORS = [load(path) for path in sorted((TASK / "oracle-data").glob("refactor-*.py"))]


def outcome(function: Any, *args: Any) -> tuple[str, Any]:
    try:
        return "ok", function(*args)
    except Exception as error:  # the kind of failure is part of the behaviour
        return "raised", type(error).__name__


def test_there_are_three_refactors_and_they_are_not_the_original() -> None:
    sources = {path.read_text() for path in (TASK / "oracle-data").glob("refactor-*.py")}
    assert len(sources) == 3 and (TASK / "workspace" / "dates.py").read_text() not in sources


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet="0123456789dhmsDHMSxy \t\n-.", max_size=10))
def test_refactors_parse_durations_exactly_as_the_original(text: str) -> None:
    expected = outcome(ORIGINAL.parse_duration, text)
    assert [outcome(module.parse_duration, text) for module in REFACTORS] == [expected] * 3


@settings(max_examples=300, deadline=None)
@given(st.integers(min_value=-(10**6), max_value=10**8))
def test_refactors_format_durations_exactly_as_the_original(seconds: int) -> None:
    expected = outcome(ORIGINAL.format_duration, seconds)
    assert [outcome(module.format_duration, seconds) for module in REFACTORS] == [expected] * 3


@settings(max_examples=300, deadline=None)
@given(st.integers(min_value=0, max_value=3000), st.integers(min_value=-3, max_value=400))
def test_refactors_add_business_days_exactly_as_the_original(offset: int, days: int) -> None:
    start = date(2020, 1, 1) + timedelta(days=offset)
    expected = outcome(ORIGINAL.add_business_days, start, days)
    assert [outcome(m.add_business_days, start, days) for m in REFACTORS] == [expected] * 3


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(-5, 30), st.integers(-5, 30)), max_size=8))
def test_refactors_merge_intervals_exactly_as_the_original(
    intervals: list[tuple[int, int]],
) -> None:
    expected = outcome(ORIGINAL.merge_intervals, list(intervals))
    for module in REFACTORS:
        given = list(intervals)
        assert outcome(module.merge_intervals, given) == expected and given == intervals


def test_every_mutant_applies_once_and_changes_the_module() -> None:
    source = (TASK / "workspace" / "dates.py").read_text()
    mutants = json.loads((TASK / "oracle-data" / "mutants.json").read_text())
    assert len(mutants) == 8
    for spec in mutants.values():
        assert source.count(spec["old"]) == 1 and spec["old"] != spec["new"]


# -- the verdict protocol -------------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(
    st.integers(min_value=-15, max_value=5),
    st.lists(st.sampled_from(["PASS: ok", "FAIL: no", "", "  ", "noise", "ORACLE ERROR: x"])),
)
def test_a_verdict_is_its_exit_status_and_its_last_line_together(
    code: int, lines: list[str]
) -> None:
    verdict = verdict_of(code, "\n".join(lines), "")
    last = next((line.strip() for line in reversed(lines) if line.strip()), "")
    decided = (code == 0 and last.startswith("PASS:")) or (code == 1 and last.startswith("FAIL:"))
    assert verdict.passed == (code == 0 and last.startswith("PASS:"))
    assert (verdict.error is None) == decided


def oracle_run(tmp_path: Path, body: str, explain: bool) -> subprocess.CompletedProcess[str]:
    oracle = tmp_path / "oracle"
    oracle.write_text(
        "import sys\n"
        f"sys.path.insert(0, {str(Path(judgelib.__file__).parent)!r})\n"
        "import judgelib as j\n" + textwrap.dedent(body) + "\nj.main(judge)\n"
    )
    env = {"PATH": "/usr/bin:/bin", **({"EPISTEMIC_EXPLAIN_ORACLE": "1"} if explain else {})}
    return subprocess.run(
        [sys.executable, "-I", str(oracle), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env=env,
    )


def test_judgelib_main_prints_quiet_failures_and_tells_oracle_errors_apart(tmp_path: Path) -> None:
    failing = "def judge(ws):\n    j.fail('answers.json: people is wrong', 'got 4, expected 5')\n"
    quiet, loud = oracle_run(tmp_path, failing, False), oracle_run(tmp_path, failing, True)
    assert (quiet.returncode, quiet.stdout) == (1, "FAIL: answers.json: people is wrong\n")
    assert loud.stdout == "FAIL: answers.json: people is wrong [got 4, expected 5]\n"
    broken = oracle_run(tmp_path, "def judge(ws):\n    return {}['x']\n", False)
    assert broken.returncode == 3 and broken.stdout == "ORACLE ERROR: KeyError: 'x'\n"
    missing = oracle_run(tmp_path, "def judge(ws):\n    return j.read_json(ws, 'a.json')\n", True)
    assert missing.stdout == "FAIL: a.json does not exist\n"
    (tmp_path / "a.json").symlink_to("/etc/hostname")
    linked = oracle_run(tmp_path, "def judge(ws):\n    return j.read_json(ws, 'a.json')\n", False)
    assert linked.stdout == "FAIL: a.json is a symbolic link, not a file\n"


# -- suites ------------------------------------------------------------------------------------


@pytest.fixture
def launching(monkeypatch: pytest.MonkeyPatch) -> Any:
    private = Private()
    monkeypatch.setenv("EPISTEMIC_JUDGE_LAUNCHER", json.dumps(launcher_argv()))
    monkeypatch.setenv("EPISTEMIC_JUDGE_HIDE", json.dumps([str(private.root)]))
    monkeypatch.setenv("EPISTEMIC_JUDGE_SCRATCH", str(private.scratch))
    yield private
    private.remove()


SUITES = {
    "plain": ("def test_a(self): pass\n    def test_b(self): self.assertTrue(True)\n", True),
    "skip": (
        "@unittest.skip('later')\n    def test_a(self): pass\n    def test_b(self): pass\n",
        False,
    ),
    "xfail": ("@unittest.expectedFailure\n    def test_a(self): self.fail()\n", False),
    "xpass": ("@unittest.expectedFailure\n    def test_a(self): pass\n", False),
    "subtest": ("def test_a(self):\n        with self.subTest(1): self.fail()\n", False),
    "empty": ("pass\n", False),
    "fake-ok": (
        "def test_a(self):\n        print('Ran 9 tests'); print('OK'); import os; os._exit(0)\n",
        False,
    ),
}


@pytest.mark.parametrize("name", list(SUITES))
def test_only_a_suite_of_plain_successes_passes(launching: Any, name: str) -> None:
    body, passes = SUITES[name]
    with judgelib.scratch() as folder:
        (folder / "work").mkdir()
        module = f"import unittest\n\n\nclass T(unittest.TestCase):\n    {body}"
        (folder / "work" / "test_x.py").write_text(module)
        suite = judgelib.run_unittest(folder / "work", 60, names=["test_x"])
    assert suite.passed is passes, (name, suite.outcomes, suite.ran.tail())
    if not passes:
        assert suite.describe()


def test_judgelib_imports_the_same_names_beside_an_oracle_as_in_the_package() -> None:
    import ast

    tree = ast.parse(Path(judgelib.__file__).read_text())
    blocks = [node for node in tree.body if isinstance(node, ast.Try)]
    assert blocks
    for block in blocks:

        def bound(body: list[ast.stmt]) -> set[str]:
            names = set()
            for node in body:
                if isinstance(node, (ast.Import, ast.ImportFrom)):
                    names |= {alias.asname or alias.name for alias in node.names}
            return names

        assert bound(block.body) == bound(block.handlers[0].body)
