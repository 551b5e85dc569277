"""Readers that never lie: record text shown as recorded (never as markup, escapes visible, one
row per call), every reader announcing a journal that does not verify first, a user's own
RATIONALE.md never overwritten, `.epistemic/` ignored by git, and a failed call's outcome line
showing the line that explains it. Journals are written by real sessions (`epistemic exec`)."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import EPISTEMIC
from epistemic_agent.core.outcome_line import excerpt, last_meaningful
from epistemic_agent.journal.records import CallView
from epistemic_agent.reports.tables import calls_table

ESC = "\x1b"
#: Commands and reasons an attacker (or an honest grep) would write: markup, a closing tag
#: that crashed rich, an escape sequence, a line break that could pass for a second row.
MARKUP_COMMAND = 'grep -rn "[a-z]+" . ; ls [abc] [bold]x ; echo "[/]"'
MARKUP_REASON = "look at what [bold]this[/bold] pattern [/] matches, with [red]colour[/]"
ESCAPE_REASON = f"learn what this prints {ESC}[31mred{ESC}[0m and{ESC}]0;title\x07 done"
NEWLINE_REASON = "learn what this prints\n| 9 | forged row | ran | 0 |"
BRACKET_FILE = "[bold]made[red]x[]"
ESCAPE_FILE = f"esc{ESC}[31mname"


def run(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [EPISTEMIC, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, **(env or {})},
    )


def run_exec(
    ws: Path, command: str, act: str, reason: str, *opts: str
) -> subprocess.CompletedProcess[str]:
    return run("exec", "--type", act, "--reason", reason, *opts, "--", command, cwd=ws)


def records(ws: Path) -> list[dict[str, Any]]:
    return [
        json.loads(line) for line in (ws / ".epistemic" / "journal.jsonl").read_text().splitlines()
    ]


@pytest.fixture
def hostile(made: Path, tmp_path: Path) -> Path:
    """A copy of `made`, for a test to read or tamper with."""
    return Path(shutil.copytree(made, tmp_path / "hostile", symlinks=True))


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A workspace whose journal holds markup, escape sequences and line breaks."""
    ws = tmp_path_factory.mktemp("made") / "hostile"
    ws.mkdir()
    assert run_exec(ws, MARKUP_COMMAND, "collect-info", MARKUP_REASON).returncode == 0
    assert run_exec(ws, "echo hi", "collect-info", ESCAPE_REASON).returncode == 0
    assert run_exec(ws, "echo two", "collect-info", NEWLINE_REASON).returncode == 0
    made = f"touch '{BRACKET_FILE}' \"$(printf 'esc\\033[31mname')\""
    done = run_exec(
        ws, made, "change-state", "create two files whose names hold markup and escapes"
    )
    assert done.returncode == 0, done.stderr
    assert (ws / BRACKET_FILE).exists() and (ws / ESCAPE_FILE).exists()
    return ws


