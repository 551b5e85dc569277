"""Sessions: one journal per session, listed, chosen, resumed; `show` of one call in full."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conftest import epistemic
from epistemic_agent.agent.resume import rebuild
from epistemic_agent.journal.catalog import listing
from epistemic_agent.journal.reading import read_records
from epistemic_agent.providers.base import AssistantMessage, ToolResults, UserMessage
from epistemic_agent.session.session import Session

LOOK = "See which files the workspace holds before deciding anything."
WRITE = "Create the file the task asks for; its content is the deliverable."


def script(tmp_path: Path, name: str, turns: list[dict[str, Any]]) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(turns))
    return path


def bash(command: str, act: str = "collect-info", reason: str = LOOK) -> dict[str, Any]:
    return {"tool": "bash", "args": {"command": command, "type": act, "reason": reason}}


def run(ws: Path, model: Path, task: str, *options: str) -> subprocess.CompletedProcess[str]:
    return epistemic("run", "--model", f"replay:{model}", "-C", str(ws), *options, task)


def sessions(ws: Path) -> list[dict[str, Any]]:
    done = epistemic("sessions", "--json", "-C", str(ws))
    assert done.returncode == 0, done.stderr
    rows: list[dict[str, Any]] = json.loads(done.stdout)
    return rows


def two_runs(tmp_path: Path) -> tuple[Path, list[dict[str, Any]]]:
    ws = tmp_path / "ws"
    ws.mkdir()
    first = script(
        tmp_path,
        "a.json",
        [{"text": "Look first [bold]x[/]", "calls": [bash("ls")]}, {"final": "listed"}],
    )
    second = script(
        tmp_path,
        "b.json",
        [
            {"calls": [bash("echo one")]},
            {"calls": [bash("echo two")]},
            {"calls": [bash("echo three")]},
            {"final": "echoed"},
        ],
    )
    assert run(ws, first, "the first task").returncode == 0
    assert run(ws, second, "the second task").returncode == 0
    return ws, sessions(ws)


@pytest.mark.system  # end to end, slow for the default tier
def test_two_runs_give_two_sessions_each_with_its_own_task_counts_and_time(
    tmp_path: Path,
) -> None:
    ws, rows = two_runs(tmp_path)
    assert [(r["task"], r["calls"], r["status"]) for r in rows] == [
        ("the first task", 1, "finished"),
        ("the second task", 3, "finished"),
    ]
    assert rows[0]["legacy"] and not rows[1]["legacy"]  # the first keeps `.epistemic/` itself
    assert Path(rows[1]["journal"]).parent.name == rows[1]["id"]
    report = (ws / "RATIONALE.md").read_text()
    assert "the second task" in report and "the first task" in report  # listed as another
    assert "## Other sessions in this workspace" in report
    assert rows[0]["id"][:12] in report and "### 3." in report and "### 4." not in report
    stats = json.loads(epistemic("stats", "--json", str(ws)).stdout)
    per = stats["sessions"] if isinstance(stats, dict) and "sessions" in stats else stats
    assert sorted(s["calls"] for s in per) == [1, 3]
    for row, calls in zip(rows, (1, 3), strict=True):
        done = epistemic("report", str(ws), "--session", row["id"][:8])
        assert done.returncode == 0, done.stderr
        text = (ws / "RATIONALE.md").read_text()
        assert row["task"] in text.split("## Narrative")[0]
        assert f"### {calls}." in text and f"### {calls + 1}." not in text
        log = json.loads(epistemic("log", str(ws), "--json", "--session", row["id"]).stdout)
        assert len(log) == calls
        assert epistemic("verify", row["journal"]).returncode == 0


@pytest.mark.system  # end to end, slow for the default tier
def test_exec_continues_the_newest_open_session_and_starts_one_after_a_closed_run(
    tmp_path: Path,
) -> None:
    ws, rows = two_runs(tmp_path)
    ran = epistemic("exec", "-C", str(ws), "--type", "collect-info", "--reason", LOOK, "--", "ls")
    assert ran.returncode == 0, ran.stderr
    after = sessions(ws)
    assert len(after) == 3 and after[-1]["status"] == "open" and after[-1]["task"] is None
    again = epistemic("exec", "-C", str(ws), "--type", "collect-info", "--reason", LOOK, "--", "ls")
    assert again.returncode == 0
    assert [r["calls"] for r in sessions(ws)] == [1, 3, 2]
    forced = epistemic(
        "exec", "-C", str(ws), "--session", "new", "--type", "collect-info", "--reason", LOOK,
        "--", "true",
    )  # fmt: skip
    assert forced.returncode == 0 and len(sessions(ws)) == 4
    named = epistemic(
        "exec", "-C", str(ws), "--session", rows[0]["id"][:10], "--type", "collect-info",
        "--reason", LOOK, "--", "true",
    )  # fmt: skip
    assert named.returncode == 0
    assert sessions(ws)[0]["calls"] == 2  # the first run's session got the call


@pytest.mark.system  # end to end, slow for the default tier
def test_unknown_malformed_or_ambiguous_session_is_a_usage_error(tmp_path: Path) -> None:
    ws, rows = two_runs(tmp_path)
    for value in ("0123456789abcdef", "nope", "../x", "", "[bold]"):
        for command in (
            ["log", str(ws), "--session", value],
            ["show", "1", "-C", str(ws), "--session", value],
            [
                "exec",
                "-C",
                str(ws),
                "--session",
                value,
                "--type",
                "collect-info",
                *["--reason", LOOK, "--", "ls"],
            ],
            [
                "run",
                "--model",
                f"replay:{tmp_path / 'a.json'}",
                "-C",
                str(ws),
                "--session",
                value,
                "t",
            ],
            ["stats", str(ws), "--session", value],
        ):
            done = epistemic(*command)
            assert done.returncode == 2, (command, value, done.stderr)
            assert "Traceback" not in done.stderr and "session" in done.stderr
    ids = [row["id"] for row in sessions(ws)]
    assert ids == [row["id"] for row in rows]  # no failed command started a session
    first = ids[0][0]
    done = epistemic("log", str(ws), "--session", first)
    if sum(i.startswith(first) for i in ids) > 1:
        assert done.returncode == 2 and "ambiguous" in done.stderr
    else:
        assert done.returncode == 0, done.stderr
    model = f"replay:{tmp_path / 'a.json'}"
    bad = epistemic("run", "--model", model, "-C", str(ws), "--resume", "ffff0000ffff", "t")
    assert bad.returncode == 2 and "no session" in bad.stderr


def test_old_single_journal_workspace_stays_readable_and_continues(tmp_path: Path) -> None:
    ws = tmp_path / "old"
    ws.mkdir()
    with Session(ws) as session:  # what every workspace was before sessions had folders
        session.bash("echo old", "collect-info", LOOK)
    assert (ws / ".epistemic" / "journal.jsonl").is_file()
    assert not list((ws / ".epistemic").glob("sessions/*/journal.jsonl"))
    with Session(ws) as session:  # an exec-style session is open: continued, not replaced
        assert session.bash("echo again", "collect-info", LOOK).seq == 2
    for command in (["log", str(ws)], ["verify", str(ws)], ["stats", str(ws)], ["report", str(ws)]):
        done = epistemic(*command)
        assert done.returncode == 0, (command, done.stderr)
    assert [r["calls"] for r in sessions(ws)] == [2]


@pytest.mark.system  # end to end, slow for the default tier
def test_run_resume_continues_the_conversation_from_the_journal(tmp_path: Path) -> None:
    ws, rows = two_runs(tmp_path)
    first = rows[0]
    more = script(tmp_path, "c.json", [{"calls": [bash("echo resumed")]}, {"final": "again"}])
    done = run(ws, more, "one more thing", "--resume", first["id"][:9])
    assert done.returncode == 0, done.stderr
    after = sessions(ws)
    assert len(after) == 2 and after[0]["calls"] == 2 and after[0]["status"] == "finished"
    records, _ = read_records(Path(first["journal"]))
    messages = rebuild(records, Path(first["journal"]).parent / "evidence")
    kinds = [type(m).__name__ for m in messages]
    assert kinds == [
        "UserMessage", "AssistantMessage", "ToolResults", "AssistantMessage",
        "UserMessage", "AssistantMessage", "ToolResults", "AssistantMessage",
    ]  # fmt: skip
    assert isinstance(messages[0], UserMessage) and messages[0].text == "the first task"
    said = messages[1]
    assert isinstance(said, AssistantMessage) and said.text == "Look first [bold]x[/]"
    assert said.calls[0].arguments["command"] == "ls"
    results = messages[2]
    assert isinstance(results, ToolResults)
    assert results.results[0].call_id == said.calls[0].id
    assert json.loads(results.results[0].text)["returncode"] == 0
    assert isinstance(messages[4], UserMessage) and messages[4].text == "one more thing"


@pytest.mark.system  # end to end, slow for the default tier
def test_show_prints_a_call_in_full_escaped_with_its_output_and_diff(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    reason = "Write [bold]x[/] and \x1b[31mred\x1b[0m text to see it verbatim"
    with Session(ws) as session:
        session.bash("printf '[a-z]+ [/]\\n'; echo err >&2", "collect-info", reason)
        session.write_file("g.txt", "hello\nworld\n", WRITE)
        session.str_replace_edit("g.txt", "world", "there", WRITE)
    shown = epistemic("show", "1", "-C", str(ws))
    assert shown.returncode == 0, shown.stderr
    assert "Write [bold]x[/] and \\x1b[31mred\\x1b[0m text" in shown.stdout
    assert "\x1b" not in shown.stdout
    assert "    [a-z]+ [/]" in shown.stdout and "    err" in shown.stdout
    diff = epistemic("show", "3", "-C", str(ws))
    assert "-world" in diff.stdout and "+there" in diff.stdout
    data = json.loads(epistemic("show", "3", "--json", "-C", str(ws)).stdout)
    assert data["declared"]["reason"] == WRITE and "+there" in data["evidence"]["diff"]["text"]
    for bad in ("4", "0", "x", "-1"):
        done = epistemic("show", bad, "-C", str(ws))
        assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    ref = data["evidence"]["diff"]["ref"]["sha256"]
    (ws / ".epistemic" / "evidence" / ref[:2] / ref).unlink()
    missing = epistemic("show", "3", "-C", str(ws))
    assert missing.returncode == 1 and "diff: blob" in missing.stderr
    assert "missing from the evidence store" in missing.stderr


def test_show_warns_first_on_a_tampered_journal(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    with Session(ws) as session:
        session.bash("echo one", "collect-info", LOOK)
        session.bash("echo two", "collect-info", LOOK)
    journal = ws / ".epistemic" / "journal.jsonl"
    journal.write_text(journal.read_text().replace("echo one", "echo ONE"))
    done = epistemic("show", "2", "-C", str(ws))
    assert done.returncode == 1
    assert done.stdout.startswith("WARNING: the journal does not verify (tampered)")


def test_listing_ignores_foreign_folders_and_reads_torn_sessions(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    with Session(ws) as session:
        session.bash("echo one", "collect-info", LOOK)
    foreign = ws / ".epistemic" / "sessions"
    (foreign / "not-an-id").mkdir(parents=True)
    (foreign / "not-an-id" / "journal.jsonl").write_text("{}\n")
    (foreign / ("ab" * 16)).mkdir()  # no journal: nothing to list
    with (ws / ".epistemic" / "journal.jsonl").open("ab") as handle:
        handle.write(b'{"kind":"call"')
    entries = listing(ws)
    assert [(e.status, e.calls) for e in entries] == [("torn", 1)]


@pytest.mark.system  # end to end, slow for the default tier
def test_salvage_refuses_a_later_session_rather_than_move_the_first(tmp_path: Path) -> None:
    _, rows = two_runs(tmp_path)
    later = Path(rows[1]["journal"])
    later.write_text(later.read_text().replace("echo one", "echo ONE"))
    done = epistemic("verify", "--salvage", str(later))
    assert done.returncode == 2 and "first session" in done.stderr, done.stderr
    assert epistemic("verify", rows[0]["journal"]).returncode == 0  # untouched


def test_show_gives_the_diff_a_shell_command_made(tmp_path: Path) -> None:
    """`sed -i` and a redirect change files the session never saw through a file tool: the
    diff `show` prints was kept as evidence when the call ran."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text("alpha\nbeta\n")
    with Session(ws) as session:
        session.bash(
            "sed -i 's/beta/gamma/' notes.txt && echo new > made.txt", "change-state", WRITE
        )
    shown = epistemic("show", "1", "-C", str(ws))
    assert shown.returncode == 0, shown.stderr
    assert "-beta" in shown.stdout and "+gamma" in shown.stdout
    assert "+new" in shown.stdout  # the created file, too
    data = json.loads(epistemic("show", "1", "--json", "-C", str(ws)).stdout)
    assert "+gamma" in data["evidence"]["diff"]["text"]
