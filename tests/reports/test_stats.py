"""`epistemic stats` and `epistemic diff`: numbers of one session or many, and two sessions
side by side, read from their journals alone (demo runs, a variant agent, Python API
sessions; torn, running, versioned and broken journals)."""

from __future__ import annotations

import hashlib
import json
import shutil
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conftest import epistemic
from epistemic_agent.cli import app as cli
from epistemic_agent.demo import SCRIPT, prepare_workspace
from epistemic_agent.journal.record_fields import version_notes
from epistemic_agent.journal.records import CallView
from epistemic_agent.policy.rules import preset
from epistemic_agent.reports.diff import align
from epistemic_agent.reports.stats import SUMMED
from epistemic_agent.session.session import Session

LOOK = "Nothing is known about this workspace yet; I need to see what files exist."
GUESS = "I believe the marker is absent; if `test -e` succeeds, that belief is refuted."
CHANGE = "The report asks for a marker file; creating it is the change itself."
UNDO = "The marker was the wrong approach; take the change back to where it started."
TASK = "make a marker file"
#: Demo turns the variant agent skips: the rejected call, and the wrong edit, its test and
#: its revert. It reaches the same fix without a rejection or a revert.
SKIPPED_TURNS = (2, 7, 8, 9)


def as_json(*args: str, cwd: Path | None = None) -> Any:
    done = epistemic(*args, "--json", cwd=cwd)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def journal_of(workspace: Path) -> Path:
    return workspace / ".epistemic" / "journal.jsonl"


def records(workspace: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in journal_of(workspace).read_text().splitlines()]


def of_kind(workspace: Path, kind: str) -> list[dict[str, Any]]:
    return [r for r in records(workspace) if r["kind"] == kind]