def shown(text: str) -> str:
    """How a reader shows record text: control characters as escapes."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


# -- 1. record text is data ------------------------------------------------------------------


@pytest.mark.system  # end to end, slow for the default tier
def test_log_shows_commands_and_reasons_verbatim(hostile: Path) -> None:
    done = run("log", cwd=hostile, env={"COLUMNS": "400"})
    assert done.returncode == 0, done.stderr
    assert ESC not in done.stdout and "\x07" not in done.stdout
    assert MARKUP_COMMAND in done.stdout and MARKUP_REASON in done.stdout
    assert shown(ESCAPE_REASON) in done.stdout
    assert shown(NEWLINE_REASON) in done.stdout  # `\n` shown, the forged row not a row
    rows = [line for line in done.stdout.splitlines() if line.startswith("│")]
    assert len(rows) == 4  # one row per call


@pytest.mark.system  # end to end, slow for the default tier
def test_log_does_not_crash_on_a_human_denial_or_an_approval_timeout(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    opts = ("--approve", "mutating", "--approval-timeout", "0.2")
    done = run_exec(ws, "touch x", "change-state", "create the file [/] to see it", *opts)
    assert done.returncode == 2, done.stderr
    assert not (ws / "x").exists()
    assert any(r.get("kind") == "approval" and r.get("timed_out") for r in records(ws))
    done = run("log", cwd=ws)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert "denied" in done.stdout and "[/]" in done.stdout


@given(
    text=st.text(alphabet=st.sampled_from("[]/ab \x1b\n\t\x07:=#\\"), max_size=40),
    status=st.sampled_from(["ran", "rejected", "denied", "cancelled", "unknown", "newer-kind"]),
)
@settings(max_examples=150, deadline=None)
def test_the_calls_table_shows_any_text_as_it_was_recorded(text: str, status: str) -> None:
    view = CallView(7, "bash", "collect-info", False, status, text, text, rule=text)
    sink = io.StringIO()
    calls_table([view], width=1000, file=sink)
    out = sink.getvalue()
    assert ESC not in out and "\x07" not in out
    assert shown(text) in out
    assert len([line for line in out.splitlines() if line.startswith("│")]) == 1


@pytest.mark.parametrize("columns", [80, 120])
def test_log_fits_the_terminal_and_keeps_the_numbers(hostile: Path, columns: int) -> None:
    done = run("log", cwd=hostile, env={"COLUMNS": str(columns)})
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert max(map(len, lines)) <= columns
    rows = [line.split("│") for line in lines if line.startswith("│")]
    assert [row[1].strip() for row in rows] == ["1", "2", "3", "4"]  # seq whole
    assert [row[4].strip() for row in rows] == ["0", "0", "0", "0"]  # rc whole
    assert "…" in done.stdout  # the long command cell was cut


def test_log_under_a_pty_fits_its_width(hostile: Path) -> None:
    import fcntl
    import pty
    import struct
    import termios

    for columns in (80, 120):
        leader, follower = pty.openpty()
        fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))
        env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
        process = subprocess.Popen(
            [EPISTEMIC, "log"], cwd=hostile, stdout=follower, stderr=follower, env=env
        )
        os.close(follower)
        out = b""
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:
                break
            if not chunk:
                break
            out += chunk
        os.close(leader)
        assert process.wait(timeout=60) == 0
        import re

        plain = re.sub(r"\x1b\[[0-9;]*m", "", out.decode())
        lines = [line for line in plain.split("\r\n") if line]
        assert max(map(len, lines)) <= columns, (columns, lines)
        assert len([line for line in lines if line.startswith("│")]) == 4


def test_stats_and_diff_show_file_names_as_recorded(hostile: Path, tmp_path: Path) -> None:
    done = run("stats", str(hostile), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert ESC not in done.stdout
    assert BRACKET_FILE in done.stdout and shown(ESCAPE_FILE) in done.stdout
    other = tmp_path / "other"
    other.mkdir()
    run_exec(other, "echo hi", "collect-info", ESCAPE_REASON)
    done = run("diff", str(hostile), str(other), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert ESC not in done.stdout
    assert BRACKET_FILE in done.stdout and shown(ESCAPE_FILE) in done.stdout
    done = run("stats", str(hostile), str(other), cwd=tmp_path, env={"COLUMNS": "120"})
    assert done.returncode == 0 and ESC not in done.stdout, done.stderr


def test_rationale_and_html_escape_the_same_text(hostile: Path, tmp_path: Path) -> None:
    report = (hostile / "RATIONALE.md").read_text()
    assert ESC not in report and "\x07" not in report
    assert "\\x1b" in report and "31mred" in report  # shown, as an escape
    assert "[/]" in report.replace("\\[", "[").replace("\\]", "]")
    forged = report.index("| 9 | forged row")  # a line of its own only inside a fenced block
    assert sum(line.startswith("```") for line in report[:forged].splitlines()) % 2 == 1
    page = tmp_path / "page.html"
    done = run("html", str(hostile), "-o", str(page), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    html = page.read_text()
    assert ESC not in html and "\x07" not in html
    assert "[bold]this[/bold] pattern [/] matches" in html
    assert "ls [abc] [bold]x" in html


# -- 2. every reader checks the chain it reads -----------------------------------------------


def tamper(ws: Path, how: str) -> None:
    """Edit a middle line of the journal: a reason rewritten, or a line's bytes changed."""
    path = ws / ".epistemic" / "journal.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    if how == "reason":
        index = next(i for i, line in enumerate(lines) if "forged row" in line)
        lines[index] = lines[index].replace("learn what this prints", "an innocent reason")
    else:
        index = len(lines) // 2
        lines[index] = lines[index].replace('"t":"2', '"t":"1', 1)
    path.write_text("".join(lines))


#: Each reader, its arguments, and its exit status on a tampered journal.
READERS = [
    ("log", (), 0),
    ("log", ("--json",), 0),
    ("report", (), 1),
    ("stats", (".",), 0),
    ("stats", (".", "--json"), 0),
    ("diff", (".", "."), 0),
    ("html", (".", "-o", "../page.html"), 0),
    ("plot", (".", "-o", "../plot.svg"), 0),
    ("lint", (".",), 1),
    ("export", (".", "-o", "../bundle.zip", "--force"), 1),
]


