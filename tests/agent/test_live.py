"""The live view of `epistemic run`: on a pty (the running line while a command runs, its
tail, colour or none, lines that fit), off a terminal (plain lines), and the running tail's
reads of capture files a command may have tampered with."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import time
import unicodedata
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import EPISTEMIC
from ptyterm import Terminal

REASON = "Wait three seconds while printing a line each second, to watch the elapsed time tick."
MARKUP = "[bold]x[/] [/] [red]"
CSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")
MOVES = re.compile(r"\r|\x1b\[[0-9;]*[ABCDEFGHJK]")  # a new segment starts after each
COLOUR = re.compile(r"\x1b\[(?:[0-9;]*;)?(?:3[0-9]|4[0-9]|9[0-7]|10[0-7])(?:;[0-9;]*)?m")


def bash(command: str, act: str = "collect-info", reason: str = REASON) -> dict[str, Any]:
    return {"tool": "bash", "args": {"command": command, "type": act, "reason": reason}}


def environ(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("EPISTEMIC_MODEL", "NO_COLOR")}
    return {**env, **extra}


def script(tmp_path: Path, turns: list[dict[str, Any]]) -> Path:
    path = tmp_path / "script.json"
    path.write_text(json.dumps(turns), encoding="utf-8")
    return path


def on_pty(ws: Path, played: Path, *options: str, columns: int = 100, **env: str) -> Terminal:
    argv = [EPISTEMIC, "run", "--model", f"replay:{played}", "-C", str(ws), *options, "the task"]
    return Terminal(argv, environ(**env), columns=columns)


def piped(ws: Path, played: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [EPISTEMIC, "run", "--model", f"replay:{played}", "-C", str(ws), "the task"],
        env=environ(**env),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def printed_lines(raw: str) -> list[str]:
    """Each run of text the terminal drew from one place: split at line feeds, carriage
    returns and cursor moves, other escape sequences removed."""
    return [CSI.sub("", part) for part in MOVES.sub("\n", raw).split("\n")]


def cells(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


@pytest.mark.system  # a terminal, end to end
def test_the_running_line_ticks_with_a_tail_while_the_command_runs(
    ws: Path, tmp_path: Path
) -> None:
    command = "for i in 1 2 3; do echo tick-$i; sleep 1; done"
    played = script(tmp_path, [{"calls": [bash(command)]}, {"final": "done"}])
    term = on_pty(ws, played)
    term.wait_screen(REASON)  # the act and the reason as the call starts
    seen: set[str] = set()

    def ticking() -> bool:
        for line in term.display():
            found = re.search(r"running (\d+\.\d) s", line)
            if found:
                seen.add(found.group(1))
        return len(seen) >= 3

    term.wait_for(ticking, 10, "the elapsed time to change while the command runs")
    term.wait_screen("│ tick-2")  # the tail of its output, while it runs
    assert not any("✓" in line for line in term.display())  # not finished yet
    assert term.close() == 0
    raw = term.text()
    assert raw.index("running") < raw.index("✓ 3.")  # the running line came first
    assert "\x1b[" in raw  # on a terminal: redrawn in place, in colour
    final = term.display()
    assert not [line for line in final if re.search(r"running \d", line)]  # transient
    assert any(line.strip().startswith("✓ 3.") for line in final)


@pytest.mark.system  # a terminal, end to end
def test_a_sleep_shows_its_running_line_before_its_outcome(ws: Path, tmp_path: Path) -> None:
    played = script(tmp_path, [{"calls": [bash("sleep 3")]}, {"final": "done"}])
    term = on_pty(ws, played)
    term.wait_screen("running")
    started = time.monotonic()
    outcome = ws / ".epistemic" / "journal.jsonl"
    assert '"kind":"outcome"' not in outcome.read_text()  # seen while the sleep still runs
    term.wait_screen("✓ 3.")
    assert time.monotonic() - started > 1.5
    assert term.close() == 0


def test_off_a_terminal_the_view_is_plain_lines(ws: Path, tmp_path: Path) -> None:
    played = script(
        tmp_path,
        [{"text": f"model text {MARKUP}", "calls": [bash(f"echo '{MARKUP}'")]}, {"final": "ok"}],
    )
    done = piped(ws, played, COLUMNS="120")
    assert done.returncode == 0, done.stderr
    assert "\x1b" not in done.stdout  # no colour, no cursor movement
    assert not re.search(r"running \d", done.stdout)
    lines = done.stdout.splitlines()
    assert f"model text {MARKUP}" in lines  # agent text verbatim, never markup
    assert f"●   1 collect-info    echo '{MARKUP}'" in lines
    assert f"      {REASON}" in lines
    assert any(re.fullmatch(r" {6}✓ \d\.\d\d s", line) for line in lines)


@pytest.mark.system  # a terminal, end to end
@pytest.mark.parametrize("how", ["NO_COLOR", "--no-color"])
def test_no_color_turns_colour_off_on_a_terminal(ws: Path, tmp_path: Path, how: str) -> None:
    played = script(tmp_path, [{"calls": [bash("sleep 1; exit 3")]}, {"final": "done"}])
    options, env = (("--no-color",), {}) if how == "--no-color" else ((), {"NO_COLOR": "1"})
    term = on_pty(ws, played, *options, **env)
    term.wait_screen("✗ 1.")
    term.close()
    raw = term.text()
    assert re.search(r"running \d", raw)  # still a terminal: the running line is drawn
    assert not COLOUR.search(raw), COLOUR.search(raw)
    (tmp_path / "ws2").mkdir()
    colourful = on_pty(tmp_path / "ws2", played)
    colourful.wait_screen("✗ 1.")
    colourful.close()
    assert COLOUR.search(colourful.text())  # the same run without it has colour


@pytest.mark.system  # a terminal, end to end
@pytest.mark.parametrize("columns", [80, 120])
def test_every_line_fits_the_terminal(ws: Path, tmp_path: Path, columns: int) -> None:
    long = "echo " + "word " * 60 + "; sleep 1; echo " + "x" * 300
    reason = "A reason long enough to need wrapping: " + "because " * 40
    turns = [
        {"text": "prose " * 50, "calls": [bash(long, reason=reason), bash("ls", "explore")]},
        {"calls": [bash("echo " + "y" * 300 + " >&2; exit 1", "test-hypothesis", reason)]},
        {"final": "final " * 40},
    ]
    term = on_pty(ws, script(tmp_path, turns), columns=columns)
    term.wait_for("journal head", 30)
    term.close()
    lines = printed_lines(term.text())
    rows = [line for line in lines if line.startswith(("●", "⊘"))]
    assert len(rows) == 3  # the rows are there, each on one line
    summary = ("report:", "journal head:")  # paths are never cut: they must stay copyable
    for line in lines:
        if not line.startswith(summary):
            assert cells(line) <= columns, line
    assert any(line.endswith("…") for line in rows)  # cut, not wrapped


def test_rejected_rows_keep_the_columns(ws: Path, tmp_path: Path) -> None:
    turns = [{"calls": [bash("ls -a"), bash("ls -b", "explore"), bash("ls -c")]}, {"final": "x"}]
    done = piped(ws, script(tmp_path, turns), COLUMNS="100")
    rows = [line for line in done.stdout.splitlines() if line.startswith(("●", "⊘"))]
    assert [row.index("ls -") for row in rows] == [22, 22, 22]
    assert rows[1].startswith("⊘   2 rejected ")


# -- the tail's reads --------------------------------------------------------------------------


def test_read_tail_reads_the_end_of_a_regular_file(tmp_path: Path) -> None:
    from epistemic_agent.agent.live.tail import read_tail

    path = tmp_path / "out"
    path.write_text("first\n" + "a" * 5000 + "\nsecond\nthird\n")
    assert read_tail(path) == "second\nthird\n"  # the cut first line is dropped
    path.write_text("one\ntwo\n")
    assert read_tail(path) == "one\ntwo\n"
    assert read_tail(tmp_path / "missing") == ""


def test_read_tail_refuses_links_and_special_files(tmp_path: Path) -> None:
    from epistemic_agent.agent.live.tail import read_tail

    secret = tmp_path / "secret"
    secret.write_text("the key\n")
    (tmp_path / "symlink").symlink_to(secret)
    os.link(secret, tmp_path / "hardlink")
    os.mkfifo(tmp_path / "fifo")  # a FIFO with no writer would block a plain open
    for name in ("symlink", "hardlink", "fifo"):
        assert read_tail(tmp_path / name) == "", name
    assert read_tail(Path("/dev/zero")) == ""


def test_the_tail_is_redacted_and_escaped(tmp_path: Path) -> None:
    from rich.console import Console

    from epistemic_agent.agent.live.tail import Activity, Tail
    from epistemic_agent.core.redact import Redactor

    out, err = tmp_path / "out", tmp_path / "err"
    token = "ghp_" + "Zx9" * 12
    out.write_text(f"progress 10%\rprogress 90%\ntoken {token}\n\x1b]0;title\x07\n")
    err.write_text("warning: careful\n")
    redactor = Redactor()
    tail = Tail((out, err), lambda text: redactor.text(text)[0])
    lines = tail.lines(4)
    assert ("stdout", "progress 90%") in lines  # the last state of a progress line
    assert ("stderr", "warning: careful") in lines
    shown = " ".join(text for _, text in lines)
    assert token not in shown and "[REDACTED" in shown
    console = Console(file=io.StringIO(), force_terminal=True, width=200)
    activity = Activity(console)
    activity.start("running", tail)
    try:
        console.print(activity.render())
    finally:
        activity.stop()
    drawn = "\n".join(printed_lines(console.file.getvalue()))  # type: ignore[attr-defined]
    assert "\\x1b]0;title\\x07" in drawn  # the command's escape shown, not obeyed
    assert "\x07" not in console.file.getvalue()  # type: ignore[attr-defined]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.text(
                st.characters(blacklist_categories=("Cc", "Cs")) | st.sampled_from("漢字😀é "),
                max_size=40,
            ),
            st.sampled_from(["", "bold", "dim", "red", "bold red"]),
        ),
        min_size=1,
        max_size=6,
    ),
    st.integers(10, 120),
)
def test_a_row_off_a_terminal_is_what_rich_would_print(
    parts: list[tuple[str, str]], width: int
) -> None:
    """Off a terminal the view writes its rows itself (rich adds no colour or cursor there):
    the characters are the same as rich's, cut at the width with an ellipsis, for any text
    (wide characters, emoji, marks) and styles."""
    from rich.console import Console
    from rich.text import Text

    from epistemic_agent.agent.live.view import LiveEvents

    line = Text()
    for text, style in parts:
        line.append(text, style=style)
    expected = io.StringIO()
    Console(file=expected, width=width, highlight=False).print(
        line, no_wrap=True, overflow="ellipsis"
    )
    written = io.StringIO()
    view = LiveEvents(written)
    view.console.width = width
    view._plain_width = width
    view._row(line)
    assert written.getvalue() == expected.getvalue()
    assert view._plain_width is not None  # the direct path ran (a StringIO is no terminal)
