"""`epistemic lint`, `epistemic export` and `epistemic verify BUNDLE.zip` (docs/audit-bundle.md).

Sessions come from the demo (`epistemic demo -o DIR`) and from the Python API; problems are
seeded by editing copies of their journals and bundles by hand.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import shutil
import subprocess
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from conftest import epistemic
from epistemic_agent.checks.lint import CHECKS
from epistemic_agent.cli import app as cli
from epistemic_agent.session.session import Session, Settings

LOOK = "learn what this prints in the current workspace"
CHANGE = "make the change that is part of the deliverable"
HTML = importlib.util.find_spec("epistemic_agent.reports.html.page") is not None

Records = list[dict[str, Any]]


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """The real command line, in process: exit status, stdout, stderr."""
    code = cli.main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def journal_of(workspace: Path) -> Path:
    return workspace / ".epistemic" / "journal.jsonl"


def line_count(workspace: Path) -> int:
    """How many complete lines the workspace's journal holds."""
    return journal_of(workspace).read_bytes().count(b"\n")


def records(workspace: Path) -> Records:
    return [json.loads(line) for line in journal_of(workspace).read_text().splitlines()]


def edit(workspace: Path, change: Callable[[Records], Records], rechain: bool = False) -> None:
    """Rewrite a journal's records by hand (which breaks the chain, as editing does); with
    `rechain`, as another writer would: a valid chain, and no head anchor."""
    lines, prev = [], "0" * 64
    for n, found in enumerate(change(records(workspace)), start=1):
        if rechain:
            found = {"prev": prev, "n": n, **{k: v for k, v in found.items() if k != "prev"}}
        lines.append(json.dumps(found, ensure_ascii=False, separators=(",", ":")))
        prev = hashlib.sha256(lines[-1].encode()).hexdigest()
    journal_of(workspace).write_text("".join(line + "\n" for line in lines))
    if rechain:
        (workspace / ".epistemic" / "head.json").unlink()


def record(found: Records, kind: str, seq: int) -> dict[str, Any]:
    return next(r for r in found if r.get("kind") == kind and r.get("seq") == seq)