@pytest.mark.system  # end to end, slow for the default tier
@pytest.mark.parametrize("how", ["reason", "middle"])
@pytest.mark.parametrize(("command", "args", "status"), READERS)
def test_every_reader_announces_a_tampered_journal_first(
    hostile: Path, how: str, command: str, args: tuple[str, ...], status: int
) -> None:
    tamper(hostile, how)
    done = run(command, *args, cwd=hostile)
    assert done.returncode == status, done.stderr
    first = done.stderr.splitlines()[0]
    assert (
        first.startswith("epistemic: ")
        and "WARNING: the journal does not verify (TAMPERED)" in first
    )
    assert "UNVERIFIED: " in done.stderr and "(calls " in done.stderr
    assert "Traceback" not in done.stderr


def test_report_puts_the_warning_at_the_top_of_rationale(hostile: Path) -> None:
    tamper(hostile, "reason")
    done = run("report", cwd=hostile)
    assert done.returncode == 1
    text = (hostile / "RATIONALE.md").read_text()
    head = text.split("## ", 1)[0]  # before the first section: right under the title
    assert head.startswith("# RATIONALE\n\n> **⚠ WARNING: the journal does not verify")
    assert "UNVERIFIED: lines " in head and "calls 3" in head


def test_html_page_names_the_unverified_calls(hostile: Path, tmp_path: Path) -> None:
    tamper(hostile, "reason")
    page = tmp_path / "t.html"
    assert run("html", str(hostile), "-o", str(page), cwd=tmp_path).returncode == 0
    html = page.read_text()
    assert "WARNING: the journal does not verify (TAMPERED)" in html
    assert html.index("WARNING") < html.index('id="narrative"')


@pytest.mark.system  # end to end, slow for the default tier
def test_an_intact_journal_is_not_announced(hostile: Path, tmp_path: Path) -> None:
    for command, args, _ in READERS:
        done = run(command, *args, cwd=hostile)
        assert done.returncode == 0, (command, done.stderr)
        assert "WARNING" not in done.stderr and "UNVERIFIED" not in done.stderr


# -- 3. a user's RATIONALE.md ----------------------------------------------------------------


@pytest.mark.parametrize("git", [False, True])
def test_a_users_rationale_is_never_overwritten(tmp_path: Path, git: bool) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    if git:
        subprocess.run(["git", "init", "-q", str(ws)], check=True)
    mine = "# RATIONALE\n\nWhy we chose Postgres.\n"
    (ws / "RATIONALE.md").write_text(mine)
    done = run_exec(ws, "echo hi", "collect-info", "learn what this prints in the workspace")
    assert done.returncode == 0
    assert "RATIONALE.epistemic.md" in done.stderr and "left as it is" in done.stderr
    run_exec(ws, "echo again", "collect-info", "learn what this prints in the workspace")
    assert (ws / "RATIONALE.md").read_text() == mine
    ours = (ws / "RATIONALE.epistemic.md").read_text()
    assert ours.startswith("# RATIONALE\n") and "echo again" in ours
    done = run("report", cwd=ws)
    assert done.returncode == 0 and "RATIONALE.epistemic.md re-rendered" in done.stdout
    assert (ws / "RATIONALE.md").read_text() == mine


