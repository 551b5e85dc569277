"""`epistemic bench --check-oracles`'s table: one line per play whatever its verdict, the
verdict cut with an ellipsis (the whole of it is in the JSON), agent text shown as text."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from epistemic_agent.cli.check import VERDICT_WIDTH, _table


def play(verdict: str, session: str = "rename-and-change-a-statement") -> dict[str, object]:
    return {
        "task": "dead-code-removal",
        "kind": "gaming",
        "session": session,
        "expect": "fail",
        "passed": False,
        "ok": True,
        "verdict": verdict,
    }


def test_long_verdicts_stay_on_one_line_when_not_a_terminal(
    capsys: pytest.CaptureFixture[str],
) -> None:
    rows = [play("FAIL: " + "a long reason " * 40), play("FAIL: [red]not markup[/] short", "x")]
    _table(rows)
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 4 + len(rows)  # top, header, rule, rows, bottom
    assert len({len(line) for line in lines}) == 1  # every line as wide as the frame
    assert "…" in lines[3] and "a long reason" in lines[3]
    assert "[red]not markup[/] short" in lines[4]
    assert "rename-and-change-a-statement" in lines[3]  # the short cells are never cut


@settings(max_examples=30, deadline=None)
@given(st.text(min_size=0, max_size=400))
def test_any_verdict_is_one_line(verdict: str) -> None:
    import io

    from rich.console import Console

    out = io.StringIO()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("rich.console.Console", lambda **kw: Console(file=out, **kw))
        _table([play(verdict)])
    lines = out.getvalue().splitlines()
    assert len(lines) == 5, lines
    assert max(map(len, lines)) <= 200 + VERDICT_WIDTH