def append_chained(journal: Path, record: dict[str, Any], version: int = 1) -> None:
    """Append a record the way a writer would: chained to the last line."""
    lines = journal.read_bytes().splitlines()
    body = {"prev": hashlib.sha256(lines[-1]).hexdigest(), "n": len(lines) + 1, "v": version}
    text = json.dumps({**body, **record}, separators=(",", ":"))
    with journal.open("a") as handle:
        handle.write(text + "\n")


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder of three sessions of the demo task: two demo runs and a variant agent."""
    root = tmp_path_factory.mktemp("runs")
    for name in ("demo-1", "demo-2"):
        done = epistemic("demo", "-o", str(root / name))
        assert done.returncode == 0, done.stderr
    turns = json.loads(SCRIPT.read_text())
    script = tmp_path_factory.mktemp("script") / "variant.json"
    script.write_text(json.dumps([t for i, t in enumerate(turns) if i not in SKIPPED_TURNS]))
    workspace = prepare_workspace(root / "variant")
    task = (workspace / "task.md").read_text().strip()
    done = epistemic("run", "--model", f"replay:{script}", "-C", str(workspace), task)
    assert done.returncode == 0, done.stderr
    return root


def api_session(workspace: Path, task: str, test_first: bool = False) -> Path:
    """A Python API session: look, (test), change, change again, revert, two rejections."""
    workspace.mkdir(parents=True)
    with Session(workspace, header={"task": task}) as session:
        session.bash("ls", "collect-info", LOOK)
        if test_first:
            session.bash("test -e marker", "test-hypothesis", GUESS)
        session.bash("touch marker", "change-state", CHANGE)
        session.bash("echo hi > marker", "change-state", CHANGE)
        session.bash("rm marker", "revert", UNDO)
        session.bash("ls", "explore", LOOK)
        session.bash("ls", "collect-info", "short")
    return workspace


def expected_acts(workspace: Path) -> Counter[str]:
    return Counter(r["act"] for r in of_kind(workspace, "call"))


# -- stats: one session ------------------------------------------------------------------------


@pytest.mark.system  # end to end, slow for the default tier
def test_stats_of_one_demo_session_prints_its_numbers(runs: Path) -> None:
    workspace = runs / "demo-1"
    done = epistemic("stats", str(workspace))
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    calls, rejected = of_kind(workspace, "call"), of_kind(workspace, "rejected")
    failed = sum(1 for r in of_kind(workspace, "outcome") if r["ok"] is False)
    text = done.stdout
    ran = f"{len(calls)} ran" + (f" ({failed} failed)" if failed else "")
    assert f"calls      {len(calls) + len(rejected)} calls: {ran}, {len(rejected)} rejected" in text
    assert "rejected   1: type-unknown ×1" in text
    for act, count in expected_acts(workspace).items():
        assert f"{act} " in text and f" {count} " in text.split(act, 1)[1].splitlines()[0]
    assert "reverts    1 ran: call 11 undid 9" in text
    hypotheses = expected_acts(workspace)["test-hypothesis"]
    assert f"hypotheses {hypotheses} tested" in text
    assert f"model      {len(of_kind(workspace, 'model'))} call(s), 0 error(s)" in text
    assert "tokens not reported" in text
    assert "ended      finished: the model answered without tool calls" in text
    assert "integrity  intact" in text
    assert "changed    created summary.json; modified process_orders.py" in text


def test_stats_json_of_one_session_counts_from_the_journal(runs: Path) -> None:
    workspace = runs / "demo-1"
    data = as_json("stats", str(journal_of(workspace)))
    assert set(data) == {"sessions", "totals", "skipped"}
    (row,) = data["sessions"]
    acts = expected_acts(workspace)
    assert row["acts"] == dict(acts)
    assert list(row["acts"]) == [a for a in row["acts"] if a in acts]  # vocabulary order
    assert abs(sum(row["shares"].values()) - 1) < 0.001
    assert row["shares"]["change-state"] == round(acts["change-state"] / sum(acts.values()), 4)
    assert row["calls"] == len(of_kind(workspace, "call")) + len(of_kind(workspace, "rejected"))
    assert row["rejections"] == {"type-unknown": 1} and row["rejected"] == 1
    assert row["hypotheses"] == acts["test-hypothesis"] == 3
    assert row["model_calls"] == len(of_kind(workspace, "model")) == 15
    assert row["tokens_reported"] == 0 and row["model_errors"] == 0
    assert row["reverts"] == 1 and row["dead_ends"] == [11] and row["undone"] == [9]
    (revert,) = row["reverted"]
    assert revert["command"] == "git checkout -- process_orders.py"
    assert revert["paths"] == ["process_orders.py"] and revert["undoes"] == [9]
    assert row["stop"] == "finished" and row["integrity"] == "intact"
    assert row["integrity_problem"] is None and row["notes"] == []
    assert row["changed"]["created"] == ["summary.json"] and row["files_changed"] == 2
    assert row["task"] == (workspace / "task.md").read_text().strip()
    assert 0 < row["wall_time"] < 60
    assert data["skipped"] == []


def test_stats_of_api_session_in_process(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    workspace = api_session(tmp_path / "ws", TASK, test_first=True)
    with Session(workspace, policy=preset("read-only")) as session:
        session.bash("touch other", "change-state", CHANGE)  # denied by the policy
    assert cli.main(["stats", str(workspace), "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)["sessions"]
    assert row["acts"] == {
        "collect-info": 1,
        "test-hypothesis": 1,
        "change-state": 2,
        "revert": 1,
    }
    assert row["rejections"] == {"type-unknown": 1, "reason-too-short": 1, "policy": 1}
    assert row["denied"] == 1 and row["approved"] == 0
    assert row["failed"] == 1  # `test -e marker` exits 1: the hypothesis held
    assert row["reverted"][0]["undoes"] == [3, 4] and row["undone"] == [3, 4]
    assert row["model_calls"] == 0 and row["stop"] is None and row["model"] is None
    assert row["changed"] == {"created": ["marker"], "modified": ["marker"], "deleted": ["marker"]}
    assert cli.main(["stats", str(workspace)]) == 0
    text = capsys.readouterr().out
    assert "ended      no stop record (an exec/tool session" in text
    assert "calls      8 calls: 5 ran (1 failed), 3 rejected\n" in text
    assert "approvals  0 approved, 0 denied by a human; 1 call(s) denied by a policy rule" in text


def test_stats_defaults_to_the_current_directory(tmp_path: Path) -> None:
    workspace = api_session(tmp_path / "ws", TASK)
    done = epistemic("stats", cwd=workspace)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("session    ws · ")


# -- stats: many sessions ----------------------------------------------------------------------


def test_stats_of_a_folder_has_one_row_per_session_and_totals_that_add_up(runs: Path) -> None:
    data = as_json("stats", str(runs))
    rows, totals = data["sessions"], data["totals"]
    assert [row["name"] for row in rows] == ["demo-1", "demo-2", "variant"]
    assert [row["calls"] for row in rows] == [18, 18, 14]
    for key in SUMMED:
        assert totals[key] == sum(row[key] for row in rows), key
    for act in ("collect-info", "change-state", "revert"):
        assert totals["acts"].get(act, 0) == sum(row["acts"].get(act, 0) for row in rows)
    assert totals["sessions"] == 3 and totals["calls"] == 50 and totals["reverts"] == 2
    assert totals["rejections"] == {"type-unknown": 2}
    assert totals["shares"]["revert"] == round(2 / (50 - 2), 4)
    assert totals["stops"] == {"finished": 3} and totals["integrity"] == {"intact": 3}
    assert totals["wall_time"] == pytest.approx(sum(row["wall_time"] for row in rows), abs=0.01)


def test_stats_text_of_many_sessions_is_a_table_with_totals(runs: Path) -> None:
    done = epistemic("stats", str(runs / "demo-1"), str(runs / "variant"), str(runs / "demo-2"))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split()[:3] == ["session", "calls", "info"]
    table = {line.split()[0]: line.split() for line in lines[1:] if line[:1].isalnum()}
    assert list(table)[:4] == ["demo-1", "variant", "demo-2", "TOTALS"]
    assert table["demo-1"][1:3] == ["18", "4"] and table["variant"][1] == "14"
    assert table["TOTALS"][1] == "50"
    chain = lines[0].split().index("chain")
    assert table["variant"][chain - 1 : chain + 1] == ["finished", "intact"]
    rev = lines[0].split().index("rev")
    assert [table[name][rev] for name in ("demo-1", "variant", "TOTALS")] == ["1", "0", "2"]
    infos = sum(expected_acts(runs / name)["collect-info"] for name in ("demo-1", "variant"))
    share = (infos + expected_acts(runs / "demo-2")["collect-info"]) / (50 - 2)
    assert lines[-2].startswith(f"shares over 3 sessions: collect-info (info) {share:.1%} · ")
    assert lines[-1].startswith("beliefs: 8 tested, 5 confirmed, 2 refuted, 1 unsettled; ")


def test_stats_skips_an_unreadable_journal_among_many(runs: Path, tmp_path: Path) -> None:
    shutil.copytree(runs / "demo-1", tmp_path / "good")
    (tmp_path / "bad" / ".epistemic").mkdir(parents=True)
    journal_of(tmp_path / "bad").write_text("not json at all\n")
    done = epistemic("stats", str(tmp_path))
    assert done.returncode == 0, done.stderr
    assert "note: skipped: " in done.stderr and "not a journal" in done.stderr
    assert done.stdout.startswith("session    good · ")
    data = as_json("stats", str(tmp_path))
    assert len(data["sessions"]) == 1
    assert data["skipped"][0]["journal"] == str(journal_of(tmp_path / "bad").resolve())


# -- stats: odd journals -----------------------------------------------------------------------


def test_stats_reads_a_torn_journal_and_says_so(runs: Path, tmp_path: Path) -> None:
    workspace = shutil.copytree(runs / "demo-1", tmp_path / "torn")
    lines = len(journal_of(workspace).read_text().splitlines())
    with journal_of(workspace).open("a") as handle:
        handle.write('{"prev":"00')  # a crash mid-write: no newline
    done = epistemic("stats", str(workspace))
    assert done.returncode == 0, done.stderr
    assert f"note: line {lines + 1} is torn" in done.stderr
    assert "calls      18 calls: " in done.stdout
    assert f"integrity  torn: line {lines + 1} is torn" in done.stdout
    (row,) = as_json("stats", str(workspace))["sessions"]
    assert row["integrity"] == "torn" and any("torn" in note for note in row["notes"])
    assert row["acts"] == dict(expected_acts(runs / "demo-1"))


def test_stats_of_a_running_session_counts_the_call_without_outcome(tmp_path: Path) -> None:
    workspace = api_session(tmp_path / "ws", TASK)
    call = {"kind": "call", "seq": 7, "t": "2026-11-30T11:27:33.123Z", "tool": "bash"}
    call.update(act="verify", mutating=False, reason=LOOK, command="sleep 100")
    append_chained(journal_of(workspace), call)
    done = epistemic("stats", str(workspace))
    assert done.returncode == 0, done.stderr
    assert "7 calls: 4 ran, 2 rejected, 1 without an outcome" in done.stdout
    assert "no stop record; 1 call(s) without outcome" in done.stdout
    assert "note: verify: 1 line(s) after the last anchored head" in done.stderr
    (row,) = as_json("stats", str(workspace))["sessions"]
    assert row["unknown"] == 1 and row["acts"]["verify"] == 1 and row["integrity"] == "intact"


def test_stats_notes_lines_of_newer_and_older_format_versions(tmp_path: Path) -> None:
    workspace = api_session(tmp_path / "ws", TASK)
    append_chained(journal_of(workspace), {"kind": "hologram", "t": "x"}, version=2)
    append_chained(journal_of(workspace), {"kind": "user", "t": "x", "text": "hi"}, version=0)
    done = epistemic("stats", str(workspace))
    assert done.returncode == 0, done.stderr
    assert "format version 2, newer than this reader" in done.stderr
    assert "note: 1 line(s) have format version 0, older than this reader's 1" in done.stderr
    assert "calls      6 calls: " in done.stdout
    (row,) = as_json("stats", str(workspace))["sessions"]
    assert sum("format version" in note for note in row["notes"]) == 2


def test_version_notes_count_unversioned_lines() -> None:
    notes = version_notes([{"v": 1}, {"n": 2}, {"v": "one"}, {"v": 0}])
    assert notes[0].startswith("1 line(s) have format version 0")
    assert notes[1].startswith("2 line(s) carry no format version")


def rewrite(workspace: Path, change: Any) -> Path:
    """Rewrite a journal's records by hand (which breaks the chain, as editing does)."""
    found = change(records(workspace))
    journal_of(workspace).write_text("".join(json.dumps(r) + "\n" for r in found))
    return workspace