def test_our_own_rationale_is_re_rendered(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    run_exec(ws, "echo one", "collect-info", "learn what this prints in the workspace")
    done = run_exec(ws, "echo two", "collect-info", "learn what this prints in the workspace")
    assert "RATIONALE.epistemic.md" not in done.stderr
    assert "echo two" in (ws / "RATIONALE.md").read_text()
    assert not (ws / "RATIONALE.epistemic.md").exists()
    assert run("report", cwd=ws).returncode == 0
    assert not (ws / "RATIONALE.epistemic.md").exists()


@pytest.mark.parametrize("kind", ["link", "folder", "title-only"])
def test_what_only_looks_like_our_report_is_left_alone(tmp_path: Path, kind: str) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    target = tmp_path / "elsewhere.md"
    target.write_text("mine\n")
    if kind == "link":
        (ws / "RATIONALE.md").symlink_to(target)
    elif kind == "folder":
        (ws / "RATIONALE.md").mkdir()
    else:
        (ws / "RATIONALE.md").write_text("# RATIONALE\n\nmine, no footer\n")
    run_exec(ws, "echo hi", "collect-info", "learn what this prints in the workspace")
    assert target.read_text() == "mine\n"
    assert (ws / "RATIONALE.epistemic.md").is_file()
    if kind == "title-only":
        assert (ws / "RATIONALE.md").read_text() == "# RATIONALE\n\nmine, no footer\n"


# -- 4. .epistemic is ignored by git ---------------------------------------------------------


def test_git_add_after_a_session_stages_nothing_of_the_record(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    subprocess.run(["git", "init", "-q", str(ws)], check=True)
    (ws / "code.py").write_text("print(1)\n")
    run_exec(ws, "cat code.py", "collect-info", "learn what the code prints here")
    assert (ws / ".epistemic" / ".gitignore").read_text().splitlines()[-1] == "*"
    subprocess.run(["git", "add", "-A"], cwd=ws, check=True)
    staged = subprocess.run(
        ["git", "diff", "--cached", "--name-only"], cwd=ws, capture_output=True, text=True
    ).stdout.split()
    assert "code.py" in staged
    assert not [name for name in staged if name.startswith(".epistemic")], staged


def test_an_older_workspace_gets_its_gitignore_on_open(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    run_exec(ws, "echo hi", "collect-info", "learn what this prints in the workspace")
    (ws / ".epistemic" / ".gitignore").unlink()
    run_exec(ws, "echo hi", "collect-info", "learn what this prints in the workspace")
    assert (ws / ".epistemic" / ".gitignore").is_file()
    assert run("verify", cwd=ws).returncode == 0  # not evidence, not part of the record


# -- 5. a failed call's outcome line ---------------------------------------------------------

PYTEST_OUTPUT = """F
=================================== FAILURES ===================================
____________________________________ test_a ____________________________________

    def test_a():
>       assert 1 == 2
E       assert 1 == 2

t.py:2: AssertionError
=========================== short test summary info ============================
FAILED t.py::test_a - assert 1 == 2
1 failed in 0.01s
"""


@pytest.mark.system  # end to end, slow for the default tier
@pytest.mark.parametrize(
    ("command", "expected", "first"),
    [
        ("python3 -c '1/0'", "ZeroDivisionError: division by zero", "Traceback"),
        (
            'printf %s "$0" >/dev/null; cat out.txt; exit 1',
            "FAILED t.py::test_a - assert 1 == 2",
            "F",
        ),
        ("nosuchcommand-here", "nosuchcommand-here: command not found", "bash"),
    ],
)
def test_a_failed_outcome_shows_the_line_that_explains_it(
    tmp_path: Path, command: str, expected: str, first: str
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "out.txt").write_text(PYTEST_OUTPUT)
    done = run_exec(
        ws, command, "test-hypothesis", "I believe this fails; if it passes the belief is refuted"
    )
    assert done.returncode != 0
    [view] = json.loads(run("log", "--json", cwd=ws).stdout)
    assert expected in view["outcome"], view["outcome"]
    outcome = next(r for r in records(ws) if r.get("kind") == "outcome")
    stream = "stdout" if first == "F" else "stderr"
    digest = outcome["evidence"][stream]["sha256"]
    kept = (ws / ".epistemic" / "evidence" / digest[:2] / digest).read_text()
    assert kept.splitlines()[0].startswith(first)  # the first line stays in the evidence


def test_the_outcome_excerpt_skips_carets_rules_and_tallies() -> None:
    tb = (
        'Traceback (most recent call last):\n  File "x", line 1\n    1/0\n    ~^~\n\n'
        "ValueError: bad\n   ^^^^\n\n"
    )
    assert last_meaningful(tb) == "ValueError: bad"
    assert last_meaningful("\n\n  \n") is None
    assert last_meaningful("=== 2 failed, 1 passed in 0.12s ===\n") is None
    assert excerpt("first\nsecond\n", "", failed=False) == "first"
    assert excerpt("out\n", "err one\nerr two\n", failed=True) == "err two"
    assert excerpt("only stdout\n", "", failed=True) == "only stdout"
    assert len(excerpt("", "x" * 500, failed=True)) == 100


def test_a_session_that_goes_on_in_a_tampered_journal_keeps_saying_so(hostile: Path) -> None:
    """The next call re-renders RATIONALE.md: it must not drop the warning and present the
    edited record as fact again."""
    tamper(hostile, "middle")  # the last line, and so the head anchor, still match
    assert run_exec(hostile, "echo later", "collect-info", ESCAPE_REASON).returncode == 0
    text = (hostile / "RATIONALE.md").read_text()
    head = text.split("## ", 1)[0]
    assert head.startswith("# RATIONALE\n\n> **⚠ WARNING: the journal does not verify")
