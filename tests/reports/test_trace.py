"""Traceability: per-call versions of what shell acts and file tools changed, kept as
evidence; `epistemic trace` by file, by line and by commit; the matrix; the lint checks."""

from __future__ import annotations

import csv
import io
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from conftest import epistemic
from epistemic_agent.approvals.request import Answer, Request
from epistemic_agent.policy.rules import preset
from epistemic_agent.session.session import Session, Settings

CHANGE = "The report asks for this edit; making it is the change itself, nothing more."
CHECK = "Run the program to confirm the edits so far behave as the task asks of them."
UNDO = "The notes edit was the wrong approach: take it back to where it started."
#: What trace says of a call under a policy without rules (the demo's `preset:approve-none`).
NO_RULES = "preset:approve-none: no rules, allowed by default"
SECRET = "sk-" + "aB3xY7Qz9K" * 5  # an OpenAI-style key: the redactor knows the format
APP = "def main():\n    x = 1\n    y = 2\n    print(x + y)\n\n\nmain()\n"
PATCH = """--- a/app.py
+++ b/app.py
@@ -1,6 +1,6 @@
 def main():
     x = 2
-    y = 2
+    y = 5
     print(x * y)
 \n \n"""
NOTES_PATCH = """diff --git a/notes.txt b/notes.txt
--- a/notes.txt
+++ b/notes.txt
@@ -1,2 +1,2 @@
 first
-second
+SECOND
"""


class Approve:
    """Approves every request as alice, naming a ticket in the comment."""

    def __init__(self) -> None:
        self.requests: list[Request] = []

    def ask(self, request: Request) -> Answer:
        self.requests.append(request)
        return Answer("approved", "alice", "test", "ticket: OPS-7 fine")


def git(ws: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args],
        cwd=ws,
        check=True,
        capture_output=True,
    )


