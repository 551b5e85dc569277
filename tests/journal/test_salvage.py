"""`epistemic verify --salvage`: after a journal damaged in place, later commands run again;
nothing is rewritten or dropped, and the new journal names what it continues."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import epistemic_strict
from epistemic_agent.session.session import Session

LOOK = "see what the workspace holds before changing anything"


def exec_echo(ws: Path) -> subprocess.CompletedProcess[str]:
    return epistemic_strict(
        "exec", "-C", str(ws), "--type", "collect-info", "--reason", LOOK, "--", "echo hi"
    )


def tree(folder: Path) -> dict[str, str]:
    """Every file under a folder with the SHA-256 of its bytes."""
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    ws = tmp_path_factory.mktemp("salvage") / "ws"
    ws.mkdir()
    with Session(ws) as session:
        for word in ("one", "two", "three"):
            assert session.bash(f"echo {word}", "collect-info", LOOK).ok
    return ws


@pytest.fixture
def ws(template: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(template, tmp_path / "ws"))


def cut(ws: Path, keep_lines: int, extra: int) -> list[bytes]:
    """Truncate the journal in place after `keep_lines` lines and `extra` bytes of the next."""
    journal = ws / ".epistemic" / "journal.jsonl"
    lines = journal.read_bytes().splitlines(keepends=True)
    with journal.open("r+b") as handle:
        handle.truncate(sum(map(len, lines[:keep_lines])) + extra)
    return lines


def test_a_truncated_journal_is_salvaged_and_later_commands_run(ws: Path) -> None:
    lines = cut(ws, 4, 30)
    record = ws / ".epistemic"
    before = {
        "journal": hashlib.sha256((record / "journal.jsonl").read_bytes()).hexdigest(),
        "evidence": tree(record / "evidence"),
    }
    refused = exec_echo(ws)
    assert refused.returncode == 74
    assert f"`epistemic verify --salvage {ws}`" in refused.stderr
    assert len(refused.stderr.splitlines()) == 1
    done = epistemic_strict("verify", "--salvage", str(ws))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("salvaged: truncated in place")
    (folder,) = (record / "damaged").iterdir()
    assert hashlib.sha256((folder / "journal.jsonl").read_bytes()).hexdigest() == before["journal"]
    assert tree(folder / "evidence") == before["evidence"]  # kept, byte for byte
    assert (folder / "head.json").is_file() and (folder / "NOTE.md").is_file()
    assert "lines 1-4" in (folder / "NOTE.md").read_text()
    header = json.loads((record / "journal.jsonl").read_text().splitlines()[0])
    good = hashlib.sha256(lines[3].rstrip(b"\n")).hexdigest()
    assert header["kind"] == "session" and header["prev"] == "0" * 64
    assert header["salvaged_from"]["journal"] == f"damaged/{folder.name}/journal.jsonl"
    assert (header["salvaged_from"]["lines"], header["salvaged_from"]["head"]) == (4, good)
    assert header["salvaged_from"]["session"] == json.loads(lines[0])["session"]
    assert header["session"] != header["salvaged_from"]["session"]
    after = exec_echo(ws)
    assert after.returncode == 0, after.stderr
    checked = epistemic_strict("verify", str(ws))
    assert checked.returncode == 0, checked.stdout
    assert f"continues the damaged journal damaged/{folder.name}/journal.jsonl" in checked.stdout
    assert epistemic_strict("lint", str(ws)).returncode == 0
    assert "### 1. `collect-info` · ok" in (ws / "RATIONALE.md").read_text()


def test_the_damaged_prefix_is_checked_ever_after(ws: Path) -> None:
    cut(ws, 4, 0)
    assert epistemic_strict("verify", "--salvage", str(ws)).returncode == 0
    (folder,) = (ws / ".epistemic" / "damaged").iterdir()
    damaged = folder / "journal.jsonl"
    damaged.write_bytes(damaged.read_bytes().replace(LOOK.encode(), b"x" * len(LOOK), 1))
    done = epistemic_strict("verify", str(ws), "--json")
    assert done.returncode == 1
    assert json.loads(done.stdout)["problems"][0]["check"] == "salvage-mismatch"


@pytest.mark.parametrize("state", ["intact", "torn", "evidence-only"])
def test_nothing_to_salvage_moves_nothing(ws: Path, state: str) -> None:
    journal = ws / ".epistemic" / "journal.jsonl"
    if state == "torn":
        lines = journal.read_bytes().splitlines(keepends=True)
        anchor = {"offset": sum(map(len, lines)), "lines": len(lines), "last_seq": 3}
        anchor["head"] = hashlib.sha256(lines[-1].rstrip(b"\n")).hexdigest()
        (ws / ".epistemic" / "head.json").write_text(json.dumps(anchor).ljust(255) + "\n")
        with journal.open("ab") as handle:
            handle.write(b'{"prev":"ab')
    elif state == "evidence-only":
        next(p for p in (ws / ".epistemic" / "evidence").rglob("*") if p.is_file()).unlink()
    before = tree(ws / ".epistemic")
    done = epistemic_strict("verify", "--salvage", str(ws), "--json")
    assert done.returncode == 0
    data = json.loads(done.stdout)
    assert data["status"] == "nothing-to-salvage" and data["moved_to"] is None
    assert "nothing to salvage" in data["reason"]
    assert tree(ws / ".epistemic") == before


def test_salvage_refuses_options_and_bundles(ws: Path, tmp_path: Path) -> None:
    for options in (
        ["--expect-head", "a" * 64],
        ["--allowed-signers", str(tmp_path)],
    ):
        done = epistemic_strict("verify", str(ws), "--salvage", *options)
        assert done.returncode == 2 and "--salvage works on a workspace's journal" in done.stderr
    done = epistemic_strict("verify", str(tmp_path / "b.zip"), "--salvage")
    assert done.returncode == 2
    done = epistemic_strict("verify", str(tmp_path / "nothing-here"), "--salvage")
    assert done.returncode == 2 and "no journal at" in done.stderr


def test_an_injected_line_is_salvaged_too(ws: Path) -> None:
    journal = ws / ".epistemic" / "journal.jsonl"
    lines = journal.read_bytes().splitlines(keepends=True)
    journal.write_bytes(b"".join([*lines[:2], b"injected\n", *lines[2:]]))
    assert exec_echo(ws).returncode == 74
    done = epistemic_strict("verify", "--salvage", str(ws), "--json")
    data = json.loads(done.stdout)
    assert data["status"] == "salvaged" and data["verified"]["lines"] == 2
    assert exec_echo(ws).returncode == 0


def test_salvage_is_suggested_only_for_a_workspaces_own_journal(ws: Path, tmp_path: Path) -> None:
    journal = ws / ".epistemic" / "journal.jsonl"
    lines = journal.read_bytes().splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if b'"kind":"call"' in line)
    lines[at] = lines[at].replace(b"echo one", b"echo ONE")  # edited in place
    journal.write_bytes(b"".join(lines))
    own = epistemic_strict("verify", str(ws))
    assert own.returncode != 0 and "--salvage" in own.stdout, own.stdout
    copy = tmp_path / "evidence" / "journal.jsonl"
    copy.parent.mkdir()
    shutil.copy(ws / ".epistemic" / "journal.jsonl", copy)
    elsewhere = epistemic_strict("verify", str(copy))
    assert elsewhere.returncode != 0
    assert "the journal breaks at line" in elsewhere.stdout
    assert "--salvage" not in elsewhere.stdout, elsewhere.stdout  # it would refuse this file
    refused = epistemic_strict("verify", "--salvage", str(copy))
    assert refused.returncode == 2 and "needs a workspace's" in refused.stderr