def first(found: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    return next(r for r in found if r.get("kind") == kind)


def test_newer_lines_are_one_note_not_one_per_line(runs: Path, tmp_path: Path) -> None:
    workspace = shutil.copytree(runs / "demo-1", tmp_path / "newer")
    rewrite(workspace, lambda found: [{**r, "v": 2 + (r["n"] > 60)} for r in found])
    done = epistemic("stats", str(workspace))
    assert done.returncode == 0, done.stderr
    notes = [line for line in done.stderr.splitlines() if "format version" in line]
    total = len(records(workspace))
    assert notes == [
        f"note: {total} lines have format versions 2 and 3, newer than this reader (1); "
        "read what is understood (the first is line 1)"
    ]
    assert "calls      18 calls: " in done.stdout


def test_a_field_of_the_wrong_type_is_a_note_not_a_crash(runs: Path, tmp_path: Path) -> None:
    """A call whose `seq` is a list: it cannot be placed, so it is not counted (noted)."""

    def change(found: list[dict[str, Any]]) -> list[dict[str, Any]]:
        first(found, "call")["seq"] = ["x"]
        return found

    workspace = rewrite(shutil.copytree(runs / "demo-1", tmp_path / "odd"), change)
    for args in (["stats", str(workspace)], ["diff", str(workspace), str(runs / "demo-1")]):
        done = epistemic(*args)
        assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
        assert "1 field(s) of the wrong type were read as absent: call `seq`" in done.stderr
        assert "is not an integer (line 5)" in done.stderr
    (row,) = as_json("stats", str(workspace))["sessions"]
    assert row["calls"] == 17
    assert any("call `seq` is not an integer" in note for note in row["notes"])


#: Values no field of the format has as they are: each tried in place of each field in turn.
BAD_VALUES = (["x"], {"a": 1}, True, None, 10**30, "x\x1b[2J")
BAD_IDS = ("list", "object", "true", "null", "huge", "escape")
#: Records of kinds the demo does not write, with the fields readers use.
MORE_RECORDS = (
    {"kind": "approval", "seq": 3, "decision": "approved", "by": "me", "channel": "terminal"},
    {"kind": "policy", "t": "2026-01-01T00:00:00.000Z", "source": "p.toml", "sha256": "ab" * 32},
    {"kind": "rejected", "seq": 19, "act": "revert", "rule": "policy", "policy": {"rule": "r"}},
    {"kind": "outcome", "seq": 3, "flags": [{"flag": "no-change", "message": "m"}]},
)


def field_paths(found: list[dict[str, Any]]) -> list[tuple[int, tuple[str, ...]]]:
    """Every field of the first record of each kind, and the fields of its objects."""
    paths: list[tuple[int, tuple[str, ...]]] = []
    kinds: set[str] = set()
    for index, record in enumerate(found):
        if record["kind"] in kinds:
            continue
        kinds.add(record["kind"])
        for key, value in record.items():
            paths.append((index, (key,)))
            if isinstance(value, dict):
                paths += [(index, (key, inner)) for inner in value]
    return paths


#: The readers swept, each with its arguments for the changed workspace, the demo and a folder.
READERS: dict[str, Callable[[Path, Path, Path], list[str]]] = {
    "stats": lambda workspace, demo, out: ["stats", str(workspace)],
    "diff": lambda workspace, demo, out: ["diff", "--any-task", str(workspace), str(demo)],
    "html": lambda workspace, demo, out: ["html", str(workspace), "-o", str(out / "page.html")],
    "lint": lambda workspace, demo, out: ["lint", str(workspace)],
    "export": lambda workspace, demo, out: [
        "export",
        str(workspace),
        "-o",
        str(out / "b.zip"),
        "--force",
    ],
}


@pytest.mark.system  # a long sweep: 3,000 commands
@pytest.mark.parametrize("value", BAD_VALUES, ids=BAD_IDS)
@pytest.mark.parametrize("reader", READERS)
def test_readers_never_crash_on_fields_of_the_wrong_type(
    runs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], reader: str, value: object
) -> None:
    """stats, diff, html, lint and export on the demo with one field changed to `value`, each
    field in turn: no traceback, and no raw escape sequence in what they print. (One case per
    reader and value, so that a failure names them and xdist can share the sweep out.)"""
    original = records(runs / "demo-1") + [dict(r) for r in MORE_RECORDS]
    workspace = shutil.copytree(runs / "demo-1", tmp_path / "ws")
    args = READERS[reader](workspace, runs / "demo-1", tmp_path)
    paths = field_paths(original)
    assert len(paths) * len(BAD_VALUES) > 500  # over 500 journals, each with one field changed
    for index, path in paths:
        found = json.loads(json.dumps(original))
        target = found[index]
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
        rewrite(workspace, lambda _, found=found: found)
        what = f"{reader} with line {index + 1} {'.'.join(path)} = {value!r}"
        assert cli.main(args) in (0, 1), what
        out, err = capsys.readouterr()
        assert "\x1b" not in out + err, what
        assert "rendering failed" not in out + err, what