def members(bundle: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(bundle) as archive:
        return {name: archive.read(name) for name in archive.namelist()}


def rezip(target: Path, files: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(target, "w") as archive:
        for name, data in files.items():
            archive.writestr(zipfile.ZipInfo(name), data)
    return target


def manifest_of(files: dict[str, bytes]) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(files["manifest.json"])
    return loaded


def relist(files: dict[str, bytes], name: str) -> None:
    """Forge the manifest entry of `name` to match its (edited) bytes."""
    manifest = manifest_of(files)
    for entry in manifest["files"]:
        if entry["path"] == name:
            entry["size"] = len(files[name])
            entry["sha256"] = hashlib.sha256(files[name]).hexdigest()
    files["manifest.json"] = json.dumps(manifest).encode()


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    workspace = tmp_path_factory.mktemp("demo") / "ws"
    done = epistemic("demo", "-o", str(workspace))
    assert done.returncode == 0, done.stderr
    return workspace


@pytest.fixture(scope="module")
def bundle(demo: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    target = tmp_path_factory.mktemp("bundle") / "demo.zip"
    done = epistemic("export", str(demo), "-o", str(target))
    assert done.returncode == 0, done.stderr
    return target


@pytest.fixture
def copy(demo: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(demo, tmp_path / "copy", symlinks=True))


# -- lint ----------------------------------------------------------------------------------------


@pytest.mark.system  # end to end, slow for the default tier
def test_lint_finds_nothing_on_the_demo(demo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "lint", str(demo))
    assert code == 0, out
    assert out.startswith("clean: no findings in 17 call(s)")
    code, out, _ = run(capsys, "lint", str(journal_of(demo)), "--json")
    data = json.loads(out)
    assert code == 0
    assert data["status"] == "clean" and data["findings"] == [] and data["calls"] == 17
    assert data["integrity"] == "intact" and data["notes"] == []


def seed(found: Records) -> Records:
    """Problems an older or foreign writer could leave, each on a known call."""
    listing = record(found, "call", 1)
    listing["command"] = "ls -la > listing.txt"  # an observation that statically writes
    del listing["effect"]
    record(found, "outcome", 1)["observed"]["created"] = ["x.txt"]  # a write, no flag
    record(found, "outcome", 5)["flags"] = [{"flag": "no-change", "message": "made up"}]
    record(found, "call", 7)["reason"] = "too short"
    revert = record(found, "call", 11)
    revert["command"] = "git checkout -- orders.json"  # no change-state touched it
    del revert["effect"]
    cleanup = record(found, "call", 18)
    cleanup["command"] = "rm -f orders.json"  # there before the session
    del cleanup["effect"]
    record(found, "outcome", 18)["observed"]["deleted"] = ["orders.json"]
    record(found, "rejected", 4)["seq"] = 3
    orphan = {**record(found, "outcome", 17), "seq": 99}
    return [r for r in found if r is not record(found, "outcome", 17)] + [orphan]


def test_lint_finds_seeded_problems(copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    edit(copy, seed)
    code, out, _ = run(capsys, "lint", str(copy), "--json")
    data = json.loads(out)
    assert code == 1
    found = {(f["check"], f["seq"]) for f in data["findings"]}
    assert found == {
        ("gate/observation-writes", 1),
        ("flag/undeclared-write", 1),
        ("flag-not-recorded", 1),
        ("seq-duplicate", 3),
        ("seq-gap", 5),
        ("flag/no-change", 5),
        ("flag-not-reproduced", 5),
        ("gate/reason-too-short", 7),
        ("gate/revert-unrelated", 11),
        ("gate/cleanup-preexisting", 18),
        ("flag/cleanup-preexisting", 18),
        ("flag-not-recorded", 18),
        ("outcome-orphan", 99),
        ("outcome-missing", 17),
        ("integrity/chain-broken", None),  # edited by hand: the chain says so
    }
    assert all(f["check"] in CHECKS or f["check"].startswith("gate/") for f in data["findings"])
    assert all(isinstance(f["line"], int) for f in data["findings"])
    assert any("hash chain does not verify" in note for note in data["notes"])
    code, out, _ = run(capsys, "lint", str(copy))
    assert code == 1
    assert "call 1 (line 6) flag/undeclared-write: declared collect-info, but changed x.txt" in out


def test_lint_accepts_a_journal_still_being_written(
    copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    edit(copy, lambda found: found[: found.index(record(found, "call", 18)) + 1])
    torn = line_count(copy) + 1
    with journal_of(copy).open("ab") as handle:
        handle.write(b'{"prev":"00')  # a torn tail
    code, out, _ = run(capsys, "lint", str(copy))
    assert code == 1
    assert "outcome-missing: call 18 (rm -rf" in out and "still running" in out
    assert f"note: line {torn} is torn" in out


def test_lint_notes_lines_of_another_version(
    copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    later = {"kind": "call", "v": 2, "seq": 19, "tool": "bash", "act": "x", "reason": ""}
    edit(copy, lambda found: [*found, later], rechain=True)
    newer = line_count(copy)
    code, out, _ = run(capsys, "lint", str(copy), "--json")
    data = json.loads(out)
    assert code == 1
    assert [(f["check"], f["seq"]) for f in data["findings"]] == [("outcome-missing", 19)]
    assert [note for note in data["notes"] if "format version" in note] == [
        "1 line of format version 2 (newer than this reader's 1) was not re-checked "
        f"(line {newer}): this result is incomplete"
    ]
    assert data["status"] == "findings" and data["unchecked"] == {"lines": 1, "versions": [2]}


def test_lint_of_newer_lines_is_incomplete_not_clean(
    copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    edit(copy, lambda found: [{**r, "v": 2} for r in found], rechain=True)
    count = line_count(copy)
    code, out, _ = run(capsys, "lint", str(copy))
    assert code == 1
    lines = out.splitlines()
    assert lines[0] == (
        f"incomplete: no findings in 17 call(s) of {journal_of(copy)} "
        f"({count} line(s) of a newer format version not re-checked)"
    )
    notes = [line for line in lines if "format version" in line and line.startswith("note:")]
    assert notes == [
        f"note: {count} lines of format version 2 (newer than this reader's 1) were not re-checked "
        "(the first is line 1): this result is incomplete"
    ]
    code, out, _ = run(capsys, "lint", str(copy), "--json")
    data = json.loads(out)
    assert code == 1 and data["status"] == "incomplete" and data["findings"] == []
    assert data["unchecked"] == {"lines": count, "versions": [2]}


def test_lint_checks_older_and_unversioned_lines_as_version_1(
    copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def change(found: Records) -> Records:
        record(found, "call", 7)["reason"] = "too short"
        record(found, "call", 7)["v"] = 0
        listing = record(found, "call", 1)
        listing["command"] = "ls -la > listing.txt"  # an observation that statically writes
        del listing["effect"], listing["v"]
        return found

    edit(copy, change)
    code, out, _ = run(capsys, "lint", str(copy), "--json")
    data = json.loads(out)
    assert code == 1 and data["status"] == "findings"
    found = {(f["check"], f["seq"]) for f in data["findings"]}
    assert {("gate/reason-too-short", 7), ("gate/observation-writes", 1)} <= found
    assert [note for note in data["notes"] if "version" in note] == [
        "1 line(s) have format version 0, older than this reader's 1; read as version 1 "
        "(the only version there is)",
        "1 line(s) carry no format version `v`; read as version 1 (the only version there is)",
    ]
    assert data["unchecked"] == {"lines": 0, "versions": []}


def test_lint_of_fields_of_the_wrong_type(copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def change(found: Records) -> Records:
        record(found, "outcome", 1)["observed"]["created"] = True
        record(found, "call", 5)["effect"]["writes"] = 7
        record(found, "outcome", 9)["seq"] = {"a": 1}
        return found

    edit(copy, change)
    code, out, err = run(capsys, "lint", str(copy), "--json")
    assert code == 1, err
    data = json.loads(out)
    assert ("record-malformed", None) in {(f["check"], f["seq"]) for f in data["findings"]}
    assert ("outcome-missing", 9) in {(f["check"], f["seq"]) for f in data["findings"]}
    (note,) = [n for n in data["notes"] if "wrong type" in n]
    assert note.startswith("3 field(s) of the wrong type were read as absent: ")
    assert "outcome `observed.created` is not an array (line 6)" in note


def test_lint_text_shows_escape_sequences_as_text(
    copy: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    hostile = "rm -rf x \x1b]0;PWNED\x07\x1b[2J"
    later = {"kind": "call", "v": 1, "seq": 19, "tool": "bash", "act": "setup", "reason": ""}
    edit(copy, lambda found: [*found, {**later, "command": hostile}])
    code, out, _ = run(capsys, "lint", str(copy))
    assert code == 1
    assert "\x1b" not in out and "\x07" not in out
    assert "call 19 (rm -rf x \\x1b]0;PWNED\\x07\\x1b[2J) has no outcome" in out


def test_lint_reads_a_journal_another_tool_wrote(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TMPDIR", "/tmp")  # the temp directory observations may write to
    lines = [
        {
            "kind": "call",
            "seq": 1,
            "tool": "bash",
            "act": "collect-info",
            "command": "ls > out.txt",
            "reason": "see which files the task gave me before I start",
        },
        {"kind": "outcome", "seq": 1, "ok": True, "observed": {"created": ["out.txt"]}},
        {
            "kind": "call",
            "seq": 2,
            "tool": "read_file",
            "act": "change-state",
            "path": "out.txt",
            "reason": "read what the listing says about the layout",
        },
    ]
    journal = tmp_path / "journal.jsonl"
    journal.write_text("".join(json.dumps(line) + "\n" for line in lines))
    code, out, _ = run(capsys, "lint", str(journal))
    assert code == 1
    assert out.splitlines()[1] == (
        "(line 1) integrity/chain-broken: line 1 is not a chained journal entry (it has no "
        "`prev` hash): written by a tool that keeps no chain, or edited"
    )
    assert out.splitlines()[2:8] == [
        "(line 1) header-missing: line 1 is not a session header",
        "call 1 gate/observation-writes: declared an observation (collect-info), wrote an "
        "effect: `> out.txt` writes out.txt; if this output is the deliverable, use "
        "change-state; if it is a scratch file, write it under /tmp ($TMPDIR).",
        "call 1 flag/undeclared-write: declared collect-info, but changed out.txt",
        "call 1 flag-not-recorded: recomputed undeclared-write (declared collect-info, but "
        "changed out.txt), but the outcome does not record it",
        "call 2 act-mismatch: read_file is always collect-info, recorded as 'change-state'",
        "call 2 outcome-missing: call 2 (read_file) has no outcome: it was still running when "
        "the journal was read, or its process was killed",
    ]
    assert "note: the hash chain does not verify" in out


def test_lint_reproduces_what_a_session_flagged(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    with Session(workspace, Settings(enforce=False)) as session:
        assert session.bash("ls", "collect-info", LOOK).ok
        sneaky = session.bash("python3 -c \"open('x','w').write('1')\"", "collect-info", LOOK)
        assert sneaky.flags == ("undeclared-write",)
        assert session.bash("true", "change-state", CHANGE).flags == ("no-change",)
        assert session.write_file("notes.md", "hello\n", CHANGE).ok
    done = epistemic("lint", str(workspace), "--json")
    assert done.returncode == 1, done.stderr
    found = [(f["check"], f["seq"]) for f in json.loads(done.stdout)["findings"]]
    assert found == [("flag/undeclared-write", 2), ("flag/no-change", 3)]


@pytest.mark.parametrize("command", ["lint", "export"])
def test_bad_input_is_a_usage_error(command: str, tmp_path: Path) -> None:
    extra = ["-o", str(tmp_path / "out.zip")] if command == "export" else []
    done = epistemic(command, str(tmp_path / "nowhere"), *extra)
    assert (done.returncode, done.stdout) == (2, "")
    assert "no such file or directory" in done.stderr and "Traceback" not in done.stderr
    garbage = tmp_path / "journal.jsonl"
    garbage.write_text("this is not JSON\n")
    done = epistemic(command, str(garbage), *extra)
    assert done.returncode == 2
    assert "not a journal" in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "out.zip").exists()


# -- export --------------------------------------------------------------------------------------


def test_export_writes_everything_an_auditor_needs(demo: Path, bundle: Path) -> None:
    files = members(bundle)
    manifest = manifest_of(files)
    assert manifest["format"] == "epistemic-audit-bundle" and manifest["format_version"] == 1
    assert manifest["session"] == records(demo)[0]["session"]
    assert manifest["tool_version"] and manifest["created"].endswith("Z")
    assert manifest["verification"]["status"] == "intact"
    assert manifest["verification"]["lines"] == len(records(demo))
    listed = {entry["path"]: entry for entry in manifest["files"]}
    assert set(files) == {*listed, "manifest.json"}
    for name, entry in listed.items():
        assert entry["size"] == len(files[name])
        assert entry["sha256"] == hashlib.sha256(files[name]).hexdigest()
    assert files[".epistemic/journal.jsonl"] == journal_of(demo).read_bytes()
    assert files["RATIONALE.md"] == (demo / "RATIONALE.md").read_bytes()
    evidence = [name for name in files if name.startswith(".epistemic/evidence/")]
    assert len(evidence) == manifest["evidence"]["referenced"] == manifest["evidence"]["included"]
    assert all(hashlib.sha256(files[n]).hexdigest() == n.rsplit("/", 1)[1] for n in evidence)
    assert manifest["policies"][0]["source"] == "preset:approve-none"
    assert manifest["policies"][0]["path"] is None
    assert ("report.html" in files) == HTML
    if HTML:
        assert b"<html" in files["report.html"].lower()
    assert manifest["notes"] == ([] if HTML else [manifest["notes"][0]])
    assert [p.name for p in bundle.parent.iterdir()] == [bundle.name]  # no temp file left


def test_verify_an_intact_bundle(bundle: Path, capsys: pytest.CaptureFixture[str]) -> None:
    done = epistemic("verify", str(bundle))
    assert done.returncode == 0, done.stdout
    assert done.stdout.startswith(f"intact: {bundle}: ")
    code, out, _ = run(capsys, "verify", str(bundle), "--json")
    data = json.loads(out)
    assert code == 0
    assert (data["status"], data["problem"], data["problems"]) == ("intact", None, [])
    assert data["journal"]["head"] == manifest_of(members(bundle))["verification"]["head"]


@pytest.mark.system  # end to end, slow for the default tier
def test_export_refuses_to_overwrite(demo: Path, bundle: Path, tmp_path: Path) -> None:
    before = bundle.read_bytes()
    done = epistemic("export", str(demo), "-o", str(bundle))
    assert done.returncode == 2 and "--force" in done.stderr
    assert bundle.read_bytes() == before
    target = tmp_path / "again.zip"
    target.write_text("old")
    assert epistemic("export", str(demo), "-o", str(target), "--force").returncode == 0
    assert epistemic("verify", str(target)).returncode == 0
    done = epistemic("export", str(demo), "-o", str(tmp_path / "bundle.tar"))
    assert done.returncode == 2 and ".zip" in done.stderr


def test_export_a_tampered_journal_warns(copy: Path, tmp_path: Path) -> None:
    text = journal_of(copy).read_text().replace('"ls -la"', '"ls -lA"', 1)
    journal_of(copy).write_text(text)
    target = tmp_path / "t.zip"
    done = epistemic("export", str(copy), "-o", str(target))
    assert done.returncode == 1  # written, and a verdict: the journal does not verify
    assert done.stderr.startswith("epistemic: WARNING: the journal does not verify (TAMPERED)")
    assert "warning: the journal is TAMPERED: line 5 was edited" in done.stderr
    assert manifest_of(members(target))["verification"]["status"] == "tampered"
    done = epistemic("verify", str(target))
    assert done.returncode == 1
    assert "journal: line 5 was edited" in done.stdout and "so when exported" in done.stdout


def test_export_a_torn_journal_with_a_note(copy: Path, tmp_path: Path) -> None:
    torn = line_count(copy) + 1
    with journal_of(copy).open("ab") as handle:
        handle.write(b'{"prev":"2f')
    target = tmp_path / "torn.zip"
    done = epistemic("export", str(copy), "-o", str(target))
    assert done.returncode == 0 and "TORN" in done.stderr
    manifest = manifest_of(members(target))
    assert manifest["verification"]["status"] == "torn"
    assert any(f"line {torn} is torn" in note for note in manifest["notes"])
    done = epistemic("verify", str(target))
    assert done.returncode == 3
    assert done.stdout.startswith(f"TORN: journal: line {torn} is torn")


def test_export_notes_missing_evidence(copy: Path, tmp_path: Path) -> None:
    blob = next((copy / ".epistemic" / "evidence").rglob("*[0-9a-f]" * 64))
    blob.unlink()
    target = tmp_path / "m.zip"
    assert epistemic("export", str(copy), "-o", str(target)).returncode == 0
    manifest = manifest_of(members(target))
    assert manifest["evidence"]["missing"] == [blob.name]
    assert any(f"evidence {blob.name}" in note for note in manifest["notes"])
    assert any(p["check"] == "evidence-missing" for p in manifest["verification"]["problems"])
    done = epistemic("verify", str(target))  # the record was damaged: the bundle says so
    assert done.returncode == 1
    assert done.stdout.startswith(f"TAMPERED: evidence {blob.name}")
    assert "missing when exported" in done.stdout


def test_export_includes_the_policy_file_while_it_is_unchanged(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    policy = workspace / "epistemic.toml"
    policy.write_text('default = "allow"\n')
    with Session(workspace) as session:
        assert session.bash("ls", "collect-info", LOOK).ok
    assert epistemic("export", str(workspace), "-o", str(tmp_path / "p.zip")).returncode == 0
    files = members(tmp_path / "p.zip")
    assert files["policy/epistemic.toml"] == policy.read_bytes()
    assert manifest_of(files)["policies"][0]["path"] == "policy/epistemic.toml"
    policy.write_text('default = "deny"\n')
    assert epistemic("export", str(workspace), "-o", str(tmp_path / "q.zip")).returncode == 0
    files = members(tmp_path / "q.zip")
    assert "policy/epistemic.toml" not in files
    notes = manifest_of(files)["notes"]
    assert any("epistemic.toml: the file has changed since" in note for note in notes)


# -- verify BUNDLE.zip ---------------------------------------------------------------------------


def tampered(bundle: Path, target: Path, change: Callable[[dict[str, bytes]], None]) -> Path:
    files = members(bundle)
    change(files)
    return rezip(target, files)


def evidence_name(files: dict[str, bytes]) -> str:
    return sorted(name for name in files if name.startswith(".epistemic/evidence/"))[0]


def test_a_changed_evidence_file_is_named(bundle: Path, tmp_path: Path) -> None:
    files = members(bundle)
    name = evidence_name(files)
    forged = files[name] + b"!"

    def change(found: dict[str, bytes]) -> None:
        found[name] = forged

    done = epistemic("verify", str(tampered(bundle, tmp_path / "e.zip", change)))
    assert done.returncode == 1
    size = len(forged) - 1
    assert done.stdout.startswith(f"TAMPERED: {name}: size expected {size} (manifest), found")

    def same_size(found: dict[str, bytes]) -> None:
        found[name] = b"X" + found[name][1:]

    done = epistemic("verify", str(tampered(bundle, tmp_path / "s.zip", same_size)))
    expected = name.rsplit("/", 1)[1]
    found = hashlib.sha256(b"X" + files[name][1:]).hexdigest()
    assert done.stdout.startswith(f"TAMPERED: {name}: sha256 expected {expected} (manifest), ")
    assert f"found {found}" in done.stdout

    def relisted(found: dict[str, bytes]) -> None:
        same_size(found)
        relist(found, name)

    done = epistemic("verify", str(tampered(bundle, tmp_path / "r.zip", relisted)))
    assert done.returncode == 1
    assert f"TAMPERED: {name}: evidence does not hash to its name" in done.stdout


def test_a_changed_journal_is_caught_by_hash_and_chain(bundle: Path, tmp_path: Path) -> None:
    journal = ".epistemic/journal.jsonl"

    def change(found: dict[str, bytes]) -> None:
        found[journal] = found[journal].replace(b'"ls -la"', b'"ls -lA"', 1)

    done = epistemic("verify", str(tampered(bundle, tmp_path / "j.zip", change)))
    assert done.returncode == 1
    assert done.stdout.startswith(f"TAMPERED: {journal}: sha256 expected")
    assert "also: journal: line 5 was edited" in done.stdout

    def forged(found: dict[str, bytes]) -> None:
        change(found)
        relist(found, journal)

    done = epistemic("verify", str(tampered(bundle, tmp_path / "f.zip", forged)), "--json")
    data = json.loads(done.stdout)
    assert done.returncode == 1 and data["status"] == "tampered"
    assert data["problem"].startswith("journal: line 5 was edited")


def test_extra_and_removed_files_are_caught(bundle: Path, tmp_path: Path) -> None:
    def extra(found: dict[str, bytes]) -> None:
        found["notes.txt"] = b"slipped in"

    done = epistemic("verify", str(tampered(bundle, tmp_path / "x.zip", extra)))
    assert done.returncode == 1
    assert "TAMPERED: notes.txt: in the bundle but not listed in the manifest" in done.stdout

    def removed(found: dict[str, bytes]) -> None:
        name = evidence_name(found)
        del found[name]
        manifest = manifest_of(found)
        manifest["files"] = [f for f in manifest["files"] if f["path"] != name]
        found["manifest.json"] = json.dumps(manifest).encode()

    done = epistemic("verify", str(tampered(bundle, tmp_path / "r.zip", removed)))
    assert done.returncode == 1
    assert "referenced on journal line" in done.stdout and "not in the bundle" in done.stdout


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("../evil", "a `..` part"),
        ("/etc/evil", "absolute"),
        ("a/../../evil", "a `..` part"),
        ("a\\..\\evil", "a backslash"),
        ("C:evil", "a drive letter"),
        ("a//evil", "an empty or `.` part"),
        ("../up/", "a `..` part"),  # a directory entry, but one pointing outside
    ],
)
def test_unsafe_member_names_are_refused(
    bundle: Path, tmp_path: Path, name: str, reason: str
) -> None:
    def evil(found: dict[str, bytes]) -> None:
        found[name] = b"" if name.endswith("/") else b"boo"

    target = tampered(bundle, tmp_path / "evil.zip", evil)
    assert name in zipfile.ZipFile(target).namelist()
    done = epistemic("verify", str(target))
    assert done.returncode == 1
    assert done.stdout.startswith(f"TAMPERED: refused: unsafe member name {name!r} ({reason});")
    assert not (tmp_path.parent / "evil").exists()


def test_directory_entries_are_not_files(bundle: Path, tmp_path: Path) -> None:
    """Folders a zip tool adds (`.epistemic/`, ...) are neither members nor extra files."""

    def folders(found: dict[str, bytes]) -> None:
        for name in [".epistemic/", ".epistemic/evidence/", "policy/", "empty/"]:
            found[name] = b""

    target = tampered(bundle, tmp_path / "folders.zip", folders)
    done = epistemic("verify", str(target))
    assert done.returncode == 0, done.stdout
    assert done.stdout.startswith(f"intact: {target}: ")

    def folder_with_data(found: dict[str, bytes]) -> None:
        found["full/"] = b"not a folder"

    done = epistemic("verify", str(tampered(bundle, tmp_path / "full.zip", folder_with_data)))
    assert done.returncode == 1
    assert "refused: unsafe member name 'full/' (an empty or `.` part)" in done.stdout


@pytest.mark.skipif(not (shutil.which("zip") and shutil.which("unzip")), reason="no zip/unzip")
def test_a_bundle_unzipped_and_zipped_again_verifies(bundle: Path, tmp_path: Path) -> None:
    folder = tmp_path / "unpacked"
    subprocess.run(["unzip", "-q", str(bundle), "-d", str(folder)], check=True)
    again = tmp_path / "again.zip"
    subprocess.run(["zip", "-qr", str(again), "."], cwd=folder, check=True)
    assert ".epistemic/" in zipfile.ZipFile(again).namelist()
    done = epistemic("verify", str(again))
    assert done.returncode == 0, done.stdout
    assert done.stdout.startswith(f"intact: {again}: ")


def test_verify_a_missing_bundle(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from epistemic_agent.cli.bundle import verify_bundle

    missing = tmp_path / "missing.zip"
    for as_json in (False, True):
        assert verify_bundle(missing, as_json) == 2
        out, err = capsys.readouterr()
        assert (
            out == "" and err == f"epistemic: {missing}: no such bundle: the file does not exist\n"
        )


def test_missing_evidence_is_one_note(copy: Path, tmp_path: Path) -> None:
    blobs = sorted((copy / ".epistemic" / "evidence").rglob("*[0-9a-f]" * 64))
    for blob in blobs:
        blob.unlink()
    target = tmp_path / "none.zip"
    assert epistemic("export", str(copy), "-o", str(target)).returncode == 0
    manifest = manifest_of(members(target))
    assert sorted(manifest["evidence"]["missing"]) == sorted(b.name for b in blobs)
    (note,) = [note for note in manifest["notes"] if "evidence" in note]
    assert note.startswith(f"{len(blobs)} evidence blobs the journal references are missing")
    done = epistemic("verify", str(target))
    assert done.returncode == 1, done.stdout
    (note,) = [line for line in done.stdout.splitlines() if "export: " in line]
    assert note.startswith(f"note: export: {len(blobs)} evidence blobs the journal references")
    missing = [line for line in done.stdout.splitlines() if "missing when exported" in line]
    assert len(missing) == len(blobs)  # one line each
    assert {line.split()[2] for line in missing} == {blob.name for blob in blobs}


def test_what_is_not_a_bundle(bundle: Path, tmp_path: Path) -> None:
    text = tmp_path / "text.zip"
    text.write_text("not a zip at all")
    plain = rezip(tmp_path / "plain.zip", {"readme.txt": b"hello"})
    files = members(bundle)
    broken = rezip(tmp_path / "broken.zip", {**files, "manifest.json": b"{not json"})
    other = rezip(tmp_path / "other.zip", {**files, "manifest.json": b'{"format": "x"}'})
    for target, message in (
        (text, "not a zip file"),
        (plain, "no manifest.json"),
        (broken, "manifest.json is not valid JSON"),
        (other, "manifest.json's format is 'x', not 'epistemic-audit-bundle'"),
    ):
        done = epistemic("verify", str(target), "--json")
        assert (done.returncode, done.stdout) == (2, ""), target
        assert message in done.stderr and "Traceback" not in done.stderr
