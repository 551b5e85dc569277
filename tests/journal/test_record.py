"""The record proves itself: tampering as an attacker would, each case reported by both
`epistemic verify` and `epistemic lint` (docs/security.md, "The record's anchors").

Evidence edited, deleted, added or swapped for a link; lines injected or rewritten; the
journal truncated in place; a full rewrite with a recomputed chain and head anchor (caught by
`--expect-head`; seals are in test_seal.py); and what a crash leaves, which is not tampering.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import epistemic_strict
from epistemic_agent.journal.record_check import PROBLEMS, check_record
from epistemic_agent.session.session import Session
from journalfiles import journal_of, sha

LOOK = "see what the workspace holds before changing anything"
CHANGE = "write the notes file the task asks for, as the deliverable"


def lines_of(ws: Path) -> list[bytes]:
    return journal_of(ws).read_bytes().splitlines(keepends=True)


def blobs(ws: Path) -> list[Path]:
    return sorted(p for p in (ws / ".epistemic" / "evidence").rglob("*") if p.is_file())


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    ws = tmp_path_factory.mktemp("record") / "ws"
    ws.mkdir()
    with Session(ws) as session:
        assert session.bash("echo one; echo err >&2", "collect-info", LOOK).ok
        assert session.write_file("notes.md", "first line\n", CHANGE).ok
        assert session.read_file("notes.md", LOOK).ok
        assert session.bash("echo two", "collect-info", LOOK).ok
    return ws


@pytest.fixture
def ws(template: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(template, tmp_path / "ws"))


def verdict(ws: Path, *options: str) -> tuple[int, dict[str, Any], str]:
    """`epistemic verify --json` and the text output of the same check."""
    done = epistemic_strict("verify", str(ws), "--json", *options)
    text = epistemic_strict("verify", str(ws), *options)
    assert done.returncode == text.returncode, (done.stdout, text.stdout)
    return done.returncode, json.loads(done.stdout), text.stdout


def assert_reported(ws: Path, check: str, *fragments: str, options: tuple[str, ...] = ()) -> None:
    """verify says TAMPERED with a problem of this id; lint has an integrity/ID finding."""
    code, data, text = verdict(ws, *options)
    assert code == 1 and data["status"] == "tampered", data
    found = [p for p in data["problems"] if p["check"] == check]
    assert found, data["problems"]
    for fragment in fragments:
        assert any(fragment in p["message"] for p in found), (fragment, found)
    assert text.startswith("TAMPERED: "), text
    assert all(p["message"] in text for p in data["problems"])  # one line each
    linted = epistemic_strict(
        "lint", str(ws), "--json", *[o for o in options if "signers" not in o]
    )
    assert linted.returncode == 1, linted.stdout + linted.stderr
    findings = json.loads(linted.stdout)["findings"]
    assert any(f["check"] == f"integrity/{check}" for f in findings), findings


def test_an_untouched_record_is_intact_and_every_blob_was_checked(ws: Path) -> None:
    code, data, text = verdict(ws)
    assert code == 0 and data["status"] == "intact" and data["problems"] == []
    assert data["evidence"] == {
        "checked": True,
        "referenced": len(blobs(ws)),
        "verified": len(blobs(ws)),
        "missing": 0,
        "altered": 0,
        "extra": 0,
    }
    assert data["verified"] == {"lines": data["lines"], "head": data["head"]}
    assert text == f"intact: {data['lines']} line(s), head {data['head']}\n"
    assert epistemic_strict("lint", str(ws)).returncode == 0


# -- evidence ----------------------------------------------------------------------------------


def test_an_edited_blob_of_the_same_size(ws: Path) -> None:
    blob = blobs(ws)[0]
    data = blob.read_bytes()
    blob.write_bytes(bytes([data[0] ^ 1]) + data[1:])
    assert_reported(ws, "evidence-altered", f"{blob.name} (", "was changed: its content hashes to")


def test_a_blob_with_bytes_appended(ws: Path) -> None:
    blob = blobs(ws)[0]
    with blob.open("ab") as handle:
        handle.write(b"more")
    assert_reported(ws, "evidence-altered", "the record says", "were kept")


def test_a_deleted_blob_names_whose_it_was(ws: Path) -> None:
    records = [json.loads(line) for line in lines_of(ws)]
    stdout = next(r for r in records if r.get("kind") == "outcome")["evidence"]["stdout"]
    blob = ws / ".epistemic" / "evidence" / stdout["sha256"][:2] / stdout["sha256"]
    blob.unlink()
    assert_reported(ws, "evidence-missing", f"{stdout['sha256']} (stdout of call 1, line 3)")


def test_each_deleted_blob_has_its_own_line(ws: Path) -> None:
    for blob in blobs(ws):
        blob.unlink()
    code, data, text = verdict(ws)
    assert code == 1
    missing = [p for p in data["problems"] if p["check"] == "evidence-missing"]
    assert len(missing) == data["evidence"]["referenced"] == data["evidence"]["missing"] > 3
    shown = [line for line in text.splitlines() if line.endswith("is missing")]
    assert len(shown) == len(missing)


def test_an_added_blob_named_by_its_hash(ws: Path) -> None:
    data = b"a convenient output nobody recorded\n"
    blob = ws / ".epistemic" / "evidence" / sha(data)[:2] / sha(data)
    blob.parent.mkdir(exist_ok=True)
    blob.write_bytes(data)
    assert_reported(ws, "evidence-extra", f"{sha(data)} is referenced by no record")


@pytest.mark.parametrize("name", ["notes.txt", "ab/not-a-hash", "zz", "ab/" + "cd" * 32], ids=str)
def test_a_file_that_is_no_blob(ws: Path, name: str) -> None:
    path = ws / ".epistemic" / "evidence" / name
    path.parent.mkdir(exist_ok=True)
    path.write_bytes(b"x")
    assert_reported(ws, "evidence-extra", "the evidence folder holds only blobs")


def test_a_blob_swapped_for_a_link(ws: Path, tmp_path: Path) -> None:
    blob = blobs(ws)[0]
    outside = tmp_path / "elsewhere"
    outside.write_bytes(blob.read_bytes())  # the same bytes, but a link can change under it
    blob.unlink()
    blob.symlink_to(outside)
    assert_reported(ws, "evidence-altered", "is a symbolic link, not a file")


def test_temporary_files_and_a_call_in_flight_are_notes(ws: Path) -> None:
    (ws / ".epistemic" / "evidence" / "ab").mkdir(exist_ok=True)
    (ws / ".epistemic" / "evidence" / "ab" / ".tmp-0123").write_bytes(b"half")
    lines = lines_of(ws)
    journal_of(ws).write_bytes(b"".join(lines[:-1]))  # the last outcome not yet written
    (ws / ".epistemic" / "head.json").unlink()
    code, _, text = verdict(ws)
    assert code == 0, text
    assert "note: 1 evidence blob(s) referenced by no record yet" in text
    assert "note: 1 temporary file(s) in the evidence folder" in text


def test_more_unreferenced_blobs_than_a_call_in_flight_explains(ws: Path) -> None:
    lines = lines_of(ws)
    journal_of(ws).write_bytes(b"".join(lines[:-1]))
    (ws / ".epistemic" / "head.json").unlink()
    from epistemic_agent.journal.evidence_check import IN_FLIGHT_BLOBS

    for index in range(IN_FLIGHT_BLOBS):  # with the last call's own: one more than it explains
        data = f"one more: {index}\n".encode()
        blob = ws / ".epistemic" / "evidence" / sha(data)[:2] / sha(data)
        blob.parent.mkdir(exist_ok=True)
        blob.write_bytes(data)
    code, found, _ = verdict(ws)
    assert code == 1
    assert [p["check"] for p in found["problems"]] == ["evidence-extra"] * (IN_FLIGHT_BLOBS + 1)


def test_export_warns_records_and_the_bundle_fails(ws: Path, tmp_path: Path) -> None:
    blob = blobs(ws)[0]
    blob.write_bytes(b"rewritten evidence\n")
    bundle = tmp_path / "b.zip"
    done = epistemic_strict("export", str(ws), "-o", str(bundle))
    assert done.returncode == 0
    assert "warning: the record is TAMPERED: evidence " in done.stderr
    import zipfile

    with zipfile.ZipFile(bundle) as archive:
        manifest = json.loads(archive.read("manifest.json"))
    assert manifest["verification"]["status"] == "tampered"
    assert [p["check"] for p in manifest["evidence"]["problems"]] == ["evidence-altered"]
    checked = epistemic_strict("verify", str(bundle))
    assert checked.returncode == 1
    assert "evidence does not hash to its name" in checked.stdout


# -- lines -------------------------------------------------------------------------------------


def test_an_injected_line_in_the_middle_is_tampering_not_a_crash(ws: Path) -> None:
    lines = lines_of(ws)
    journal_of(ws).write_bytes(b"".join([*lines[:3], b"an injected line\n", *lines[3:]]))
    assert_reported(ws, "chain-broken", "line 4 was inserted: it is not a journal entry")
    _, data, _ = verdict(ws)
    assert data["verified"]["lines"] == 3
    assert data["verified"]["head"] == sha(lines[2].rstrip(b"\n"))


def test_an_injected_json_line_in_the_middle(ws: Path) -> None:
    lines = lines_of(ws)
    fake = json.dumps({"kind": "call", "seq": 9, "reason": "forged"}).encode() + b"\n"
    journal_of(ws).write_bytes(b"".join([*lines[:3], fake, *lines[3:]]))
    assert_reported(ws, "chain-broken", "line 4 was inserted")


def test_a_complete_line_appended_is_tampering_and_no_session_blesses_it(ws: Path) -> None:
    before = lines_of(ws)
    with journal_of(ws).open("ab") as handle:
        handle.write(b"garbage with a newline\n")
    assert_reported(ws, "chain-broken", "yet complete", "it was added or overwritten")
    done = epistemic_strict(
        "exec", "-C", str(ws), "--type", "collect-info", "--reason", LOOK, "--", "echo hi"
    )
    assert done.returncode == 74  # refused: never covered up by a recovery record
    assert "epistemic verify --salvage" in done.stderr
    assert lines_of(ws) == [*before, b"garbage with a newline\n"]


def test_a_rewritten_middle_line(ws: Path) -> None:
    lines = lines_of(ws)
    assert LOOK.encode() in lines[1]
    lines[1] = lines[1].replace(LOOK.encode(), b"a reason invented after the fact, long enough")
    journal_of(ws).write_bytes(b"".join(lines))
    assert_reported(ws, "chain-broken", "line 2 was edited")


def test_a_torn_last_line_is_a_crash_and_no_finding(ws: Path) -> None:
    lines = lines_of(ws)
    position = {"offset": 0, "lines": len(lines), "head": sha(lines[-1][:-1]), "last_seq": 4}
    position["offset"] = sum(map(len, lines))
    (ws / ".epistemic" / "head.json").write_text(json.dumps(position).ljust(255) + "\n")
    with journal_of(ws).open("ab") as handle:
        handle.write(lines[-1][:40])  # what a kill mid-write leaves: no newline
    code, data, text = verdict(ws)
    assert (code, data["status"]) == (3, "torn")
    assert text.startswith(f"TORN: line {len(lines) + 1} is torn")
    linted = json.loads(epistemic_strict("lint", str(ws), "--json").stdout)
    assert not [f for f in linted["findings"] if f["check"].startswith("integrity/")]


@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_no_complete_injected_line_passes_for_a_torn_one(
    template: Path, tmp_path_factory: pytest.TempPathFactory, data: st.DataObject
) -> None:
    target = Path(shutil.copytree(template, tmp_path_factory.mktemp("inject") / "ws"))
    lines = lines_of(target)
    where = data.draw(st.integers(1, len(lines)), label="where")
    text = data.draw(st.binary(max_size=80).filter(lambda b: b"\n" not in b), label="line")
    journal_of(target).write_bytes(b"".join([*lines[:where], text + b"\n", *lines[where:]]))
    result = check_record(journal_of(target), target / ".epistemic" / "head.json")
    assert result.status == "tampered", (where, text, result.to_json())
    assert result.good <= where


# -- truncation in place -----------------------------------------------------------------------


@pytest.mark.parametrize("cut", ["mid-line", "line-boundary"])
def test_truncation_in_place_says_what_still_verifies(ws: Path, cut: str) -> None:
    lines = lines_of(ws)
    keep = sum(map(len, lines[:4])) + (len(lines[4]) // 2 if cut == "mid-line" else 0)
    with journal_of(ws).open("r+b") as handle:
        handle.truncate(keep)
    assert_reported(ws, "journal-truncated", f"the head anchor records {len(lines)} lines")
    _, data, text = verdict(ws)
    head = sha(lines[3].rstrip(b"\n"))
    assert data["verified"] == {"lines": 4, "head": head}
    assert f"verified: lines 1-4 (head {head}); the journal breaks at line 5" in text
    assert f"epistemic verify --salvage {ws}" in text


# -- a full rewrite ----------------------------------------------------------------------------


def rewrite(ws: Path, change: str, into: str) -> None:
    """Rebuild the journal from scratch with one reason changed: a valid chain, a valid head
    anchor, the same evidence. Nothing inside the workspace can tell."""
    prev, out = "0" * 64, []
    for line in lines_of(ws):
        record = json.loads(line)
        record["prev"] = prev
        if record.get("reason") == change:
            record["reason"] = into
        body = json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode()
        out.append(body + b"\n")
        prev = sha(body)
    journal_of(ws).write_bytes(b"".join(out))
    position = {"offset": sum(map(len, out)), "lines": len(out), "head": prev, "last_seq": 4}
    (ws / ".epistemic" / "head.json").write_text(json.dumps(position).ljust(255) + "\n")


def test_a_full_rewrite_is_caught_only_by_a_head_kept_elsewhere(ws: Path) -> None:
    kept = verdict(ws)[1]["head"]  # what the CI log printed at the end of the session
    rewrite(ws, CHANGE, "a different story about why the file was written")
    code, data, _ = verdict(ws)
    assert code == 0 and data["head"] != kept  # the chain alone cannot tell
    assert_reported(ws, "head-unexpected", kept, options=("--expect-head", kept))


def test_an_expected_head_earlier_in_the_chain_covers_its_prefix(ws: Path) -> None:
    lines = lines_of(ws)
    earlier = sha(lines[2].rstrip(b"\n"))
    code, data, text = verdict(ws, "--expect-head", earlier.upper())
    assert code == 0
    assert data["expected_head"] == {"head": earlier, "line": 3}
    assert "note: the expected head is line 3: lines 1-3 are as they were then; the " in text


@pytest.mark.parametrize(
    "value", ["", "abc", "g" * 64, "a" * 63, "a" * 65, "sha256:" + "a" * 64, " "], ids=repr
)
def test_a_malformed_expected_head_is_a_usage_error(ws: Path, value: str) -> None:
    for command in ("verify", "lint"):
        done = epistemic_strict(command, str(ws), "--expect-head", value)
        assert done.returncode == 2, (command, done.stdout, done.stderr)
        assert done.stderr.startswith("epistemic: --expect-head ") and done.stdout == ""
        assert "not a SHA-256 hash (64 hex digits)" in done.stderr


def test_every_problem_id_is_documented() -> None:
    doc = (Path(__file__).resolve().parents[2] / "docs" / "security.md").read_text()
    assert all(f"`{check}`" in doc for check in PROBLEMS), [c for c in PROBLEMS if c not in doc]


# -- the head printed at the end of each session ----------------------------------------------


def test_exec_prints_the_head_on_stderr_and_in_json(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    env = {**os.environ}
    done = epistemic_strict(
        "exec", "-C", str(ws), "--type", "collect-info", "--reason", LOOK, "--", "echo hi", env=env
    )
    assert done.stdout == "hi\n"
    head = verdict(ws)[1]["head"]
    assert done.stderr.splitlines()[-1] == f"epistemic: journal head {head} (line 3)"
    done = epistemic_strict(
        "exec", "-C", str(ws), "--json", "--type", "collect-info", "--reason", LOOK, "--", "true"
    )
    result = json.loads(done.stdout)
    assert result["journal_head"] == {"lines": 5, "head": verdict(ws)[1]["head"]}
    assert done.stderr == ""
    done = epistemic_strict("tool", "bash", "-C", str(ws), "--args", "{not json")
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1].startswith("epistemic: journal head ")