@pytest.mark.system  # end to end, slow for the default tier
def test_wall_time_is_from_the_start_to_the_latest_sound_timestamp(
    runs: Path, tmp_path: Path
) -> None:
    (sound,) = as_json("stats", str(runs / "demo-1"))["sessions"]
    later = "2999-01-01T00:00:00.000Z"
    last = len(journal_of(runs / "demo-1").read_text().splitlines())
    where = f"(the first is line {last})"
    odd: dict[str, tuple[Any, str | None]] = {
        "backwards": (
            "2000-01-01T00:00:00.000Z",
            f"go back in time, earlier than one before them {where}; wall time runs from the "
            "start to the latest timestamp",
        ),
        "future": (
            "9999-12-31T23:59:59.999Z",
            f"lie in the future, after this reader's clock {where}; wall time ignores them",
        ),
        "unreadable": ("soon", f"cannot be read {where}; wall time ignores them"),
        "naive": (lambda t: t[:19], None),  # no zone, no milliseconds: taken as UTC
        "newer": (None, None),  # later lines of a newer version and of an unknown kind
    }
    folders = []
    for name, (stamp, note) in odd.items():
        workspace = shutil.copytree(runs / "demo-1", tmp_path / name)
        folders.append(str(workspace))
        if stamp is None:
            append_chained(journal_of(workspace), {"kind": "stop", "t": later}, version=2)
            append_chained(journal_of(workspace), {"kind": "hologram", "t": later})
        else:
            change = stamp if callable(stamp) else lambda _, s=stamp: s
            rewrite(
                workspace,
                lambda found, change=change: [
                    *found[:-1],
                    {**found[-1], "t": change(found[-1]["t"])},
                ],
            )
        done = epistemic("stats", str(workspace))
        assert done.returncode == 0, done.stderr
        timing = [line for line in done.stderr.splitlines() if "timestamp" in line]
        assert timing == ([f"note: 1 timestamp(s) {note}"] if note else []), name
        (row,) = as_json("stats", str(workspace))["sessions"]
        assert 0 <= row["wall_time"] <= sound["wall_time"] + 0.01, name
    data = as_json("stats", *folders)
    assert data["totals"]["wall_time"] == pytest.approx(
        sum(row["wall_time"] for row in data["sessions"]), abs=0.01
    )
    assert 0 <= data["totals"]["wall_time"] <= len(odd) * (sound["wall_time"] + 0.01)


