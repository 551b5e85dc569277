"""The line of a call's output that its outcome shows (RATIONALE.md, `log`, `show`, the HTML
page, the live view, the model).

A test runner's summary says most about a run, so when the output holds one it is the line:
pytest's `3 passed in 0.12s`, unittest's `Ran 3 tests in 0.001s` with its `OK` or
`FAILED (failures=1)`, cargo's `test result: ok. 3 passed; ...`, go's `ok  pkg 0.01s` or
`FAIL pkg 0.01s`, jest's and vitest's `Tests: 1 failed, 2 passed, 3 total`.

A call that failed is explained by its last meaningful line: the exception after a Python
traceback, the assertion pytest reports (`FAILED t.py::test_x - AssertionError: ...`), the
shell's `command not found`; with a runner's summary, both (`1 failed, 1 passed in 0.1s:
FAILED t.py::test_x - ...`). Lines that explain nothing are skipped: blank ones, the carets and
tildes under a traceback's source line (`^^^^`, `~~~`), a rule of `=` or `-`, the runners'
summaries themselves, and the lines a wrapper adds after the failure it reports (make's
`*** [target] Error 1`, npm's pointer to its log, cargo's `error: test failed, to rerun ...`,
go's `exit status 1`, jest's `Ran all test suites.`).

A call that succeeded without a runner's summary is summed up by the first line it printed.
The whole output stays in the evidence (`epistemic show SEQ --output`).
"""

from __future__ import annotations

import re

EXCERPT = 100  # characters of the line an outcome record keeps
_DECORATION = re.compile(r"[\s^~=\-_*#.+|]*")  # carets, tildes, rules, bullets: no words
_TALLY = re.compile(
    r"=*\s*((\d+ (failed|passed|errors?|skipped|deselected|xfailed|xpassed|warnings?|rerun)"
    r",?\s*)+|no tests ran\s*)(in [\d.]+s( \([\d:]+\))?)?\s*=*",
    re.IGNORECASE,
)
#: The summaries test runners end with, each as the line it is shown as.
_SUMMARIES = (
    _TALLY,  # pytest
    re.compile(r"Ran \d+ tests? in [\d.]+s"),  # unittest, its verdict on the next line
    re.compile(r"(OK|FAILED)( \([a-z]+=\d+(, [a-z]+=\d+)*\))?"),  # unittest's verdict
    re.compile(r"test result: (ok|FAILED)\. \d+ passed; \d+ failed.*"),  # cargo test
    re.compile(r"(ok|FAIL)\s+\S+\s+(\(cached\)|[\d.]+s)(\s.*)?|ok\s+\S+\s+\[no test files\]"),  # go
    re.compile(r"Tests:\s+.*\d+ total"),  # jest
    re.compile(r"Tests\s+\d+ (passed|failed|skipped).*"),  # vitest
)
_ZEROS = re.compile(r"; 0 (ignored|measured|filtered out)")  # cargo's counts that say nothing
_UNITTEST_RAN = _SUMMARIES[1]
_UNITTEST_VERDICT = _SUMMARIES[2]
#: Lines a wrapper prints after the failure it reports: never the reason.
_WRAPPERS = re.compile(
    r"make(\[\d+\])?: \*\*\* .*Error \d+( \(ignored\))?"
    r"|npm (ERR!|error) (A complete log of this run can be found in:?.*|\s*/\S+\.log"
    r"|code \S+|path \S+|errno \S+|command failed|command sh -c .*|Lifecycle script .*)"
    r"|npm (ERR!|error)\s*"
    r"|error: test failed, to rerun pass .*"
    r"|Compiling \S+ v\d\S*( \(.*\))?|Finished .* target\(s\) in .*"
    r"|Running (unittests |tests/)?\S+ \(.*\)|Doc-tests \S+"
    r"|exit status \d+|FAIL"
    r"|Ran all test suites.*|Test Suites:\s+.*total|Snapshots:\s+.*total|Time:\s+[\d.]+ ?m?s.*"
    r"|Test Files\s+\d+ .*|Start at\s+[\d:]+|Duration\s+[\d.]+m?s.*"
)


def excerpt(stdout: str, stderr: str, failed: bool) -> str:
    """The line an outcome shows, cut to EXCERPT characters ('' when there is none)."""
    line = outcome_line(stdout, stderr, failed)
    return line if len(line) <= EXCERPT else line[: EXCERPT - 3] + "..."


def outcome_line(stdout: str, stderr: str, failed: bool) -> str:
    """The most informative line of a command's output, whole ('' when it printed nothing):
    the runner's summary, and for a failure the line that says why."""
    summary = runner_summary(stdout, stderr, failed)
    if failed:
        why = _test_failed(stdout) or _test_failed(stderr)
        why = why or last_meaningful(stderr) or last_meaningful(stdout)
        if summary and why:
            return f"{summary}: {why}"
        if summary or why:
            return summary or why or ""
        last = _last_wrapper(stderr) or _last_wrapper(stdout)
        if last:
            return last
    if summary:
        return summary
    return next((s.strip() for s in (stdout + "\n" + stderr).splitlines() if s.strip()), "")


def runner_summary(stdout: str, stderr: str, failed: bool = False) -> str | None:
    """The test runner's summary the output ends with, on one line; None when it holds none.
    Of several (go prints one per package), a failing one when the call failed, else the
    last."""
    found: list[str] = []
    for text in (stdout, stderr):
        previous = ""
        for raw in text.splitlines():
            line = raw.strip()
            if not line:
                continue
            if _UNITTEST_VERDICT.fullmatch(line):
                if _UNITTEST_RAN.fullmatch(previous):
                    found[-1] = f"{previous}: {line}"
            elif _is_summary(line):
                found.append(_ZEROS.sub("", " ".join(line.strip("= ").split())))
            previous = line
    if not found:
        return None
    failing = [s for s in found if re.search(r"fail|error", s, re.IGNORECASE)]
    return (failing or found)[-1] if failed else found[-1]


def last_meaningful(text: str) -> str | None:
    """The last line of `text` that says something, stripped; None when no line does."""
    for raw in reversed(text.splitlines()):
        line = raw.strip()
        if (
            line
            and not _DECORATION.fullmatch(line)
            and not _is_summary(line)
            and not _UNITTEST_VERDICT.fullmatch(line)
            and not _WRAPPERS.fullmatch(line)
        ):
            return line
    return None


#: pytest's short summary of one failed test: `FAILED test_b.py::test_bad - AssertionError: …`
#: (in CI, pytest prints the whole message after it, the assertion's own lines included).
_PYTEST_FAILED = re.compile(r"(FAILED|ERROR) \S+ - .+")


def _test_failed(text: str) -> str | None:
    """The last failed test a runner's short summary names, with why; None when none does."""
    for raw in reversed(text.splitlines()):
        line = raw.strip()
        if _PYTEST_FAILED.fullmatch(line):
            return line
    return None


def _is_summary(line: str) -> bool:
    return any(
        pattern.fullmatch(line) for pattern in _SUMMARIES if pattern is not _UNITTEST_VERDICT
    )


def _last_wrapper(text: str) -> str | None:
    """The last line a wrapper printed, when nothing else says anything."""
    for raw in reversed(text.splitlines()):
        if raw.strip() and not _DECORATION.fullmatch(raw.strip()):
            return raw.strip()
    return None
