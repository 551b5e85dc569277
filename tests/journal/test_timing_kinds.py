"""Wall time counts every record kind the writers write, and cannot fall behind them.

The kinds are collected from the writers' code itself (every `{"kind": "..."}` literal and
every `session.event("...")`), so a writer that starts writing a new kind fails here until
timing knows it; then each kind's timestamp is checked to count, through a real session for
the common ones."""

from __future__ import annotations

import ast
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

import epistemic_agent
from epistemic_agent.journal.log import Position, Record, follow
from epistemic_agent.journal.timing import TIMED_KINDS, wall_time
from epistemic_agent.session.session import Session

PACKAGE = Path(epistemic_agent.__file__).parent
#: Kinds that appear in the code but are never written: what a reader calls a line it cannot
#: parse.
NOT_WRITTEN = {"unreadable"}
START = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


def stamp(seconds: float) -> str:
    return (START + timedelta(seconds=seconds)).isoformat().replace("+00:00", "Z")


def written_kinds() -> dict[str, str]:
    """{kind: where it is written} for every kind the package's code can write."""
    found: dict[str, str] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        where = path.relative_to(PACKAGE).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Dict):
                for key, value in zip(node.keys, node.values, strict=True):
                    if _text(key) == "kind" and _text(value) is not None:
                        found.setdefault(str(_text(value)), where)
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "event"
                and node.args
                and _text(node.args[0]) is not None
            ):
                found.setdefault(str(_text(node.args[0])), where)
    return found


def _text(node: ast.expr | None) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


@pytest.mark.system  # end to end, slow for the default tier
def test_timing_knows_every_kind_the_writers_write() -> None:
    found = written_kinds()
    assert {"call", "outcome", "closed", "model", "stop"} <= set(found)  # the scan sees them
    unknown = {kind: where for kind, where in found.items() if kind not in TIMED_KINDS}
    assert set(unknown) == NOT_WRITTEN, f"kinds journal/timing.py does not know: {unknown}"
    assert not TIMED_KINDS - set(found), "kinds nothing writes any more"


@pytest.mark.parametrize("kind", sorted(set(written_kinds()) - NOT_WRITTEN))
def test_each_kind_s_timestamp_counts_in_the_wall_time(kind: str) -> None:
    header: Record = {"kind": "session", "started": stamp(0), "t": stamp(0)}
    later: Record = {"kind": kind, "t": stamp(7)}
    if kind == "session":  # a header's moment is its `started`
        later["started"] = stamp(7)
    seconds, notes = wall_time([(1, header), (2, later)])
    assert seconds == 7.0 and notes == []


def test_a_closed_session_s_wall_time_runs_to_its_close(ws: Path) -> None:
    """The last record of a session its owner ended (`run`, `repl`, `mcp`) is `closed`: the
    wall time must run to it, as `stats` shows it."""
    (ws / "f.txt").write_text("x\n")
    with Session(ws) as session:
        session.read_file("f.txt", "learn what this file says before changing anything")
        session.end()
    records = [record for record, _ in follow(ws / ".epistemic" / "journal.jsonl", Position())]
    kinds = [record.get("kind") for record in records]
    assert kinds[-1] == "closed", kinds
    # the close came ten minutes later (a human read the output before ending the session)
    late = datetime.fromisoformat(str(records[-1]["t"]).replace("Z", "+00:00"))
    records[-1]["t"] = (late + timedelta(minutes=10)).isoformat().replace("+00:00", "Z")
    seconds, _ = wall_time(list(enumerate(records, 1)))
    assert seconds is not None and seconds >= 600