@pytest.fixture
def mixed(tmp_path: Path) -> Path:
    """A session mixing file-tool edits, sed -i, a redirect, patch, git apply, a revert,
    and verifies (one failing, one passing)."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "app.py").write_text(APP)
    (ws / "notes.txt").write_text("first\nsecond\n")
    git(ws, "init", "-q")
    git(ws, "add", "-A")
    git(ws, "commit", "-qm", "start")
    patches = tmp_path / "patches"
    patches.mkdir()
    (patches / "y.patch").write_text(PATCH)
    (patches / "notes.patch").write_text(NOTES_PATCH)
    with Session(ws, Settings(enforce=False)) as s:
        assert s.str_replace_edit("app.py", "x = 1", "x = 2", CHANGE).ok  # 1
        assert s.bash("sed -i 's/print(x + y)/print(x * y)/' app.py", "change-state", CHANGE).ok
        assert s.bash("python3 app.py", "verify", CHECK).ok  # 3: verifies 1 and 2
        assert s.bash(f"patch -p1 < {patches}/y.patch", "change-state", CHANGE).ok  # 4
        assert s.bash("echo 'out' > out.txt", "change-state", CHANGE).ok  # 5
        assert s.bash(f"git apply {patches}/notes.patch", "change-state", CHANGE).ok  # 6
        assert s.bash("git checkout -- notes.txt", "revert", UNDO).ok  # 7
        assert not s.bash("python3 -c 'raise SystemExit(1)'", "verify", CHECK).ok  # 8
        assert s.bash("printf 'more\\n' >> out.txt", "change-state", CHANGE).ok  # 9
    return ws


def trace_json(ws: Path, *args: str) -> Any:
    done = epistemic("trace", "-C", str(ws), "--json", *args)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def journal(ws: Path) -> list[dict[str, Any]]:
    text = (ws / ".epistemic" / "journal.jsonl").read_text()
    return [json.loads(line) for line in text.splitlines()]


def outcome(ws: Path, seq: int) -> dict[str, Any]:
    return next(r for r in journal(ws) if r["kind"] == "outcome" and r["seq"] == seq)


def blob(ws: Path, ref: dict[str, Any]) -> bytes:
    sha = ref["sha256"]
    return (ws / ".epistemic" / "evidence" / sha[:2] / sha).read_bytes()


# -- versions ---------------------------------------------------------------------------------


def test_shell_edits_keep_before_after_and_a_diff(mixed: Path) -> None:
    sed = outcome(mixed, 2)
    [entry] = sed["versions"]
    assert entry["path"] == "app.py"
    assert blob(mixed, entry["before"]).decode() == APP.replace("x = 1", "x = 2")
    assert b"print(x * y)" in blob(mixed, entry["after"])
    diff = blob(mixed, sed["evidence"]["diff"]).decode()
    assert diff.startswith("--- a/app.py\n+++ b/app.py\n")
    assert "-    print(x + y)\n+    print(x * y)\n" in diff
    created = outcome(mixed, 5)["versions"]
    assert created == [{"path": "out.txt", "before": None, "after": created[0]["after"]}]
    applied = blob(mixed, outcome(mixed, 6)["evidence"]["diff"]).decode()
    assert "-second\n+SECOND\n" in applied
    reverted = outcome(mixed, 7)["versions"][0]
    assert reverted["after"] == outcome(mixed, 6)["versions"][0]["before"]  # the same blob
    done = epistemic("verify", str(mixed))
    assert done.returncode == 0, done.stdout + done.stderr  # every blob referenced, intact


def test_file_tool_versions_agree_with_its_diff(mixed: Path) -> None:
    edit = outcome(mixed, 1)
    [entry] = edit["versions"]
    assert blob(mixed, entry["before"]).decode() == APP
    assert blob(mixed, entry["after"]).decode() == APP.replace("x = 1", "x = 2")
    assert "-    x = 1\n+    x = 2\n" in blob(mixed, edit["evidence"]["diff"]).decode()


def test_secrets_in_changed_files_are_redacted_in_every_blob(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "conf.txt").write_text(f"key = {SECRET}\nport = 1\n")
    with Session(ws, Settings(enforce=False)) as s:
        assert s.bash("sed -i 's/port = 1/port = 2/' conf.txt", "change-state", CHANGE).ok
        assert s.bash(f"echo 'token {SECRET}' > new.txt", "change-state", CHANGE).ok
    record = ws / ".epistemic"  # the evidence, and the baseline's copies and index too
    stored = b"".join(p.read_bytes() for p in record.rglob("*") if p.is_file())
    assert SECRET.encode() not in stored
    assert b"port = 2" in stored and b"[REDACTED" in stored
    assert outcome(ws, 1)["redacted"] >= 1


def test_symlinks_binaries_and_large_files_are_named_not_read(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("TOPSECRET-OUTSIDE\n")
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "blob.bin").write_bytes(b"\0\1\2")
    (ws / "big.txt").write_text("x" * (2 << 20))
    (ws / "d").mkdir()
    with Session(ws, Settings(enforce=False)) as s:
        command = (
            f"ln -s {outside} link.txt && printf 'z' >> blob.bin && echo y >> big.txt"
            f" && mv d e && ln -s {tmp_path} e/inner"
        )
        assert s.bash(command, "change-state", CHANGE).ok
    skipped = {e["path"]: e.get("skipped") for e in outcome(ws, 1)["versions"]}
    assert skipped["link.txt"] == "it is a symbolic link, or lies behind one"
    assert skipped["blob.bin"] == "no copy from before: it is binary"
    assert skipped["big.txt"].startswith("no copy from before: it is larger than")
    evidence = ws / ".epistemic" / "evidence"
    stored = b"".join(p.read_bytes() for p in evidence.rglob("*") if p.is_file())
    assert b"TOPSECRET-OUTSIDE" not in stored
    baseline = ws / ".epistemic" / "baseline"
    copies = b"".join(p.read_bytes() for p in baseline.rglob("*") if p.is_file())
    assert b"TOPSECRET-OUTSIDE" not in copies


def test_a_human_edit_between_processes_is_not_the_agents(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "f.txt").write_text("a\nb\nc\n")
    with Session(ws, Settings(enforce=False)) as s:
        assert s.bash("sed -i 's/a/A/' f.txt", "change-state", CHANGE).ok
    (ws / "f.txt").write_text("A\nb\nhuman\n")  # between two processes
    with Session(ws, Settings(enforce=False)) as s:
        assert s.bash("sed -i 's/b/B/' f.txt", "change-state", CHANGE).ok
    diff = blob(ws, outcome(ws, 2)["evidence"]["diff"]).decode()
    assert "-b\n+B\n" in diff and "human" in diff and "-c\n" not in diff
    data = epistemic("trace", "-C", str(ws), "f.txt:3", "--json")
    line = json.loads(data.stdout)
    assert line["text"] == "human" and line["seq"] is None and line["origin"] == "unknown"
    assert any("something no call recorded" in note for note in line["notes"])


# -- trace ------------------------------------------------------------------------------------


def test_trace_lists_each_files_calls_verifies_and_unverified(mixed: Path) -> None:
    data = trace_json(mixed)["sessions"][0]
    files = {f["path"]: f for f in data["files"]}
    assert sorted(files) == ["app.py", "notes.txt", "out.txt"]
    app = files["app.py"]
    assert [(c["seq"], c["tool"], c["act"]) for c in app["changes"]] == [
        (1, "str_replace_edit", "change-state"),
        (2, "bash", "change-state"),
        (4, "bash", "change-state"),
    ]
    assert [c["verified_by"] for c in app["changes"]] == [[3], [3], []]
    assert app["unverified"] == [4]
    assert [(v["seq"], v["ok"]) for v in app["verified_after_last_change"]] == [(8, False)]
    assert "+    y = 5" in app["changes"][2]["hunk"]
    notes = files["notes.txt"]["changes"]
    assert notes[1]["act"] == "revert"
    assert notes[1]["undid"] == {"path": "notes.txt", "undoes": [6], "restored": True}
    out = files["out.txt"]
    assert [c["kind"] for c in out["changes"]] == ["created", "modified"]


def test_trace_text_marks_unverified_and_shows_hunks(mixed: Path) -> None:
    done = epistemic("trace", "-C", str(mixed), "app.py")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "call 4 change-state (modified)  **unverified**" in out
    assert "call 1 change-state (modified):" in out
    assert "    | +    y = 5" in out
    assert "verified after the last change: call 8 FAILED" in out


@pytest.mark.parametrize(
    ("line", "seq", "text"),
    [
        (1, None, "def main():"),
        (2, 1, "    x = 2"),
        (3, 4, "    y = 5"),
        (4, 2, "    print(x * y)"),
    ],
)
def test_line_blame_names_the_declared_act(
    mixed: Path, line: int, seq: int | None, text: str
) -> None:
    data = trace_json(mixed, f"app.py:{line}")
    assert (data["seq"], data["text"]) == (seq, text)
    if seq is not None:
        assert data["call"]["seq"] == seq and data["call"]["act"] == "change-state"


def test_blame_through_a_revert_and_appends(mixed: Path) -> None:
    assert trace_json(mixed, "notes.txt:1")["origin"] == "before-session"
    restored = trace_json(mixed, "notes.txt:2")  # the revert wrote it last: it says what it undid
    assert (restored["seq"], restored["text"]) == (7, "second")
    assert restored["call"]["undid"] == {"path": "notes.txt", "undoes": [6], "restored": True}
    assert trace_json(mixed, "out.txt:1")["seq"] == 5
    assert trace_json(mixed, "out.txt:2")["seq"] == 9


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["missing.txt"], "missing.txt: no call of session"),
        (["app.py:99"], "line 99 is beyond the file as the record ends with it (7 line(s))"),
        (["app.py:0"], "line 0 is beyond"),
        (["--session", "ffff0000"], "no session 'ffff0000'"),
        (["--session", ""], "--session: the id is empty"),
        (["--matrix"], "--matrix needs -o FILE"),
        (["--matrix", "-o", "m.txt"], "written as .md, .csv or .html"),
        (["-o", "m.md"], "-o is for --matrix"),
        (["/etc/passwd"], "is not inside the workspace"),
        (["--commit", "HEAD"], "has no Epistemic-* trailers"),
        (["--commit", "nosuchrev"], "no such commit"),
        (["--commit=-x"], "not a revision"),
    ],
)
def test_bad_input_is_a_clear_error(mixed: Path, args: list[str], message: str) -> None:
    done = epistemic("trace", "-C", str(mixed), *args, cwd=mixed)
    assert done.returncode == 2, done.stdout
    assert message in done.stderr and "Traceback" not in done.stderr


def test_no_journal_is_a_clear_error(tmp_path: Path) -> None:
    done = epistemic("trace", "-C", str(tmp_path))
    assert done.returncode == 2 and "no journal here" in done.stderr


def test_missing_evidence_is_said_not_hidden(mixed: Path) -> None:
    entry = outcome(mixed, 4)["versions"][0]
    sha = entry["after"]["sha256"]
    (mixed / ".epistemic" / "evidence" / sha[:2] / sha).unlink()
    data = trace_json(mixed)["sessions"][0]
    assert any("is missing or altered" in note for note in data["notes"])
    app = next(f for f in data["files"] if f["path"] == "app.py")
    assert "missing or altered" in app["changes"][2]["missing"]
    done = epistemic("trace", "-C", str(mixed), "app.py:1")
    assert done.returncode == 2
    assert "app.py: cannot show line 1: call 4: evidence" in done.stderr
    text = epistemic("trace", "-C", str(mixed)).stdout
    assert "cannot show: call 4, app.py: evidence" in text


def test_a_session_without_baseline_says_what_it_cannot_show(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "f.txt").write_text("a\n")
    with Session(ws, Settings(enforce=False, baseline=False)) as s:
        assert s.bash("echo b >> f.txt", "change-state", CHANGE).ok
        assert s.write_file("g.txt", "g\n", CHANGE).ok
    change = trace_json(ws)["sessions"][0]["files"][0]["changes"][0]
    assert change["missing"].startswith("no versions were kept")
    text = epistemic("trace", "-C", str(ws)).stdout
    assert "cannot show the diff: no versions were kept" in text  # the shell edit: no diff
    assert "cannot blame lines through it: no versions" in text and "| +g" in text  # its own
    assert trace_json(ws, "f.txt")["sessions"][0]["files"][0]["path"] == "f.txt"
    done = epistemic("trace", "-C", str(ws), "f.txt:1")
    assert done.returncode == 2
    assert "f.txt: cannot show line 1: call 1: no versions were kept" in done.stderr


def test_session_selection(mixed: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    with Session(other, Settings(enforce=False)) as s:
        assert s.bash("echo hi > hi.txt", "change-state", CHANGE).ok
        wanted = s.session_id
    every = trace_json(tmp_path, "--all")["sessions"]
    assert len(every) == 2
    chosen = trace_json(tmp_path, "--session", wanted[:8])["sessions"]
    assert [s["session"] for s in chosen] == [wanted]
    assert chosen[0]["files"][0]["path"] == "hi.txt"
    done = epistemic("trace", "-C", str(tmp_path), "--all", "hi.txt:1")
    assert done.returncode == 2 and "needs one session" in done.stderr


# -- approvals, tickets and lint ---------------------------------------------------------------


def test_approval_signer_ticket_and_lint_checks(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("a\n")
    approver = Approve()
    policy = preset("approve-mutating")
    with Session(ws, Settings(enforce=False), policy=policy, approver=approver) as s:
        assert s.bash("true", "verify", CHECK).ok  # 1: nothing to confirm yet
        sneaky = "echo b >> a.txt; python3 -c \"open('sneaky.txt', 'w').write('c')\""
        assert s.bash(sneaky, "change-state", CHANGE).ok  # 2
        assert approver.requests[0].paths == ("a.txt",)  # what the approver was shown
        assert s.bash("true", "revert", UNDO).ok  # 3: a revert that changed nothing
    change = trace_json(ws, "sneaky.txt")["sessions"][0]["files"][0]["changes"][0]
    assert change["approval"]["decision"] == "approved" and change["approval"]["by"] == "alice"
    assert change["ticket"] == "OPS-7" and change["policy"]["decision"] == "ask"
    assert change["policy_in_force"] == "preset:approve-mutating"  # as the header names it
    shown = epistemic("trace", "-C", str(ws), "sneaky.txt").stdout
    assert "policy: preset:approve-mutating: ask (rule " in shown, shown
    assert "none in force" not in shown
    assert not any(
        f["check"].startswith("trace/")
        for f in json.loads(epistemic("lint", str(ws), "--json").stdout)["findings"]
    )  # the traceability checks are asked for
    done = epistemic("lint", str(ws), "--json", "--trace")
    found = {(f["check"], f["seq"]) for f in json.loads(done.stdout)["findings"]}
    assert ("trace/verify-before-change", 1) in found
    assert ("trace/unverified", 2) in found
    assert ("trace/approval-exceeded", 2) in found  # the request showed a.txt, not sneaky.txt
    assert ("trace/revert-of-nothing", 3) in found
    stats = json.loads(epistemic("stats", str(ws), "--json").stdout)
    assert stats["sessions"][0]["unverified"] == 1 and stats["totals"]["unverified"] == 1


@pytest.mark.system  # end to end, slow for the default tier
def test_ticket_option_reaches_header_calls_and_policy(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    policy = ws / "p.toml"
    policy.write_text(
        'default = "allow"\n[[rule]]\nid = "no-ticket"\ndecision = "deny"\n'
        "when = \"act == 'change-state' && ticket == ''\"\nmessage = \"name a ticket\"\n"
    )
    base = ["exec", "-C", str(ws), "--policy", str(policy), "--type", "change-state"]
    done = epistemic(*base, "--reason", CHANGE, "--", "echo a > a.txt")
    assert done.returncode == 2 and "name a ticket" in done.stdout + done.stderr
    done = epistemic(*base, "--ticket", "CR-42", "--reason", CHANGE, "--", "echo a > a.txt")
    assert done.returncode == 0, done.stderr
    calls = [r for r in journal(ws) if r["kind"] == "call"]
    assert calls[-1]["ticket"] == "CR-42"
    matrix = ws.parent / "m.csv"
    assert epistemic("trace", "-C", str(ws), "--matrix", "-o", str(matrix)).returncode == 0
    rows = list(csv.DictReader(io.StringIO(matrix.read_text())))
    assert [r["ticket"] for r in rows] == ["CR-42"]
    for bad in ("", "two\nlines", "x" * 201):
        done = epistemic(*base, "--ticket", bad, "--reason", CHANGE, "--", "true")
        assert done.returncode == 2 and "--ticket must be" in done.stderr


# -- matrix escaping ---------------------------------------------------------------------------


HOSTILE = '=HYPERLINK("http://x") <script>alert(1)</script> | ** [a](b) the change'


def test_matrix_escapes_agent_text(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    with Session(ws, Settings(enforce=False)) as s:
        assert s.write_file("-cmd.txt", "@SUM(1)\n", HOSTILE).ok
    out = {suffix: tmp_path / f"m{suffix}" for suffix in (".md", ".csv", ".html")}
    for path in out.values():
        done = epistemic("trace", "-C", str(ws), "--matrix", "-o", str(path))
        assert done.returncode == 0, done.stderr
    [row] = list(csv.reader(io.StringIO(out[".csv"].read_text())))[1:]
    assert row[4] == "'" + HOSTILE and row[5] == "'-cmd.txt"
    assert not any(cell[:1] and cell[0] in "=+-@" for cell in row)
    page = out[".html"].read_text()
    assert "<script>alert" not in page and "&lt;script&gt;" in page
    assert 'href="#call-1"' in page
    md = out[".md"].read_text().splitlines()[4]
    assert md.count(" | ") == 11  # the reason's pipe is escaped, not a new cell
    assert "<script>" not in md and "\\<script\\>" in md


@pytest.mark.system  # end to end, slow for the default tier
def test_export_puts_the_matrix_in_the_bundle(mixed: Path, tmp_path: Path) -> None:
    import zipfile

    target = tmp_path / "b.zip"
    done = epistemic("export", str(mixed), "-o", str(target))
    assert done.returncode == 0, done.stderr
    with zipfile.ZipFile(target) as bundle:
        names = set(bundle.namelist())
        assert {"traceability.md", "traceability.csv", "traceability.html"} <= names
        page = bundle.read("traceability.html").decode()
    assert 'href="report.html#call-4"' in page
    assert epistemic("verify", str(target)).returncode == 0


# -- the demo ----------------------------------------------------------------------------------


@pytest.mark.system  # end to end, slow for the default tier
def test_the_demo_matrix_row_by_row(tmp_path: Path) -> None:
    """Every row of the demo's matrix, derived from its script: which calls change files,
    their reasons, the revert and what it undid, the verify that passed; and the CSV's hunks,
    applied in order with `patch` to the task's original file, give the file the demo left."""
    from epistemic_agent.demo import SCRIPT, TASK

    ws = tmp_path / "demo"
    done = epistemic("demo", "-o", str(ws))
    assert done.returncode == 0, done.stderr
    calls = [call for turn in json.loads(SCRIPT.read_text()) for call in turn.get("calls", [])]
    seq_of = {index + 1: call for index, call in enumerate(calls)}  # rejections take a seq too
    acts = {
        seq: "change-state"
        if call["tool"] in ("write_file", "str_replace_edit")
        else call["args"].get("type")
        for seq, call in seq_of.items()
    }
    rows = [seq for seq, act in acts.items() if act in ("change-state", "revert")]
    [verify] = [seq for seq, act in acts.items() if act == "verify"]
    first_edit = min(s for s in rows if seq_of[s]["tool"] == "str_replace_edit")
    session = journal(ws)[0]["session"][:12]
    matrix = tmp_path / "m.csv"
    assert epistemic("trace", "-C", str(ws), "--matrix", "-o", str(matrix)).returncode == 0
    table = list(csv.DictReader(io.StringIO(matrix.read_text())))
    assert [int(row["call"]) for row in table] == rows
    for row in table:
        seq = int(row["call"])
        call = seq_of[seq]["args"]
        file = call.get("path") or "summary.json"  # the one shell change-state writes it
        if acts[seq] == "revert":
            file = "process_orders.py"  # `git checkout -- process_orders.py`
        undid = f" (undid {first_edit} in process_orders.py)" if acts[seq] == "revert" else ""
        assert row["act"] == acts[seq] + undid
        assert (row["session"], row["reason"], row["files"]) == (session, call["reason"], file)
        assert (row["policy"], row["approver"], row["ticket"]) == (NO_RULES, "", "")
        assert (row["verified by"], row["verify outcome"], row["status"]) == (
            str(verify),
            "passed",
            "verified",
        )
    work = tmp_path / "replay"
    work.mkdir()
    (work / "process_orders.py").write_bytes((TASK / "process_orders.py").read_bytes())
    for row in table:
        if row["files"] == "process_orders.py":
            hunk = row["hunks"][1:] if row["hunks"].startswith("'") else row["hunks"]
            subprocess.run(["patch", "-s", "-p1"], input=hunk, text=True, cwd=work, check=True)
    assert (work / "process_orders.py").read_text() == (ws / "process_orders.py").read_text()
    md = tmp_path / "m.md"
    assert epistemic("trace", "-C", str(ws), "--matrix", "-o", str(md)).returncode == 0
    lines = md.read_text().splitlines()
    assert lines[:4] == [
        "# Traceability matrix",
        "",
        "| session | call | act | ticket | reason | files | hunks | policy | approver"
        " | verified by | verify outcome | status |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    assert len(lines) == 4 + len(table)
    for line, row in zip(lines[4:], table, strict=True):
        count = len(row["hunks"].splitlines())
        reason = row["reason"].replace("*", "\\*")
        assert line == (
            f"| {session} | {row['call']} | {row['act']} |  | {reason} | `{row['files']}` "
            f"| {count} diff line(s) | {NO_RULES} |  | {verify} | passed | verified |"
        )


# -- hostile journals, the other entry points, and blame's invariants ---------------------------

BAD = (["x"], {"a": 1}, True, None, 10**30, "x\x1b[2J", [{"path": 5}], [{"path": "app.py"}])


@pytest.mark.system  # end to end, slow for the default tier
def test_trace_never_crashes_on_fields_of_the_wrong_type(mixed: Path, tmp_path: Path) -> None:
    """Each field trace reads, set to each bad value: a clear answer, never a traceback, and
    no escape sequence reaches the terminal."""
    from epistemic_agent.cli import app as cli

    path = mixed / ".epistemic" / "journal.jsonl"
    original = path.read_text()
    targets = [
        (2, ("versions",)),
        (2, ("evidence", "diff")),
        (2, ("observed", "modified")),
        (1, ("ticket",)),
        (1, ("policy",)),
        (2, ("versions_cut",)),
    ]
    for index, keys in targets:
        for value in BAD:
            found = [json.loads(line) for line in original.splitlines()]
            outcomes = [r for r in found if r["kind"] == ("outcome" if index == 2 else "call")]
            target = outcomes[1]
            for key in keys[:-1]:
                target = target.setdefault(key, {})
            target[keys[-1]] = value
            path.write_text("".join(json.dumps(r) + "\n" for r in found))
            for args in (
                [],
                ["app.py:2"],
                ["--json"],
                ["--matrix", "-o", str(tmp_path / "m.html")],
            ):
                what = f"{keys} = {value!r}: {args}"
                assert _main(cli, ["trace", "-C", str(mixed), *args]) in (0, 2), what


def _main(cli: Any, args: list[str]) -> int:
    import contextlib

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(args)
    assert "\x1b" not in out.getvalue() + err.getvalue()
    assert "Traceback" not in err.getvalue()
    return int(code)


@pytest.mark.system  # end to end, slow for the default tier
def test_run_and_mcp_record_the_ticket(tmp_path: Path) -> None:
    from epistemic_agent.demo import SCRIPT, prepare_workspace
    from epistemic_agent.mcp.server import Gatekeeper

    ws = prepare_workspace(tmp_path / "run")
    done = epistemic(
        "run", "--model", f"replay:{SCRIPT}", "-C", str(ws), "--ticket", "REQ-9", "fix it"
    )
    assert done.returncode == 0, done.stderr
    records = journal(ws)
    assert records[0]["ticket"] == "REQ-9"
    assert {r.get("ticket") for r in records if r["kind"] == "call"} == {"REQ-9"}
    bad = epistemic("run", "--model", f"replay:{SCRIPT}", "-C", str(ws), "--ticket", " ", "x")
    assert bad.returncode == 2 and "--ticket must be" in bad.stderr
    served = tmp_path / "mcp"
    served.mkdir()
    keeper = Gatekeeper(served, preset("approve-none"), None)
    keeper.ticket = "MCP-1"
    text, failed = keeper.call(
        "write_file", {"path": "a.txt", "content": "a\n", "reason": CHANGE}, {}
    )
    keeper.close()
    assert not failed, text
    assert journal(served)[0]["ticket"] == "MCP-1"
    assert [r["ticket"] for r in journal(served) if r["kind"] == "call"] == ["MCP-1"]


@pytest.mark.system  # end to end, slow for the default tier
def test_the_hook_command_on_a_bad_message_file_is_a_clear_error(mixed: Path) -> None:
    done = epistemic("git-hook", "trailers", "-C", str(mixed), str(mixed / "no" / "such"))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    done = epistemic("git-hook", "trailers", "-C", "/")
    assert done.returncode == 2 and "Traceback" not in done.stderr


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from epistemic_agent.reports.trace.model import BEFORE, _advance  # noqa: E402

LINES = st.lists(st.sampled_from(["a\n", "b\n", "c\n", "d\n", "e\n"]), max_size=12)


@settings(max_examples=200, deadline=None)
@given(st.lists(LINES, min_size=1, max_size=6))
def test_blame_keeps_the_text_and_names_a_writer_that_wrote_it(versions: list[list[str]]) -> None:
    """Replaying versions: the blamed text is the last version, a line blamed on call k is
    in version k, and versions that never change blame nothing on any call."""
    state = [(line, BEFORE) for line in versions[0]]
    for seq, new in enumerate(versions[1:], start=1):
        state = _advance(state, new, seq)
    assert [line for line, _ in state] == versions[-1]
    for line, seq in state:
        if seq != BEFORE:
            assert line in versions[seq]
    if all(v == versions[0] for v in versions):
        assert all(seq == BEFORE for _, seq in state)


def test_a_damaged_baseline_copy_is_said_not_passed_off(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "f.txt").write_text("a\nb\n")
    with Session(ws, Settings(enforce=False)) as s:
        pack = ws / ".epistemic" / "baseline" / "pack"
        pack.write_bytes(pack.read_bytes().replace(b"a", b"X"))  # under the session's feet
        assert s.bash("sed -i 's/b/B/' f.txt", "change-state", CHANGE).ok
    [entry] = outcome(ws, 1)["versions"]
    assert entry == {
        "path": "f.txt",
        "skipped": "no copy from before: the baseline's copy could not be read back",
    }
    with Session(ws, Settings(enforce=False)) as s:  # a new process copies it again
        assert s.bash("sed -i 's/a/A/' f.txt", "change-state", CHANGE).ok
    assert "before" in outcome(ws, 2)["versions"][0]


@pytest.mark.system  # a hidden file: confinement
def test_a_hidden_file_moved_by_an_act_is_never_read_into_the_record(tmp_path: Path) -> None:
    """Where the folder holding a hidden file can be renamed (Landlock without a mount
    namespace: nothing is pinned), the session, which can see the file, finds it at a new
    path. It must not copy or diff it. Where namespaces pin the folder, the move fails."""
    from epistemic_agent.execute.sandbox.platform import Platform, detect

    found = detect()
    if found.landlock_abi is None or found.namespaces is None:
        pytest.skip("needs Landlock and namespaces here")
    move = "python3 -c \"import os; os.rename('co' + 'nf', 'conf2')\""
    landlock = Platform(found.landlock_abi, None, None, "off", None, "not used")
    for name, platform in (("pinned", None), ("moved", landlock)):
        ws = tmp_path / name
        (ws / "conf").mkdir(parents=True)
        (ws / "conf" / "secret.env").write_text("PASSWORD_X=hunter2-not-a-known-format\n")
        (ws / "conf" / "other.txt").write_text("ok\n")
        hidden = (str(ws / "conf" / "secret.env"),)
        with Session(ws, Settings(hidden=hidden, platform=platform)) as s:
            moved = s.bash(move, "change-state", CHANGE)
        assert moved.ok == (name == "moved"), moved
        record = b"".join(p.read_bytes() for p in (ws / ".epistemic").rglob("*") if p.is_file())
        assert b"hunter2" not in record
    skipped = {e["path"]: e.get("skipped") for e in outcome(ws, 1)["versions"]}
    assert skipped["conf2/secret.env"] == "it is hidden from acts"