ESCAPES = "\x1b]0;PWNED\x07\x1b[2J"


def test_stats_and_diff_show_escape_sequences_as_text(runs: Path, tmp_path: Path) -> None:
    def change(found: list[dict[str, Any]]) -> list[dict[str, Any]]:
        first(found, "session")["task"] += ESCAPES
        first(found, "call")["act"] = "collect-info" + ESCAPES
        first(found, "call")["command"] = "ls -la" + ESCAPES
        first(found, "stop")["message"] = "done" + ESCAPES
        first(found, "outcome")["observed"] = {"created": ["x" + ESCAPES], "modified": []}
        return found

    workspace = rewrite(shutil.copytree(runs / "demo-1", tmp_path / "hostile"), change)
    shown = "\\x1b]0;PWNED\\x07\\x1b[2J"
    for args in (
        ["stats", str(workspace)],
        ["stats", str(workspace), str(runs / "demo-2")],
        ["diff", "--any-task", str(workspace), str(runs / "variant")],
    ):
        done = epistemic(*args)
        assert done.returncode == 0, done.stderr
        assert "\x1b" not in done.stdout + done.stderr and "\x07" not in done.stdout, args
        assert shown in done.stdout, args
    done = epistemic("diff", "--any-task", str(workspace), str(runs / "variant"))
    assert f"  a  call 1 collect-info{shown}: ls -la{shown}\n" in done.stdout
    assert f"ended\n  a  finished: done{shown}" in done.stdout
    (row,) = as_json("stats", str(workspace))["sessions"]  # JSON: the text as recorded
    assert row["task"].endswith(ESCAPES) and "x" + ESCAPES in row["changed"]["created"]


