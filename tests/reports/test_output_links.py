"""The whole output is one click or one flag away in every view: RATIONALE.md links each
output's blob in the evidence store, the HTML page shows the first lines collapsed, and both
name `epistemic show SEQ --output`; what they show of the output is escaped for the medium."""

from __future__ import annotations

import re
from pathlib import Path

from conftest import epistemic
from epistemic_agent.core.layout import Layout
from epistemic_agent.journal import sessions
from epistemic_agent.reports.rationale.pages import Pages
from epistemic_agent.session.session import Session

ESC = "\x1b"
HOSTILE = f"{ESC}[31mred{ESC}[0m `tick` <script>alert(1)</script> [x](http://e.vil) **b**"
LOOK = "See what the command prints, whole, before deciding anything about it."
LINK = re.compile(r"\*\*Output:\*\* (.*)")


def session_with_output(ws: Path) -> None:
    lines = "".join(f"line {n}\\n" for n in range(100))
    with Session(ws) as session:
        session.bash(f"printf '{lines}'; printf '%s' '{HOSTILE}' >&2", "collect-info", LOOK)
        session.bash("true", "verify", LOOK)  # printed nothing: no output line


def test_rationale_links_each_outputs_blob_and_names_show_output(tmp_path: Path) -> None:
    session_with_output(tmp_path)
    report = (tmp_path / "RATIONALE.md").read_text()
    (line,) = LINK.findall(report)  # the call that printed nothing has none
    targets = re.findall(r"\]\(([^)]+)\)", line)
    assert [t.split("/")[-3] for t in targets] == ["evidence", "evidence"]
    for target in targets:  # relative to RATIONALE.md, each link reaches its blob
        assert (tmp_path / target).is_file()
    assert line.startswith("stdout (") and "; stderr (" in line
    assert line.endswith("all of it: `epistemic show 1 --output`.")
    assert HOSTILE not in report and ESC not in report


def test_a_page_links_the_blob_relative_to_itself(tmp_path: Path) -> None:
    session_with_output(tmp_path)
    layout = Layout(tmp_path)
    view = sessions.load(tmp_path).views[0]
    entry = Pages(layout, 100).entry(view, {}, {}, layout.pages)
    (line,) = LINK.findall(entry)
    for target in re.findall(r"\]\(([^)]+)\)", line):
        assert target.startswith("../")
        assert (layout.pages / target).resolve().is_file()


def test_the_html_page_shows_the_first_lines_one_click_away_escaped(tmp_path: Path) -> None:
    session_with_output(tmp_path)
    out = tmp_path / "page.html"
    assert epistemic("html", str(tmp_path), "-o", str(out)).returncode == 0
    page = out.read_text()
    (details,) = re.findall(r'<details class="output">.*?</details>', page, re.DOTALL)
    assert "<summary>Output: stdout (" in details
    assert "<code>epistemic show 1 --output</code>" in details
    assert "line 0\n" in details and "line 39\n" in details and "line 40\n" not in details
    assert "cut: the whole output is in the command above" in details
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in details and "<script>alert" not in page
    assert "\\x1b[31mred" in details and ESC not in page


def test_log_json_names_the_output_blobs(tmp_path: Path) -> None:
    """Every reader's view of a call carries its output's refs (an added field)."""
    session_with_output(tmp_path)
    first, second = sessions.load(tmp_path).views
    assert first.output is not None and set(first.output) == {"stdout", "stderr"}
    assert second.output is None
    assert first.to_json()["output"] == first.output
