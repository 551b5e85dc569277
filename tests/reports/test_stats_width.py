"""`epistemic stats` over several sessions fits the terminal (COLUMNS, else the terminal, else
80): text cells are cut with …, numbers never are; when the numbers alone are too wide the
columns go in blocks, each repeating the session column."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import EPISTEMIC
from epistemic_agent.reports.stats_table import fit
from epistemic_agent.session.session import Session

LOOK = "Nothing is known about this workspace yet; I need to see what files exist."
CHANGE = "The report asks for a marker file; creating it is the change itself."
NAMES = ("agent-alpha-with-a-rather-long-workspace-name-of-its-own", "beta", "gamma-\x1b[31m[red]")


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("runs")
    for count, name in enumerate(NAMES, start=1):
        workspace = root / name
        workspace.mkdir()
        with Session(workspace, header={"task": "make a marker"}) as session:
            for index in range(count * 4):
                session.bash(f"echo {index}", "collect-info", LOOK)
            session.bash("touch marker", "change-state", CHANGE)
            session.bash("ls", "no-such-act", LOOK)  # a rejection
    return root


def stats(runs: Path, columns: int, *options: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, COLUMNS=str(columns))
    return subprocess.run([EPISTEMIC, "stats", *(str(runs / n) for n in NAMES), *options],
                          env=env, capture_output=True, text=True, timeout=120)  # fmt: skip


def cells_by_row(lines: list[str]) -> dict[int, dict[str, str]]:
    """Row number (0: the first session; len(NAMES): TOTALS) -> header -> cell, read back
    from every block of the table."""
    found: dict[int, dict[str, str]] = {}
    blocks = "\n".join(lines).split("\n\n")
    for block in blocks:
        rows = [line for line in block.splitlines() if not line.startswith("-")]
        if not rows[0].startswith("session"):
            continue
        header = rows[0].split()
        for number, row in enumerate(rows[1 : len(NAMES) + 2]):
            words = row.split()
            found.setdefault(number, {}).update(zip(header[1:], words[1:], strict=False))
    return found


@pytest.mark.parametrize("columns", [80, 120])
def test_the_table_fits_and_every_number_is_whole(runs: Path, columns: int) -> None:
    done = stats(runs, columns)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines and max(map(len, lines)) <= columns, [
        line for line in lines if len(line) > columns
    ]
    rows = json.loads(stats(runs, columns, "--json").stdout)["sessions"]
    shown = cells_by_row(lines)
    for number, row in enumerate(rows):
        cells = shown[number]
        assert cells["calls"] == str(row["calls"])
        assert cells["info"] == str(row["acts"]["collect-info"])
        assert cells["chg"] == str(row["acts"]["change-state"])
        assert cells["rej"] == str(row["rejected"])
        assert cells["chain"] == "intact"
    assert shown[len(rows)]["calls"] == str(sum(row["calls"] for row in rows))
    assert "…" in done.stdout and "\x1b" not in done.stdout  # a long name is cut, escaped
    assert "its-own" in done.stdout  # a cut name keeps its end


def test_a_wide_terminal_shows_one_block_with_whole_names(runs: Path) -> None:
    done = stats(runs, 300)
    lines = done.stdout.splitlines()
    assert "\n\n" not in done.stdout  # one block; a name is never wider than 40
    assert any(line.startswith("…a-rather-long-workspace-name-of-its-own ") for line in lines)
    assert lines[0].split()[-3:] == ["stop", "chain", "task"]
    assert lines[1].endswith("  intact  make a marker")
    assert any(line.startswith("gamma-\\x1b[31m[red]") for line in lines)


def test_at_80_columns_the_columns_go_in_blocks_each_naming_the_sessions(runs: Path) -> None:
    blocks = stats(runs, 80).stdout.split("\n\n")
    assert len(blocks) == 2
    for block in blocks:
        rows = block.splitlines()
        assert rows[0].startswith("session") and rows[4].startswith("-")
        assert rows[2].startswith("beta") and rows[5].startswith("TOTALS")


NUMBER = st.integers(min_value=0, max_value=10**9).map(str)
TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=60)


@pytest.mark.system  # end to end, slow for the default tier
@settings(max_examples=200, deadline=None)
@given(
    st.integers(min_value=1, max_value=6).flatmap(
        lambda n: st.tuples(
            st.integers(min_value=40, max_value=220),
            st.lists(
                st.tuples(TEXT, st.lists(NUMBER, min_size=n, max_size=n), TEXT),
                min_size=2,
                max_size=5,
            ),
        )
    ),
    st.integers(min_value=1, max_value=14),
)
def test_fit_never_cuts_a_number_and_keeps_to_the_width(
    drawn: tuple[int, list[tuple[str, list[str], str]]], extra: int
) -> None:
    width, body = drawn
    count = len(body[0][1])
    numbers = count + extra  # many number columns: blocks are needed at some widths
    header = ["session", *(f"n{i}" for i in range(numbers)), "stop"]
    rows = [[name, *values, *(str(i) for i in range(extra)), stop] for name, values, stop in body]
    lines = fit([header, *rows], frozenset({numbers + 1}), width)
    assert max(map(len, lines)) <= width
    blocks = "\n".join(lines).split("\n\n")
    seen: dict[tuple[int, str], str] = {}
    for block in blocks:
        table = [line for line in block.split("\n") if not set(line) <= {"-"}]
        names = table[0].split()
        ends = [table[0].index(name) + len(name) for name in names]  # numbers end there
        for number, line in enumerate(table[1:]):
            for name, end in zip(names[1:], ends[1:], strict=True):
                if name != "stop":
                    start = line.rfind(" ", 0, end) + 1
                    seen[(number, name)] = line[start:end]
    for number, row in enumerate(rows):
        for index in range(numbers):
            assert seen[(number, f"n{index}")] == row[index + 1]