def test_bare_journal_files_are_named_by_their_file(runs: Path, tmp_path: Path) -> None:
    for name in ("demo-1", "demo-2"):
        shutil.copyfile(journal_of(runs / name), tmp_path / f"{name}-run.jsonl")
    done = epistemic(
        "stats", str(tmp_path / "demo-1-run.jsonl"), str(tmp_path / "demo-2-run.jsonl")
    )
    assert done.returncode == 0, done.stderr
    names = [line.split()[0] for line in done.stdout.splitlines()[1:3]]
    assert names == ["demo-1-run", "demo-2-run"]
    done = epistemic("stats", str(tmp_path / "demo-1-run.jsonl"), str(runs / "demo-2"))
    names = [line.split()[0] for line in done.stdout.splitlines()[1:3]]
    assert names == [tmp_path.name, f"{runs.name}/demo-2"]  # no collision: by their folders


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "no such file or directory"),
        ("this is not JSON\n{also not\n", "not a journal (no line is a JSON object)"),
        ("", "the journal is empty"),
        ('{"a": 1}\n', "not a journal (no line has a record `kind`)"),
    ],
)
def test_stats_of_bad_input_exits_2_with_one_clear_line(
    tmp_path: Path, content: str | None, message: str
) -> None:
    path = tmp_path / "journal.jsonl"
    if content is not None:
        path.write_text(content)
    done = epistemic("stats", str(path))
    assert done.returncode == 2
    assert done.stderr.startswith("epistemic: ") and message in done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""


