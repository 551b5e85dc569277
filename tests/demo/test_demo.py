"""`epistemic demo`: the offline scripted session, its RATIONALE.md, and its oracle."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import cli_env, epistemic
from epistemic_agent.demo import SCRIPT, TASK, prepare_workspace, run_oracle
from epistemic_agent.providers.replay import load_script


def journal(workspace: Path) -> list[dict[str, Any]]:
    text = (workspace / ".epistemic" / "journal.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines()]


def section(text: str, title: str) -> str:
    """The body of one `## ` section of RATIONALE.md."""
    start = text.index(f"## {title}\n")
    end = text.find("\n## ", start + 1)
    footer = text.find("\n---\n", start)
    ends = [e for e in (end, footer) if e != -1]
    return text[start : min(ends)] if ends else text[start:]


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess[str], Path]:
    """One `epistemic demo -o DIR` run, shared by the tests that read what it left."""
    out = tmp_path_factory.mktemp("demo") / "ws"
    done = epistemic("demo", "-o", str(out))
    return done, out


# -- the run ---------------------------------------------------------------------------------


@pytest.mark.system  # end to end, slow for the default tier
def test_demo_exits_0_and_says_what_it_did(demo: tuple[Any, Path]) -> None:
    done, out = demo
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    stdout = done.stdout
    assert "A scripted model plays this session (no real model, no API key)" in stdout
    assert "scripted model: every call above was played from the bundled script" in stdout
    assert "oracle (check.py): PASS: All checks passed." in stdout
    assert f"RATIONALE.md: {(out / 'RATIONALE.md').resolve()}" in stdout
    assert f"workspace: {out}" in stdout
    assert "stopped: finished (the model answered without tool calls)" in stdout
    assert "the whole session so far: 18 calls: 17 ran (1 failed), 1 rejected\n" in stdout
    assert "; reverts that ran: 1\n" in stdout
    assert "FAIL" not in stdout


def test_demo_shows_one_row_per_call_numbered_as_the_journal(demo: tuple[Any, Path]) -> None:
    done, out = demo
    lines = done.stdout.splitlines()
    rows = [line.split() for line in lines if line[:1] in ("●", "⊘")]
    rejected = [row for row in rows if row[0] == "⊘"]
    assert [row[2] for row in rejected] == ["rejected"]
    assert any(line.strip().startswith("type-unknown: ") for line in lines)
    for act in ("collect-info", "test-hypothesis", "setup", "change-state", "revert", "verify"):
        assert any(row[2] == act for row in rows), act
    seqs = [r["seq"] for r in journal(out) if r["kind"] in ("call", "rejected")]
    assert [int(row[1]) for row in rows] == seqs  # one numbering: the journal's


def test_demo_uses_the_given_directory(demo: tuple[Any, Path]) -> None:
    _, out = demo
    for name in ("task.md", "check.py", "orders.json", "process_orders.py", "summary.json"):
        assert (out / name).is_file(), name
    assert (out / "RATIONALE.md").is_file()
    assert (out / ".epistemic" / "journal.jsonl").is_file()
    header = journal(out)[0]
    assert header["kind"] == "session"
    assert header["workspace"] == str(out.resolve())
    assert header["model"] == f"replay:{SCRIPT}"
    assert header["task"] == (TASK / "task.md").read_text(encoding="utf-8").strip()
    # the bundled task itself is untouched
    assert not (TASK / "summary.json").exists()
    assert not (TASK / ".epistemic").exists()


def test_demo_result_passes_its_oracle(demo: tuple[Any, Path]) -> None:
    _, out = demo
    done = subprocess.run(
        [sys.executable, "check.py"], cwd=out, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stdout
    assert done.stdout.strip() == "All checks passed."
    summary = json.loads((out / "summary.json").read_text())
    assert summary["unique_customers"] == 7
    assert summary["top_product"] == "pen"


def test_demo_rationale_has_every_section(demo: tuple[Any, Path]) -> None:
    _, out = demo
    text = (out / "RATIONALE.md").read_text(encoding="utf-8")
    assert text.startswith("# RATIONALE\n")
    assert "**Task:** \\`process_orders.py\\` is supposed to" in text  # shown, not rendered
    assert (
        "_18 calls: 17 ran (1 failed), 1 rejected; 10 of the 17 that ran were shell acts._" in text
    )
    assert "_The table counts the calls that ran: a rejected or denied call did not._" in text
    assert "| act type | calls that ran | share |" in text
    assert f"_Model `replay:{SCRIPT}`: 15 model call(s), no token usage reported._" in text
    titles = ["Narrative", "Dead ends", "Rejections by rule", "How it ended"]
    positions = [text.index(f"## {title}\n") for title in titles]
    assert positions == sorted(positions)

    narrative = section(text, "Narrative")
    assert "### 4. (no act) · REJECTED" in narrative
    assert "**Rejected** (`type-unknown`)" in narrative
    assert "`test-hypothesis` · ok" in narrative
    assert "`verify` · ok" in narrative
    assert "`revert` · ok" in narrative

    dead_ends = section(text, "Dead ends")
    assert "**Call 11** (ok)" in dead_ends
    assert "`git checkout -- process_orders.py`" in dead_ends
    assert "No reverts" not in dead_ends

    assert "| `type-unknown` | 1 |" in section(text, "Rejections by rule")

    ending = section(text, "How it ended")
    assert "**Stopped:** `finished`: the model answered without tool calls" in ending
    assert "**Final answer:**" in ending
    assert "```text\nFixed four bugs in process_orders.py" in ending  # several lines: as written

    lines = (out / ".epistemic" / "journal.jsonl").read_bytes().splitlines()
    head = hashlib.sha256(lines[-1]).hexdigest()
    assert text.endswith(
        f"_Journal head: `{head}` after {len(lines)} line(s) of `.epistemic/journal.jsonl`. "
        "Check it with `epistemic verify`._\n"
    )


def test_demo_journal_matches_the_script(demo: tuple[Any, Path]) -> None:
    _, out = demo
    records = journal(out)
    turns = load_script(SCRIPT)
    kinds = [r["kind"] for r in records]
    assert kinds.count("session") == 1
    assert kinds.count("user") == 1
    assert kinds.count("model") == len(turns)
    assert kinds.count("call") == sum(len(t.calls) for t in turns) - 1
    (rejected,) = [r for r in records if r["kind"] == "rejected"]
    assert (rejected["rule"], rejected["given"]["type"]) == ("type-unknown", "explore")
    acts = [r["act"] for r in records if r["kind"] == "call"]
    assert acts.count("revert") == 1
    assert acts.count("verify") == 1
    assert acts.count("test-hypothesis") == 3
    assert all(r["ok"] for r in records if r["kind"] == "outcome" and r["seq"] != 5)
    assert [r["kind"] for r in records[-2:]] == ["stop", "closed"]
    assert records[-2]["reason"] == "finished" and records[-1]["stop"] == "finished"
    assert "unplayed" not in records[-2]["message"]


def test_demo_journal_verifies(demo: tuple[Any, Path]) -> None:
    _, out = demo
    done = epistemic("verify", str(out))
    assert done.returncode == 0, done.stdout
    assert done.stdout.startswith("intact: ")


# -- options ---------------------------------------------------------------------------------


@pytest.mark.system  # end to end, slow for the default tier
def test_demo_json_in_a_fresh_temporary_directory(tmp_path: Path) -> None:
    """`--json` prints JSON lines only; without -o the demo makes its own temporary directory."""
    done = epistemic("demo", "--json", env=cli_env(TMPDIR=str(tmp_path)))
    assert done.returncode == 0, done.stderr
    (made,) = list(tmp_path.glob("epistemic-demo-*"))
    assert (made / "RATIONALE.md").is_file()

    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert events
    kinds = [e["event"] for e in events]
    assert set(kinds) <= {"notice", "model-start", "model", "call-start", "call", "stop", "oracle"}
    assert "scripted model" in events[0]["text"].lower()
    assert any(e["event"] == "notice" and e["text"] == f"workspace: {made}" for e in events)
    calls = [e for e in events if e["event"] == "call"]
    assert len(calls) == 18
    assert [c["status"] for c in calls].count("rejected") == 1
    (stop,) = [e for e in events if e["event"] == "stop"]
    assert (stop["reason"], stop["exit_code"]) == ("finished", 0)
    oracle = events[-1]
    assert oracle["event"] == "oracle"
    assert oracle["passed"] is True
    assert oracle["output"] == "All checks passed."
    assert Path(oracle["report"]) == (made / "RATIONALE.md").resolve()
    assert epistemic("verify", str(made)).returncode == 0


def test_demo_refuses_a_non_empty_directory(tmp_path: Path) -> None:
    out = tmp_path / "busy"
    out.mkdir()
    (out / "mine.txt").write_text("keep me")
    done = epistemic("demo", "-o", str(out))
    assert (out / "mine.txt").read_text() == "keep me"
    assert sorted(p.name for p in out.iterdir()) == ["mine.txt"]
    assert done.returncode != 0
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1
    assert "not empty" in lines[0]


def test_demo_refuses_a_file(tmp_path: Path) -> None:
    target = tmp_path / "a-file"
    target.write_text("keep me")
    done = epistemic("demo", "-o", str(target))
    assert done.returncode != 0
    assert "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert target.read_text() == "keep me"


def test_prepare_workspace_refuses_a_non_empty_directory(tmp_path: Path) -> None:
    (tmp_path / "mine.txt").write_text("keep me")
    with pytest.raises(FileExistsError, match="not empty"):
        prepare_workspace(tmp_path)


# -- the oracle ------------------------------------------------------------------------------


def test_oracle_fails_on_the_untouched_task(tmp_path: Path) -> None:
    work = tmp_path / "task"
    shutil.copytree(TASK, work, ignore=shutil.ignore_patterns("__pycache__"))
    passed, verdict = run_oracle(work)
    assert not passed
    assert "summary.json not found" in verdict

    generated = subprocess.run(
        [sys.executable, "process_orders.py"], cwd=work, capture_output=True, text=True
    )
    assert generated.returncode == 0, generated.stderr
    assert (work / "summary.json").is_file()
    done = subprocess.run(
        [sys.executable, "check.py"], cwd=work, capture_output=True, text=True, check=False
    )
    assert done.returncode == 1
    assert "field(s) wrong." in done.stdout
    assert "unique_customers: expected 7, got 5" in done.stdout
    assert 'top_product: expected "pen", got "notebook"' in done.stdout
    passed, verdict = run_oracle(work)
    assert not passed
    assert "expected" in verdict


def test_bundled_script_is_a_valid_script() -> None:
    turns = load_script(SCRIPT)
    assert turns[-1].calls == ()
    assert turns[-1].text.startswith("Fixed four bugs")
    assert all(t.calls for t in turns[:-1])
    ids = [c.id for t in turns for c in t.calls]
    assert all(ids)
    assert len(set(ids)) == len(ids)


def test_the_demo_closes_the_session_it_owns(demo: tuple[Any, Path]) -> None:
    """The demo ran its session to the end: the listing says how it ended, not `open`."""
    _, out = demo
    assert journal(out)[-1]["kind"] == "closed"
    done = epistemic("sessions", "--json", cwd=out)
    assert done.returncode == 0, done.stderr
    assert [s["status"] for s in json.loads(done.stdout)] == ["finished"]