def test_stats_of_a_folder_without_sessions_exits_2(tmp_path: Path) -> None:
    done = epistemic("stats", str(tmp_path))
    assert done.returncode == 2 and "no session journals in this folder" in done.stderr


# -- diff --------------------------------------------------------------------------------------


def test_diff_of_two_runs_of_the_same_script_finds_no_divergence(runs: Path) -> None:
    done = epistemic("diff", str(runs / "demo-1"), str(runs / "demo-2"))
    assert done.returncode == 0, done.stderr
    assert "first divergence: none (the two act sequences are the same)" in done.stdout
    assert "task (the same): `process_orders.py` is supposed to" in done.stdout
    data = as_json("diff", str(runs / "demo-1"), str(runs / "demo-2"))
    assert data["same_task"] is True and data["divergence"] is None
    assert {row["op"] for row in data["alignment"]} == {"equal"}
    assert len(data["alignment"]) == 18


def test_diff_aligns_a_variant_agent_and_finds_where_it_diverged(runs: Path) -> None:
    data = as_json("diff", str(runs / "demo-1"), str(runs / "variant"))
    a, b = data["a"], data["b"]
    assert a["shape"]["acts"]["revert"] == 1 and "revert" not in b["shape"]["acts"]
    assert (a["shape"]["calls"], b["shape"]["calls"]) == (18, 14)
    ops = [row["op"] for row in data["alignment"]]
    assert ops.count("equal") == 14 and ops.count("delete") == 4 and "insert" not in ops
    found = data["divergence"]
    assert found["index"] == 3 and found["op"] == "delete" and found["b"] is None
    assert found["a"]["seq"] == 4 and found["a"]["status"] == "rejected"
    assert found["a"]["rule"] == "type-unknown" and found["a"]["command"] == "python3 check.py"
    deleted = [row["a"]["label"] for row in data["alignment"] if row["op"] == "delete"]
    assert deleted == ["REJECTED", "change-state", "test-hypothesis", "revert"]
    assert [r["undoes"] for r in a["reverts"]] == [[9]] and b["reverts"] == []
    assert a["changed"] == b["changed"]
    assert a["ending"]["stop"] == b["ending"]["stop"] == "finished"
    assert b["ending"]["final"].startswith("Fixed four bugs in process_orders.py")
    text = epistemic("diff", str(runs / "demo-1"), str(runs / "variant")).stdout
    assert "  <    4 REJECTED" in text
    assert "  =    5 collect-info (failed)        |    4 collect-info (failed)" in text
    assert "first divergence at row 4 (delete):" in text
    assert "  a  call 4 REJECTED (type-unknown): python3 check.py" in text
    shape = {line.split()[0]: line.split()[1:] for line in text.split("\n\n")[1].splitlines()}
    assert shape["revert"] == ["1", "5.9%", "0", "-", "-1"]
    assert shape["calls"] == ["18", "14", "-4"]


def test_diff_of_api_sessions_with_the_same_task(tmp_path: Path) -> None:
    first = api_session(tmp_path / "a", TASK)
    second = api_session(tmp_path / "b", TASK, test_first=True)
    data = as_json("diff", str(first), str(second))
    found = data["divergence"]
    assert found["index"] == 1 and found["op"] == "insert" and found["a"] is None
    assert found["b"]["act"] == "test-hypothesis" and found["b"]["command"] == "test -e marker"
    assert found["b"]["reason"] == GUESS
    assert data["b"]["reverts"][0]["undoes"] == [3, 4]
    assert data["a"]["reverts"][0]["undoes"] == [2, 3]
    assert data["a"]["ending"] == {
        "stop": None,
        "message": None,
        "final": None,
        "failed": 0,
        "unknown": 0,
    }
    text = epistemic("diff", str(first), str(second)).stdout
    assert "  >                                   |    2 test-hypothesis (failed)" in text
    assert "  b  call 2 test-hypothesis: test -e marker" in text


def test_diff_refuses_sessions_of_different_tasks_unless_asked(tmp_path: Path) -> None:
    first = api_session(tmp_path / "a", TASK)
    second = api_session(tmp_path / "b", "delete every marker file")
    done = epistemic("diff", str(first), str(second))
    assert done.returncode == 2 and done.stdout == ""
    assert "different tasks" in done.stderr and "--any-task" in done.stderr
    assert "Traceback" not in done.stderr
    data = as_json("diff", str(first), str(second), "--any-task")
    assert data["same_task"] is False and data["task"] is None
    assert data["divergence"] is None  # the same acts, whatever the task


def test_diff_of_a_missing_session_exits_2(runs: Path, tmp_path: Path) -> None:
    done = epistemic("diff", str(runs / "demo-1"), str(tmp_path / "nowhere"))
    assert done.returncode == 2
    assert "nowhere: no such file or directory" in done.stderr and "Traceback" not in done.stderr


def test_alignment_of_long_sequences_is_not_junked() -> None:
    """difflib treats items above 1% of a long sequence as junk unless told not to."""

    def views(acts: list[str]) -> list[CallView]:
        return [CallView(i + 1, "bash", act, False, "ran", "r", "c") for i, act in enumerate(acts)]

    first = ["collect-info", "verify"] * 150
    second = ["collect-info", "verify"] * 75 + ["setup"] + ["collect-info", "verify"] * 75
    rows = align(views(first), views(second))
    assert [row["op"] for row in rows].count("equal") == 300
    assert next(row for row in rows if row["op"] != "equal")["b"]["label"] == "setup"
